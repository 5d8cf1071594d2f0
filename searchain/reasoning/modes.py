"""The answering modes and what each needs.

- ``searchain``: Algorithm 1, CoQ + IR verification/completion + tracing (the default).
- ``coq``: the Chain-of-Query alone, no IR ("SearChain w/o IR" in the paper).
- ``direct``: the LLM answers the question directly (baseline).
- ``rag``: retrieve-then-read: top-k passages in the prompt, one answer (baseline).
"""

from __future__ import annotations

from ..errors import ConfigError

MODE_SEARCHAIN = "searchain"
MODE_COQ = "coq"
MODE_DIRECT = "direct"
MODE_RAG = "rag"
MODES = (MODE_SEARCHAIN, MODE_COQ, MODE_DIRECT, MODE_RAG)


def check_mode(mode: str) -> str:
    """Return ``mode`` if known, else raise a ConfigError naming the valid ones."""
    if mode not in MODES:
        raise ConfigError(
            f"Unknown answering mode {mode!r}.",
            hint=f"Use one of: {', '.join(MODES)}.",
        )
    return mode


def needs_ir(mode: str) -> bool:
    """Whether ``mode`` needs a retriever (searchain, rag)."""
    return check_mode(mode) in (MODE_SEARCHAIN, MODE_RAG)
