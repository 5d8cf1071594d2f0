"""The answering modes and what each needs.

- ``searchain``: Algorithm 1, CoQ + IR verification/completion + tracing (the default).
- ``coq``: the Chain-of-Query alone, no IR ("SearChain w/o IR" in the paper).
- ``direct``: the LLM answers the question directly (baseline).
- ``rag``: retrieve-then-read: top-k passages in the prompt, one answer (baseline).
- ``genground``: generate-then-ground (GenGround): sub-question + own answer, grounded in batches
  of passages (``genground.py``).
- ``geek``: GEEK: a core model picks actions, retrieve-and-extract, strategy exploration with a
  majority vote (``geek.py``).
"""

from __future__ import annotations

from ..errors import ConfigError

MODE_SEARCHAIN = "searchain"
MODE_COQ = "coq"
MODE_DIRECT = "direct"
MODE_RAG = "rag"
MODE_GENGROUND = "genground"
MODE_GEEK = "geek"
MODES = (MODE_SEARCHAIN, MODE_COQ, MODE_DIRECT, MODE_RAG, MODE_GENGROUND, MODE_GEEK)
# The answering strategies that verify against a corpus (the baselines aside).
STRATEGIES = (MODE_SEARCHAIN, MODE_GENGROUND, MODE_GEEK)


def check_mode(mode: str) -> str:
    """Return ``mode`` if known, else raise a ConfigError naming the valid ones."""
    if mode not in MODES:
        raise ConfigError(
            f"Unknown answering mode {mode!r}.",
            hint=f"Use one of: {', '.join(MODES)}.",
        )
    return mode


def needs_ir(mode: str) -> bool:
    """Whether ``mode`` needs a retriever (searchain, rag, genground, geek)."""
    return check_mode(mode) in (MODE_SEARCHAIN, MODE_RAG, MODE_GENGROUND, MODE_GEEK)
