"""Run the GenGround or GEEK strategy for the engine and fill in its ``AnswerResult``.

The engine hands over its ``Generator`` (streaming, cancellation, token counts), retriever,
settings and embedder; this module picks the strategy and finishes the result the same way as
SearChain's: the path's nodes, and a final content whose every ``[n]`` resolves to a stored
passage (``tracing.finalize`` composes it from the path around the strategy's short answer).
"""

from __future__ import annotations

from typing import Any

from ..chain.parser import short_answer
from ..chain.prompts import TASK_YESNO
from ..duplicates import DuplicateDetector
from ..modes import MODE_GEEK, MODE_GENGROUND
from ..parts import Generator
from ..result import AnswerResult
from ..tracing import finalize
from .prompts import StrategyPrompts

_PROMPTS: dict[str, StrategyPrompts] = {}


def strategy_prompts(folder=None) -> StrategyPrompts:
    """The templates, read once per folder."""
    key = str(folder or "")
    if key not in _PROMPTS:
        _PROMPTS[key] = StrategyPrompts(folder)
    return _PROMPTS[key]


def run_strategy(mode: str, question: str, task: str, *, generator: Generator, settings: Any,
                 retriever: Any, embedder: Any, result: AnswerResult, prompts: StrategyPrompts | None = None,
                 **options: Any) -> None:
    """Answer ``question`` with ``mode`` (genground | geek) into ``result``."""
    prompts = prompts or strategy_prompts()
    detector = DuplicateDetector(settings.duplicate_threshold, embedder)
    if mode == MODE_GENGROUND:
        from .genground import GenGroundRun

        outcome = GenGroundRun(question, generator=generator, prompts=prompts, settings=settings,
                               retriever=retriever, detector=detector, yes_no=task == TASK_YESNO, **options).run()
    elif mode == MODE_GEEK:
        from .geek import GeekRun

        outcome = GeekRun(question, generator=generator, prompts=prompts, settings=settings,
                          retriever=retriever, detector=detector, yes_no=task == TASK_YESNO, **options).run()
    else:
        raise ValueError(f"not a strategy mode: {mode!r}")
    result.branches, result.path = outcome.branches, outcome.path
    result.rounds, result.stop_reason = outcome.rounds, outcome.stop_reason
    result.final_content, result.references = finalize(f"[Final Content]: {outcome.final_answer}", outcome.path)
    # The strategy's own conclusion is the short answer, even when the passages cannot cite it
    # and the final content falls back to the composed path (which opens with a sub-question).
    result.answer = short_answer(outcome.final_answer or "")
