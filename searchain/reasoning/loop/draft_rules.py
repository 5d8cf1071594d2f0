"""When SearChain writes its draft: the one rule the engine follows and the warm-up reads ahead by.

The draft is plain RAG's answer over the question's passages, shown while the chain is checked
(``reasoning.draft_answer``). It exists for the ``passages`` final answer only, whose prompt
begins as the draft's does. With ``reasoning.draft_after_first_step`` it waits for the chain's
first step, so the tree's first node shows within one step's time; only a chain written step by
step can pause there (a chain written whole, by a server, would hold the draft to its end).
"""

from __future__ import annotations

from typing import Any


def writes_draft(settings: Any) -> bool:
    """Whether SearChain writes a draft before its final answer (given passages to write it from)."""
    return bool(getattr(settings, "draft_answer", False)) \
        and getattr(settings, "final_answer", "passages") == "passages"


def draft_after_first_step(settings: Any, *, stepwise: bool) -> bool:
    """Whether the draft waits for the chain's first step (``stepwise``: the chain is written a
    step at a time, as ``stepwise.can_write_stepwise`` and ``reasoning.chain_steps`` decide)."""
    return stepwise and writes_draft(settings) and bool(getattr(settings, "draft_after_first_step", False))
