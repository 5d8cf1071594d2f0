"""Typed events the reasoning engine emits while it answers one question.

The CLI prints them as progress on stderr; the desktop app turns them into live updates (the
tree growing, node badges, the final answer streaming in). Every event is a frozen dataclass of
plain data; ``Done`` is always the last event of a successful run.

Cancellation contract: when the ``CancelToken`` is triggered, the engine raises
``searchain.errors.Cancelled`` at the next check point (between tokens, before each retrieval
and reader call). No ``Done`` follows; partial results are discarded. ``Failed`` is emitted
just before an unexpected error propagates, so that a UI listening only to events learns about it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

from .result import AnswerResult, Branch, Node

# TokenGenerated.phase values.
PHASE_CHAIN = "chain"  # the model writing a Chain-of-Query (or a baseline's answer)
PHASE_FINAL = "final"  # the model writing the traced [Final Content]
PHASE_REWRITE = "rewrite"  # the model rewriting a follow-up question to stand alone
# SearChain's draft: plain RAG's answer over the question's passages, written before the chain
# and shown until the checked final answer starts (``reasoning.draft_answer``).
PHASE_DRAFT = "draft"


def streamed_text_action(shown_phase: str | None, phase: str) -> str:
    """What a view of streamed answer text does with a token of ``phase`` after tokens of
    ``shown_phase``: "append" (the same phase), "replace" (a new phase starts the text over),
    or "keep" (a draft stays on screen while the chain and the reader work, until the final
    answer replaces it). The chat pane and the saved partial text follow the same rule."""
    if phase == shown_phase:
        return "append"
    if shown_phase == PHASE_DRAFT and phase != PHASE_FINAL:
        return "keep"
    return "replace"

# FeedbackGiven.kind values.
FEEDBACK_CORRECTION = "correction"
FEEDBACK_COMPLETION = "completion"


@dataclass(frozen=True)
class QuestionRewritten:
    """A follow-up was read with the conversation: ``standalone`` is what will be answered."""

    original: str
    standalone: str


@dataclass(frozen=True)
class RoundStarted:
    """Round ``round`` (1-based) begins; ``activity`` says what the LLM is about to do (SearChain:
    write a Chain-of-Query; GenGround: deduce the next sub-question; GEEK: pick an action)."""

    round: int
    activity: str = "writing a chain of queries"


@dataclass(frozen=True)
class ChainGenerated:
    """The LLM finished writing this round's Chain-of-Query, parsed into ``branch``."""

    round: int
    branch: Branch


@dataclass(frozen=True)
class ChainDrafted:
    """While the LLM writes round ``round``'s chain, the steps it has finished so far (a step is
    finished once its answer line, or the next step, has begun), so the tree can show the first
    node as soon as it is written (#37). Provisional: ``ChainGenerated`` brings the parsed chain."""

    round: int
    branch: Branch


@dataclass(frozen=True)
class DraftStarted:
    """SearChain's draft (plain RAG's answer over the question's passages) is being written; its
    tokens follow after the prompt is read (seconds on a CPU), as ``TokenGenerated`` of phase
    ``draft``."""


@dataclass(frozen=True)
class ChainUnreadable:
    """The model's output in round ``round`` had no [Query]/[Answer] step that could be read
    (``text`` is what it wrote). ``retrying``: the model is asked again with a reminder of the
    format; otherwise the run stops as "unparseable" and the answer is the model's own text,
    unchecked."""

    round: int
    text: str
    retrying: bool


@dataclass(frozen=True)
class NodeChecked:
    """IR verified/completed ``node`` (see ``node.decision``), or skipped it as a duplicate."""

    round: int
    node: Node


@dataclass(frozen=True)
class FeedbackGiven:
    """The loop sends ``text`` back to the LLM about ``node`` (``kind``: correction | completion)."""

    round: int
    kind: str
    node: Node
    text: str


@dataclass(frozen=True)
class TokenGenerated:
    """A piece of model output as it is decoded (``phase``: "chain" | "final")."""

    text: str
    phase: str


@dataclass(frozen=True)
class Done:
    """The answer is ready."""

    result: AnswerResult


@dataclass(frozen=True)
class Failed:
    """The run failed with an error; the exception propagates right after this event."""

    message: str


ReasoningEvent = Union[QuestionRewritten, RoundStarted, ChainDrafted, DraftStarted, ChainGenerated, ChainUnreadable, NodeChecked, FeedbackGiven, TokenGenerated, Done, Failed]
