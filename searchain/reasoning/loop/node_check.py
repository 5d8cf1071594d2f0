"""IR(q_i, a_i) of SearChain's Algorithm 1: one node of a chain checked against retrieval.

``NodeChecker.check`` retrieves for the node's query, reads the top passage (the one the reader
is most confident about, with ``top_k`` > 1), and decides:

- an ``[Unsolved Query]`` the reader answers is *completed* (IR's answer, fed back);
- an answer the reader confidently contradicts is *corrected* (fed back);
- else the LLM's answer stands: verified where the passage backs it (``judge_agreement``, or
  ROUGE-L for long-form answers), unconfirmed otherwise;
- a yes/no step (with ``reasoning.read_yes_no_steps`` off) is retrieved for, not read: a span
  reader cannot answer it.

It fills the node (passage, reader answer, confidence, decision, source, evidence span) and says
whether the node joins the path R and which feedback, if any, the loop writes.
"""

from __future__ import annotations

from typing import Any

from ...events import CancelToken, check
from ...metrics import not_equal, rouge_l
from ...types import Passage
from ..chain.prompts import TASK_LONGFORM
from ..events import FEEDBACK_COMPLETION, FEEDBACK_CORRECTION
from ..parts import Retriever, locate
from ..polar import is_polar
from ..result import (
    DECISION_COMPLETED, DECISION_CORRECTED, DECISION_NOT_CONFIRMED, DECISION_NOT_READ, DECISION_PASS,
    SOURCE_IR_COMPLETED, SOURCE_IR_CORRECTED, SOURCE_LLM_UNVERIFIED, SOURCE_LLM_VERIFIED, Node,
    judge_agreement,
)


class NodeChecker:
    """Checks nodes for one question's run (``loop.run.ReasoningRun``)."""

    def __init__(self, task: str, settings: Any, retriever: Retriever | None, reader: Any, *,
                 cancel: CancelToken | None = None):
        self.task = task
        self.settings = settings
        self.retriever = retriever
        self.reader = reader
        self.cancel = cancel

    def check(self, node: Node) -> tuple[str | None, bool]:
        """(feedback kind or None, whether the node joins the path). A node with nothing to
        check against (no hit; an unsolved one IR cannot answer either) stays off the path."""
        if self._not_for_the_reader(node.query):
            return None, self._retrieve_only(node)
        passage, result = self._top_passage(node.query)
        check(self.cancel)
        if passage is None:
            return None, False
        node.passage = passage
        node.reader_answer = result.answer
        node.confidence = float(result.confidence)
        reader_span = (result.start, result.end) if result.answer else None
        if node.unsolved:
            if not result.answer.strip():
                return None, False
            node.decision, node.source, node.span = DECISION_COMPLETED, SOURCE_IR_COMPLETED, reader_span
            return FEEDBACK_COMPLETION, True
        if result.confidence > result.threshold and self._disagrees(result.answer, node.llm_answer, passage):
            node.decision, node.source, node.span = DECISION_CORRECTED, SOURCE_IR_CORRECTED, reader_span
            return FEEDBACK_CORRECTION, True
        # No correction: the LLM's answer stands, verified only if the passage backs it.
        if self.task == TASK_LONGFORM:
            # Long-form: consistency is ROUGE-L against the passage, not a reader span.
            consistent = rouge_l(node.llm_answer or "", passage.text) > self.settings.alpha
            node.decision = DECISION_PASS if consistent else DECISION_NOT_CONFIRMED
        else:
            node.decision = judge_agreement(node.llm_answer, result.answer, node.query, passage.text)
        verified = node.decision == DECISION_PASS
        node.source = SOURCE_LLM_VERIFIED if verified else SOURCE_LLM_UNVERIFIED
        # The evidence span: where the passage states the LLM's answer, else the reader's span;
        # none for an answer the passage does not back.
        node.span = (locate(node.llm_answer, passage.text) or reader_span) if verified else None
        return None, True

    def _top_passage(self, query: str):
        """The passage IR checks a node against, and the reader's result on it (None if no hit)."""
        k = max(1, int(self.settings.top_k))
        hits = self.retriever.search(query, k=k)
        check(self.cancel)
        if not hits:
            return None, None
        if len(hits) == 1:
            p = hits[0].passage
            return p, self.reader.read(query, p.title, p.text)
        # top_k > 1: read each and keep the passage the reader is most confident about.
        results = self.reader.read_many(query, [(h.passage.title, h.passage.text) for h in hits])
        best = max(range(len(hits)), key=lambda i: results[i].confidence)
        return hits[best].passage, results[best]

    def _not_for_the_reader(self, query: str) -> bool:
        """A yes/no step a span reader cannot answer (``reasoning.read_yes_no_steps`` off)."""
        return (self.task != TASK_LONGFORM and not getattr(self.settings, "read_yes_no_steps", True)
                and is_polar(query))

    def _retrieve_only(self, node: Node) -> bool:
        """A step IR retrieves for but does not read: its passage is kept (the tree shows it, the
        final answer may read it); an answered step stands unchecked on the path, an unsolved one
        stays off it, as when the reader finds nothing. Returns whether it joins the path."""
        hits = self.retriever.search(node.query, k=1)
        check(self.cancel)
        if not hits:
            return False
        node.passage = hits[0].passage
        if node.unsolved:
            return False
        node.decision, node.source = DECISION_NOT_READ, SOURCE_LLM_UNVERIFIED
        return True

    def _disagrees(self, reader_answer: str, llm_answer: str | None, passage: Passage) -> bool:
        if self.task == TASK_LONGFORM:
            return rouge_l(llm_answer or "", passage.text) <= self.settings.alpha
        return not_equal(reader_answer, llm_answer)
