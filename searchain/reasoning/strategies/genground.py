"""GenGround (generate-then-ground, Shi et al., ACL 2024) as an answering strategy, prompted only.

Two phases alternate until the model gives the final answer or ``r_max`` hops have been made:

1. *Answer deduction*: from the question and the (sub-question, answer) pairs so far, the model
   writes the next single-hop sub-question and answers it from its own knowledge.
2. *Instructional knowledge grounding*: the top ``top_k`` passages for the sub-question are shown
   in batches of ``batch_size``; for each batch the model quotes the evidence and revises its
   answer, or says ``Empty`` and the next batch is tried. If no batch helps, the generated answer
   stands. The revised pair joins the context of the next deduction.

Every hop is one ``Branch`` of the result (round = hop): one node per batch tried (``empty`` or
``grounded``), plus an ``ungrounded`` node when none helped; the grounded (or ungrounded) node of
each hop is on the path. The final content is composed from the path, so every ``[n]`` names a
hop whose cited passage is stored with the span of the evidence. A sub-question that repeats an
earlier one stops the loop (``repeated_chain``): the model would only walk in circles.
"""

from __future__ import annotations


from ...config import ReasoningSettings
from ...events import check, emit
from ...metrics import not_equal
from ...types import Passage
from ..duplicates import DuplicateDetector
from ..events import ChainGenerated, RoundStarted
from ..parts import Generator, Retriever, locate
from ..result import (
    DECISION_EMPTY, DECISION_GROUNDED, DECISION_UNGROUNDED, SOURCE_IR_GROUNDED, SOURCE_LLM, Branch, Node,
)
from .base import StrategyOutcome, StrategyRun
from .events import (
    ACTION_DEDUCE, ACTION_FINAL, ACTION_GROUND, PHASE_DEDUCE, PHASE_GROUND, StrategyStep,
)
from .grammar import deduce_grammar, final_answer_grammar, ground_grammar
from .parse import field, parse_deduction, parse_grounding
from .parse import yes_no as as_yes_no
from .prompts import StrategyPrompts

GROUND_TOP_K = 10  # the paper grounds in the top 10 passages ...
GROUND_BATCH = 3  # ... three at a time


