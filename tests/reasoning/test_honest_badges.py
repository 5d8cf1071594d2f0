"""Issue #23.1: a node is "verified" only when the reader found an answer in the passage that
agrees with the LLM's; otherwise it says "not confirmed" or "no answer in passage", in the path,
the references, the eval's knowledge-source shares and (for runs stored before) on reload."""

from dataclasses import replace

from searchain.config import ReasoningSettings
from searchain.eval.datasets import EvalDataset, EvalQuestion
from searchain.eval.runner import run_eval
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reader.base import ReaderResult
from searchain.reader.llm_reader import LLMReader
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.result import (
    DECISION_NO_ANSWER, DECISION_NOT_CONFIRMED, DECISION_NOT_READ, DECISION_PASS, SOURCE_LLM,
    SOURCE_LLM_UNVERIFIED, SOURCE_LLM_VERIFIED, Node, honest_decision, honest_source,
)
from tests.fixtures.reasoning import PAPER_TRACING, PASSAGES, Q1, Q2, QUESTION, chain


class FixedReader:
    """A reader that always answers the same span (found in the passage, or not) at one confidence."""

    name = "fixed"

    def __init__(self, span: str, confidence: float, threshold: float = 1.5):
        self.span, self.confidence, self.threshold = span, confidence, threshold

    def read(self, question, title, text):
        at = text.find(self.span) if self.span else -1
        if at < 0:
            return ReaderResult("", 0, 0, 0.0, self.threshold)
        return ReaderResult(self.span, at, at + len(self.span), self.confidence, self.threshold)

    def read_many(self, question, passages):
        return [self.read(question, t, x) for t, x in passages]


def _engine(llm, retriever, reader):
    return SearChainEngine(llm, retriever, reader, settings=replace(ReasoningSettings(), duplicate_threshold=2.0,
                                                                    **PAPER_TRACING))


def test_reader_with_no_answer_never_badges_verified(retriever):
    # The traced shape: the chat-model reader says NOT FOUND (answer '', confidence 0.00).
    reader = LLMReader(ScriptedLLM(["NOT FOUND", "NOT FOUND"]))
    llm = ScriptedLLM([chain((Q1, "Kevin Drew"), (Q2, "Toronto")),
                       "[Final Content]: Kevin Drew [1] was born in Toronto [2]. So the final answer is Toronto."])
    result = _engine(llm, retriever, reader).answer(QUESTION)
    assert [(n.reader_answer, n.confidence) for n in result.path] == [("", 0.0), ("", 0.0)]
    assert [n.decision for n in result.path] == [DECISION_NO_ANSWER] * 2
    assert [n.source for n in result.path] == [SOURCE_LLM_UNVERIFIED] * 2
    # Nothing backs the answers, so no passage is cited as if it did.
    assert result.references == [] and "[1]" not in result.final_content


def test_unconfident_disagreeing_reader_gives_not_confirmed(retriever):
    llm = ScriptedLLM([chain((Q2, "Vancouver")), "[Final Content]: He was born in Vancouver [1]."])
    result = _engine(llm, retriever, FixedReader("Toronto", confidence=0.4)).answer(QUESTION)
    node = result.path[0]
    assert node.decision == DECISION_NOT_CONFIRMED and node.source == SOURCE_LLM_UNVERIFIED
    assert node.answer == "Vancouver" and node.span is None and result.references == []


def test_agreeing_reader_verifies_and_cites(retriever):
    llm = ScriptedLLM([chain((Q2, "Toronto")), "[Final Content]: He was born in Toronto [1]."])
    result = _engine(llm, retriever, FixedReader("Toronto", confidence=0.4)).answer(QUESTION)
    node = result.path[0]
    assert node.decision == DECISION_PASS and node.source == SOURCE_LLM_VERIFIED
    assert [r.mark for r in result.references] == [1] and result.references[0].span_text == "Toronto"


def test_eval_source_shares_follow_the_honest_badges(retriever):
    reader = LLMReader(ScriptedLLM(["NOT FOUND", "Toronto"]))
    llm = ScriptedLLM([chain((Q1, "Kevin Drew"), (Q2, "Toronto")),
                       "[Final Content]: Kevin Drew [1] was born in Toronto [2]. So the final answer is Toronto."])
    dataset = EvalDataset(path="mem", kind="hotpotqa", fingerprint="0",
                          questions=(EvalQuestion(id="q1", question=QUESTION, answers=("Toronto",)),))
    report = run_eval(_engine(llm, retriever, reader), dataset, mode="searchain")
    assert report.source_shares[SOURCE_LLM_UNVERIFIED] == 0.5
    assert report.source_shares[SOURCE_LLM_VERIFIED] == 0.5
    assert report.outcomes[0].sources == {SOURCE_LLM_VERIFIED: 1, SOURCE_LLM_UNVERIFIED: 1,
                                          "ir_corrected": 0, "ir_completed": 0}


