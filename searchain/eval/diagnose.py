"""Where a wrong answer went wrong: planning and retrieval, reading, or writing the final answer.

The issues ask *why* SearChain trails plain RAG with a small model. Each wrong outcome of a mode
with a reasoning path (its compact trace: the path's nodes and their passages' titles) is put in
the first of these that holds, using the benchmark's own paragraphs (the question's ten, with
their text) to tell whether a passage on the path held the gold answer:

- ``no_path``: the run verified nothing (no node on the path); the answer is the model's own.
- ``final_writing``: a node on the path has the gold answer, but the final answer lost it.
- ``reading``: a passage on the path contains the gold answer, but no node took it from there
  (the reader answered something else, or the LLM's answer was kept).
- ``planning_or_retrieval``: no passage on the path contains the gold answer: the sub-questions
  never led retrieval to it.
"""

from __future__ import annotations

from typing import Iterable

from ..metrics import cover_em
from .datasets import EvalDataset
from .runner import QuestionOutcome

KINDS = ("right", "no_path", "final_writing", "reading", "planning_or_retrieval")


def failure_kind(outcome: QuestionOutcome, paragraphs: dict[str, str]) -> str:
    """The kind (``KINDS``) of one outcome; ``paragraphs`` maps the question's titles to texts."""
    if outcome.cover_em:
        return "right"
    path = outcome.trace.get("path") or []
    if not path:
        return "no_path"
    golds = outcome.golds
    answers = [_kept_answer(n) for n in path]
    if any(a and cover_em(a, golds) for a in answers):
        return "final_writing"
    texts = [paragraphs.get(n.get("passage") or "", "") for n in path]
    if any(text and cover_em(text, golds) for text in texts):
        return "reading"
    return "planning_or_retrieval"


_FROM_READER = ("corrected", "completed", "grounded", "extracted", "self_answered")


def _kept_answer(node: dict) -> str | None:
    """What the path kept: the reader's answer or the LLM's (logs before "answer" was traced
    are read from the decision)."""
    if "answer" in node:
        return node["answer"]
    return node.get("reader") if node.get("decision") in _FROM_READER else node.get("llm")


def diagnose(outcomes: Iterable[QuestionOutcome], dataset: EvalDataset) -> dict[str, int]:
    """How many outcomes fall in each kind (outcomes without a trace path count by the rules
    above: a mode with no path at all, such as rag, is all ``right`` or ``no_path``)."""
    by_id = {q.id: q for q in dataset.questions}
    counts = {kind: 0 for kind in KINDS}
    for outcome in outcomes:
        question = by_id.get(outcome.id)
        paragraphs = {p.title: p.text for p in question.paragraphs} if question else {}
        counts[failure_kind(outcome, paragraphs)] += 1
    return counts
