"""Reading the fixed part of a mode's prompts before the first question (a warm start).

Every prompt a mode sends begins with text that is the same for every question: SearChain's
Chain-of-Query instructions and worked examples (~400 tokens with Qwen's vocabulary), the LLM
reader's instruction and example (~130), RAG's instruction (~60). Once evaluated, the backend
keeps their KV states (``llm/llama/prefix_states.py``), so from the second question on they cost
nothing; the first question of a session pays for all of them, several seconds on a CPU, on top
of loading the model. ``warm_up`` evaluates them ahead of time, while the user is still typing:
each prompt with a placeholder where the question goes, one token decoded and thrown away.

The prompts are those the mode's first calls send, built by the same ``PromptBook`` and reader,
so their text up to the question is the real prompts' text. The one the mode sends first is
read last and stays in the live cache; the backend puts the others back when their prompt comes.
GenGround's and GEEK's templates (``strategies/prompts.py``) are read the same way, the one each
strategy sends first (deduction; decomposition) last. ``direct`` has no fixed part worth it:
the model is still loaded, which is most of a cold start.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..events import CancelToken, check
from ..llm.base import ChatMessage, GenerationParams
from ..types import Passage
from .chain.prompts import TASKS, PromptBook
from .loop.draft_rules import draft_after_first_step, writes_draft
from .modes import MODE_COQ, MODE_GEEK, MODE_GENGROUND, MODE_RAG, MODE_SEARCHAIN

# Where the question (and a passage) would go: the prompts' shared text ends just before it.
PLACEHOLDER = "?"
# Read ahead when the task is "auto": multi-hop is the common case, and the yes/no examples come
# after the same instructions, so their shared beginning is read too.
AUTO_TASK = "multihop"


@dataclass(frozen=True)
class WarmUp:
    """What a warm-up read: model calls, prompt tokens evaluated, and the seconds they took."""

    calls: int
    evaluated_tokens: int
    seconds: float


def warm_prompts(mode: str, settings: Any, prompts: PromptBook, reader: Any = None) -> list[list[ChatMessage]]:
    """The chats whose fixed beginnings ``mode``'s first question will send, the first sent last.

    ``reader``: the engine's reader; only one that asks the chat model (it has ``messages``)
    has a prompt to read ahead."""
    passage = Passage(pid="", corpus="", title=PLACEHOLDER, text=PLACEHOLDER)
    rag = [{"role": "user", "content": prompts.rag(PLACEHOLDER, [passage])}]
    task = getattr(settings, "task", "auto")
    chain = [{"role": "user", "content": prompts.coq(PLACEHOLDER, task if task in TASKS else AUTO_TASK)}]
    if mode == MODE_RAG:
        return [rag]
    if mode == MODE_COQ:
        return [chain]
    if mode in (MODE_GENGROUND, MODE_GEEK):
        return [[{"role": "user", "content": prompt}] for prompt in _strategy_prompts(mode, settings, passage)]
    if mode != MODE_SEARCHAIN:
        return []
    chats = []
    if reader is not None and hasattr(reader, "messages"):
        chats.append(reader.messages(PLACEHOLDER, PLACEHOLDER, PLACEHOLDER))
    if not writes_draft(settings):
        return chats + [chain]
    # The first call of a question last: the chain's first step, or the draft before the chain,
    # by the engine's own rule (a model run here writes its chain step by step where set to).
    stepwise = getattr(settings, "chain_steps", "stepwise") == "stepwise"
    return chats + ([rag, chain] if draft_after_first_step(settings, stepwise=stepwise) else [chain, rag])


def _strategy_prompts(mode: str, settings: Any, passage: Passage) -> list[str]:
    """GenGround's or GEEK's prompts for a first question with no step yet, the first sent last."""
    from .strategies.run import strategy_prompts

    book, p = strategy_prompts(), PLACEHOLDER
    if mode == MODE_GENGROUND:
        return [book.ground(p, p, [passage]), book.deduce(p, [])]
    return [book.final(p, [], yes_no=False), book.self_answer(p, [], p), book.action_next(p, []),
            book.extract(p, p, [passage]), book.action_pending(p, [], p),
            book.decomp(p, [], max(1, int(getattr(settings, "geek_branches", 2))))]


def warm_up(llm: Any, chats: list[list[ChatMessage]], cancel: CancelToken | None = None) -> WarmUp:
    """Evaluate each chat's prompt (one token decoded), stopping between calls if ``cancel``."""
    started = time.perf_counter()
    evaluated = calls = 0
    params = GenerationParams(max_tokens=1, temperature=0.0)
    for messages in chats:
        check(cancel)
        completion = llm.chat(messages, params, cancel=cancel)
        calls += 1
        evaluated += int(getattr(completion.usage, "prompt_tokens_evaluated", 0) or 0)
    return WarmUp(calls, evaluated, time.perf_counter() - started)