def test_a_run_stored_before_the_split_is_judged_again():
    passage = PASSAGES[1]  # "Kevin Drew was born in Toronto, Ontario, ..."
    legacy = dict(round=1, position=0, query=Q2, decision=DECISION_PASS, source=SOURCE_LLM, passage=passage)
    empty = Node(llm_answer="Toronto", reader_answer="", confidence=0.0, **legacy)
    other = Node(llm_answer="Vancouver", reader_answer="Toronto", confidence=0.4, **legacy)
    agreed = Node(llm_answer="Toronto", reader_answer="Toronto", confidence=0.4, **legacy)
    assert [honest_decision(n) for n in (empty, other, agreed)] == [
        DECISION_NO_ANSWER, DECISION_NOT_CONFIRMED, DECISION_PASS]
    assert [honest_source(n) for n in (empty, other, agreed)] == [
        SOURCE_LLM_UNVERIFIED, SOURCE_LLM_UNVERIFIED, SOURCE_LLM_VERIFIED]
    assert not empty.supported and agreed.supported


def test_grounded_step_that_kept_the_models_answer_counts_as_verified():
    """GenGround: evidence cited and the answer unchanged (source stays "llm") is verified; a step
    no batch could ground is not."""
    from searchain.reasoning.result import (DECISION_GROUNDED, DECISION_UNGROUNDED, SOURCE_LLM,
                                            SOURCE_LLM_UNVERIFIED, SOURCE_LLM_VERIFIED, honest_source)
    passage = PASSAGES[1]
    grounded = Node(1, 0, "Where?", "Toronto", reader_answer="Toronto", decision=DECISION_GROUNDED,
                    source=SOURCE_LLM, passage=passage)
    ungrounded = Node(1, 1, "Where?", "Toronto", decision=DECISION_UNGROUNDED, source=SOURCE_LLM)
    assert honest_source(grounded) == SOURCE_LLM_VERIFIED
    assert honest_source(ungrounded) == SOURCE_LLM_UNVERIFIED


class CountingReader(FixedReader):
    """A confident reader that also notes every query it was asked to read for."""

    def __init__(self, span: str, confidence: float):
        super().__init__(span, confidence)
        self.queries: list[str] = []

    def read(self, question, title, text):
        self.queries.append(question)
        return super().read(question, title, text)


POLAR = "Was Kevin Drew born in Toronto?"


def _polar_run(retriever, read_yes_no_steps: bool, *steps):
    reader = CountingReader("Toronto", confidence=5.0)
    # A correction asks for a new chain: the second one passes (the reader agrees with it).
    llm = ScriptedLLM([chain(*steps), chain((Q2, "Toronto")), "[Final Content]: Yes. So the final answer is yes."])
    settings = replace(ReasoningSettings(), duplicate_threshold=2.0, read_yes_no_steps=read_yes_no_steps,
                       **PAPER_TRACING)
    return SearChainEngine(llm, retriever, reader, settings=settings).answer(QUESTION), reader


def test_a_yes_no_step_is_retrieved_for_but_not_read_when_asked(retriever):
    # Read, a confident reader "corrects" the step's "Yes" to a place: the span it copies.
    read, reader = _polar_run(retriever, True, (Q1, "Kevin Drew"), (POLAR, "Yes"))
    assert reader.queries[:2] == [Q1, POLAR]
    assert read.path[1].decision == "corrected" and read.path[1].answer == "Toronto"

    result, reader = _polar_run(retriever, False, (Q1, "Kevin Drew"), (POLAR, "Yes"))
    assert reader.queries == [Q1]  # the yes/no step cost no reader call
    node = result.path[1]
    assert (node.query, node.decision, node.source) == (POLAR, DECISION_NOT_READ, SOURCE_LLM_UNVERIFIED)
    assert node.answer == "Yes" and node.reader_answer is None and node.span is None
    assert node.passage is not None and node.passage.title == "Kevin Drew"  # retrieved, shown in the tree
    assert not node.supported  # nothing read it, so nothing cites it


def test_an_unsolved_yes_no_step_stays_off_the_path_unread(retriever):
    result, reader = _polar_run(retriever, False, (Q1, "Kevin Drew"), (POLAR, None))
    assert reader.queries == [Q1]
    assert [n.query for n in result.path] == [Q1]
