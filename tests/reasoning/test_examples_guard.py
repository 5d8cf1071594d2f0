"""Issue #23.4: the few-shot examples' answers and queries never become answers, and an answer is
never verified against a passage that does not contain it."""

from dataclasses import replace

import pytest

from searchain.config import ReasoningSettings
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.chain.prompts import TASKS, PromptBook
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.result import DECISION_COMPLETED, DECISION_NOT_CONFIRMED, SOURCE_IR_COMPLETED
from tests.fixtures.reasoning import PAPER_TRACING, Q1, Q2, QUESTION, chain
from tests.reasoning.test_honest_badges import FixedReader

EXAMPLE_QUERY = "What is the largest moon in the Solar System?"  # from the multi-hop examples


def _engine(llm, retriever, reader):
    return SearChainEngine(llm, retriever, reader, settings=replace(ReasoningSettings(), duplicate_threshold=2.0,
                                                                    **PAPER_TRACING))


@pytest.mark.parametrize("task", TASKS)
def test_every_prompt_has_two_examples_the_guard_knows(task):
    guard = PromptBook().example_guard(task)
    assert len(guard.questions) == 2 and len(guard.queries) >= 3 and guard.answers
    assert not guard.answers & {"yes", "no"}


def test_an_example_answer_copied_into_a_chain_is_no_answer(retriever, reader):
    # The traced shape: an example's answer given to an unrelated step ("1989" in the old prompt).
    llm = ScriptedLLM([chain((Q2, "Jupiter.")), chain((Q2, "Toronto")), "[Final Content]: Toronto [1]."])
    result = _engine(llm, retriever, reader).answer(QUESTION)
    node = result.branches[0].nodes[0]
    assert node.unsolved and node.llm_answer is None
    assert node.decision == DECISION_COMPLETED and node.source == SOURCE_IR_COMPLETED
    assert node.answer == "Toronto"


def test_a_copied_example_query_is_dropped_and_a_copied_final_answer_ignored(retriever, reader):
    llm = ScriptedLLM([chain((EXAMPLE_QUERY, "Ganymede"), (Q1, "Kevin Drew"), final="So the final answer is Jupiter.")])
    result = SearChainEngine(llm, None, None, settings=ReasoningSettings()).answer(QUESTION, mode="coq")
    assert [n.query for n in result.path] == [Q1]
    assert result.branches[0].final_content is None and "Jupiter" not in result.final_content
    assert result.answer == "Kevin Drew"


def test_the_examples_own_question_may_use_their_answers(retriever, reader):
    question = "Which planet is orbited by the largest moon in the Solar System?"
    llm = ScriptedLLM([chain((EXAMPLE_QUERY, "Ganymede"), final="So the final answer is Jupiter.")])
    result = SearChainEngine(llm, None, None, settings=ReasoningSettings()).answer(question, mode="coq")
    assert result.answer == "Jupiter"


def test_an_agreeing_span_from_a_passage_that_lacks_the_answer_does_not_verify(retriever):
    # The reader's span "magazine" is contained in "Arthur's Magazine" (NotEqual is false), but the
    # passage is about First for Women: it does not say Arthur's Magazine at all.
    query = "Which magazine for women was started?"
    assert retriever.search(query, k=1)[0].passage.pid == "p5"
    llm = ScriptedLLM([chain((query, "Arthur's Magazine")), "[Final Content]: Arthur's Magazine [1]."])
    result = _engine(llm, retriever, FixedReader("magazine", confidence=0.2)).answer(QUESTION)
    node = result.path[0]
    assert node.reader_answer == "magazine" and node.decision == DECISION_NOT_CONFIRMED
    assert result.references == []