class GenGroundRun(StrategyRun):
    """One question answered by generate-then-ground."""

    def __init__(self, question: str, *, generator: Generator, prompts: StrategyPrompts,
                 settings: ReasoningSettings, retriever: Retriever, detector: DuplicateDetector,
                 top_k: int = GROUND_TOP_K, batch_size: int = GROUND_BATCH, field_chars: int | None = None,
                 deduce_gbnf: str | None = None, yes_no: bool = False):
        if not 1 <= batch_size <= 9:
            raise ValueError(f"batch_size must be 1..9, got {batch_size}")
        super().__init__(question, generator=generator, prompts=prompts, settings=settings,
                         retriever=retriever, detector=detector, yes_no=yes_no, field_chars=field_chars)
        self.top_k = max(1, int(top_k))
        self.batch_size = batch_size
        # A user-supplied GBNF for the deduction (same format, e.g. tuned to one model or corpus).
        self.deduce_gbnf = deduce_gbnf

    def run(self) -> StrategyOutcome:
        branches: list[Branch] = []
        path: list[Node] = []
        steps: list[tuple[str, str]] = []
        final: str | None = None
        stop_reason = "r_max"
        for hop in range(1, max(1, int(self.settings.r_max)) + 1):
            emit(self.gen.on_event, RoundStarted(hop, "deducing the next sub-question"))
            messages = [{"role": "user", "content": self.prompts.deduce(self.question, steps, yes_no=self.yes_no)}]
            completion = self.gen.chat(messages, PHASE_DEDUCE,
                                       self.deduce_gbnf or deduce_grammar(yes_no=self.yes_no, **self.caps))
            deduction = parse_deduction(completion.text)
            if deduction.sub_question is None:
                final, stop_reason = deduction.final_answer or "", "finish"
                break
            if self.detector.is_duplicate(deduction.sub_question):
                stop_reason = "repeated_chain"
                break
            self.detector.add(deduction.sub_question)
            answer = deduction.answer
            emit(self.gen.on_event, StrategyStep(hop, ACTION_DEDUCE, f"{deduction.sub_question} -> {answer or '?'}"))
            parent = (branches[-1].round, branches[-1].nodes[-1].position) if branches else None
            branch = Branch(round=hop, raw_text=completion.text, parent=parent)
            node = self._ground(branch, deduction.sub_question, answer)
            branches.append(branch)
            path.append(node)
            steps.append((node.query, node.answer or "unknown"))
            emit(self.gen.on_event, ChainGenerated(hop, branch))
        if final is None:
            final = self._conclude(steps)
        if self.yes_no:
            final = as_yes_no(final) or final
        emit(self.gen.on_event, StrategyStep(len(branches), ACTION_FINAL, final or "(no answer)"))
        return StrategyOutcome(branches, path, stop_reason, len(branches), final_answer=final)

    def _conclude(self, steps: list[tuple[str, str]]) -> str:
        """Out of hops (or walking in circles): ask for the final answer outright."""
        messages = [{"role": "user", "content": self.prompts.deduce(self.question, steps, yes_no=self.yes_no)}]
        text = self.gen.chat(messages, PHASE_DEDUCE, final_answer_grammar(yes_no=self.yes_no, **self.caps)).text
        answer = field(text, r"final\s+answer")
        if answer:
            return answer
        return steps[-1][1] if steps else " ".join(text.split())

    def _ground(self, branch: Branch, sub_question: str, answer: str | None) -> Node:
        """Ground one (sub-question, answer) pair, batch by batch; returns the hop's path node."""
        hits = self.retriever.search(sub_question, k=self.top_k)
        check(self.gen.cancel)
        passages = [h.passage for h in hits]
        batches = [passages[i:i + self.batch_size] for i in range(0, len(passages), self.batch_size)]
        summary: list[str] = []
        for number, batch in enumerate(batches, start=1):
            node = Node(round=branch.round, position=number - 1, query=sub_question, llm_answer=answer,
                        unsolved=answer is None)
            branch.nodes.append(node)
            prompt = self.prompts.ground(sub_question, answer or "unknown", batch)
            text = self.gen.chat([{"role": "user", "content": prompt}], PHASE_GROUND, self._ground_grammar(len(batch))).text
            branch.raw_text += "\n\n" + text.strip()
            grounding = parse_grounding(text, len(batch))
            titles = "; ".join(p.title for p in batch)
            if grounding.empty:
                node.decision = DECISION_EMPTY
                summary.append(f"Batch {number} ({titles}): Empty")
                emit(self.gen.on_event, StrategyStep(branch.round, ACTION_GROUND, summary[-1], node))
                continue
            passage = batch[grounding.passage - 1]
            self._cite(node, passage, grounding.evidence or "", grounding.revised or answer or "")
            summary.append(f"Batch {number} ({titles}): cited document {grounding.passage}, {passage.title}")
            emit(self.gen.on_event, StrategyStep(branch.round, ACTION_GROUND, summary[-1], node))
            branch.feedback = "\n".join(summary)
            return node
        # No batch helped (or nothing was retrieved): the generated answer stands.
        node = Node(round=branch.round, position=len(batches), query=sub_question, llm_answer=answer,
                    unsolved=answer is None, decision=DECISION_UNGROUNDED, source=SOURCE_LLM)
        branch.nodes.append(node)
        summary.append("No batch could ground it: the generated answer stands" if batches
                       else "Nothing retrieved: the generated answer stands")
        emit(self.gen.on_event, StrategyStep(branch.round, ACTION_GROUND, summary[-1], node))
        branch.feedback = "\n".join(summary)
        return node

    def _ground_grammar(self, size: int) -> str:
        caps = self.caps and {**self.caps, "evidence_chars": self.caps["chars"]}
        return ground_grammar(size, **caps)

    @staticmethod
    def _cite(node: Node, passage: Passage, evidence: str, revised: str) -> None:
        node.passage = passage
        node.reader_answer = revised
        node.decision = DECISION_GROUNDED
        # Knowledge decoupling: evidence that confirms the model's answer leaves it the LLM's.
        changed = node.llm_answer is None or (not_equal(revised, node.llm_answer)
                                               and not_equal(node.llm_answer, revised))
        node.source = SOURCE_IR_GROUNDED if changed else SOURCE_LLM
        # The span: where the passage states the revised answer, else the quoted evidence.
        node.span = locate(revised, passage.text) or locate(evidence, passage.text)
