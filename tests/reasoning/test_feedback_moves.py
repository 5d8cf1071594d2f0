"""Issue #23.3: a round after feedback builds on the settled steps and asks the next hop; a model
that just repeats its chain and ignores the feedback is reported as "stalled", not "finish"."""

from dataclasses import replace

from searchain.config import ReasoningSettings
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.events import FeedbackGiven
from searchain.reasoning.result import (
    DECISION_CORRECTED, DECISION_DUPLICATE, DECISION_PASS, SOURCE_IR_CORRECTED,
)
from tests.fixtures.reasoning import PAPER_TRACING, Q1, Q2, Q3, QUESTION, HashingEmbedder, chain


def _engine(llm, retriever, reader):
    return SearChainEngine(llm, retriever, reader, settings=ReasoningSettings(**PAPER_TRACING),
                           embedder=HashingEmbedder())


def test_repeating_the_chain_after_a_correction_is_stalled(retriever, reader):
    # The traced shape: the model writes the same one-node chain again, still with its own answer.
    same = chain((Q1, "Owen Pallett"), final="So the final answer is Owen Pallett [1].")
    llm = ScriptedLLM([same, same, "[Final Content]: Spirit If... is by Kevin Drew [1]."])
    result = _engine(llm, retriever, reader).answer(QUESTION)
    assert result.rounds == 2 and result.stop_reason == "stalled"
    assert result.branches[1].nodes[0].decision == DECISION_DUPLICATE
    # The path keeps IR's answer all the same.
    assert [(n.answer, n.source) for n in result.path] == [("Kevin Drew", SOURCE_IR_CORRECTED)]


def test_taking_the_correction_finishes(retriever, reader):
    llm = ScriptedLLM([chain((Q1, "Owen Pallett")), chain((Q1, "Kevin Drew")), "[Final Content]: Kevin Drew [1]."])
    assert _engine(llm, retriever, reader).answer(QUESTION).stop_reason == "finish"


def test_feedback_lists_the_settled_steps_and_asks_for_the_next_one(retriever, reader):
    llm = ScriptedLLM([
        chain((Q1, "Kevin Drew"), (Q2, "Vancouver")),
        chain((Q3, "Toronto Coach Terminal")),  # the next hop, asked at last
        "[Final Content]: Kevin Drew [1] was born in Toronto [2], served by the Toronto Coach Terminal [3]. "
        "So the final answer is Toronto Coach Terminal.",
    ])
    events = []
    result = _engine(llm, retriever, reader).answer(QUESTION, on_event=events.append)
    text = [e for e in events if isinstance(e, FeedbackGiven)][0].text
    assert f"[Query 1]: {Q1}\n[Answer 1]: Kevin Drew" in text
    assert f"[Query 2]: {Q2}\n[Answer 2]: Toronto" in text  # IR's answer, not the model's
    assert "do not ask them again" in text and "next step" in text
    assert f"starting with [Query 1]: {Q2}" not in text  # no longer asks to repeat the node
    assert result.stop_reason == "finish" and result.rounds == 2
    assert [n.decision for n in result.path] == [DECISION_PASS, DECISION_CORRECTED, DECISION_PASS]
    assert result.answer == "Toronto Coach Terminal" and [r.mark for r in result.references] == [1, 2, 3]


def test_only_a_final_content_after_feedback_finishes_from_the_settled_steps(retriever, reader):
    llm = ScriptedLLM([
        chain((Q1, "Owen Pallett")),
        "[Final Content]: Spirit If... is by Kevin Drew [1]. So the final answer is Kevin Drew.",
        "[Final Content]: Spirit If... is by Kevin Drew [1]. So the final answer is Kevin Drew.",
    ])
    result = _engine(llm, retriever, reader).answer(QUESTION)
    assert result.stop_reason == "finish" and result.rounds == 2 and result.answer == "Kevin Drew"



def test_feedback_quotes_the_passage_around_irs_answer_within_feedback_chars(passages, reader):
    from searchain.reasoning.inmemory import InMemoryRetriever
    from searchain.types import Passage

    filler = "The band toured widely and recorded several albums with many guest musicians. " * 16
    born = Passage("test", "p2", "Kevin Drew", filler + "Kevin Drew was born in Toronto, Ontario. " + filler)
    retriever = InMemoryRetriever([born] + passages[2:])  # the only passage on Kevin Drew
    outputs = [chain((Q2, "Vancouver")), chain((Q3, "Toronto Coach Terminal")), "[Final Content]: Toronto [1]."]
    reference = {}
    for chars in (1200, 300):
        events = []
        engine = SearChainEngine(ScriptedLLM(list(outputs)), retriever, reader, embedder=HashingEmbedder(),
                                 settings=ReasoningSettings(**PAPER_TRACING, feedback_chars=chars))
        engine.answer(QUESTION, on_event=events.append)
        feedback = [e for e in events if isinstance(e, FeedbackGiven)][0]
        assert feedback.node.query == Q2 and feedback.node.answer == "Toronto"
        reference[chars] = next(line for line in feedback.text.splitlines() if line.startswith("[Reference]"))
    # The default quotes the passage from its start, up to 1,200 characters: the answer is past them.
    assert reference[1200].startswith("[Reference]: Kevin Drew: The band toured") and "Toronto" not in reference[1200]
    # 300 characters around IR's answer: shorter, and holding the sentence that says it.
    assert "Kevin Drew was born in Toronto" in reference[300] and len(reference[300]) < 360
