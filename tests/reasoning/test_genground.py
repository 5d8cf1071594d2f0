"""GenGround's control flow with a scripted LLM: deduction, batch grounding, Empty, r_max, cancel."""

import pytest

from searchain.errors import Cancelled, ConfigError
from searchain.events import CancelToken
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.events import ChainGenerated, Done, TokenGenerated
from searchain.reasoning.result import (
    DECISION_EMPTY, DECISION_GROUNDED, DECISION_UNGROUNDED, SOURCE_IR_GROUNDED, SOURCE_LLM,
)
from searchain.reasoning.strategies.events import StrategyStep
from searchain.reasoning.strategies.grammar import deduce_grammar, ground_grammar
from tests.fixtures.reasoning import PASSAGES, Q1, Q2, QUESTION
from tests.reasoning.strategy_helpers import FILLER, FixedRetriever, engine, ranked

P1, P2, P3 = PASSAGES[0], PASSAGES[1], PASSAGES[2]
EMPTY = "[Evidence]: Empty"


def step(q, a):
    return f"[Sub-question]: {q}\n[Answer]: {a}"


def cite(n, evidence, revised):
    return f"[Evidence {n}]: {evidence}\n[Revised Answer]: {revised}"


def test_two_hops_grounded_in_later_batches_then_final_answer():
    retriever = FixedRetriever(FILLER, {Q1: ranked((4, P1)), Q2: ranked((0, P2))})
    llm = ScriptedLLM([
        step(Q1, "Kevin Drew"),
        EMPTY,  # batch 1: fillers 1-3
        cite(2, "Spirit If... is the debut solo album by Kevin Drew", "Kevin Drew"),  # batch 2 holds P1 second
        step(Q2, "Vancouver"),
        cite(1, "Kevin Drew was born in Toronto", "Toronto"),
        "[Final Answer]: Toronto",
    ])
    events = []
    result = engine(llm, retriever, r_max=5).answer(QUESTION, mode="genground", on_event=events.append)
    assert result.mode == "genground" and result.stop_reason == "finish" and result.rounds == 2
    first, second = result.branches
    assert [n.decision for n in first.nodes] == [DECISION_EMPTY, DECISION_GROUNDED]
    assert first.feedback.splitlines()[0].startswith("Batch 1 (Filler 1; Filler 2; Filler 3): Empty")
    assert "cited document 2, Spirit If..." in first.feedback
    assert second.parent == (1, 1)
    assert [(n.answer, n.source) for n in result.path] == [("Kevin Drew", SOURCE_LLM), ("Toronto", SOURCE_IR_GROUNDED)]
    assert result.path[1].llm_answer == "Vancouver"  # the generated answer is kept for display
    # The second deduction saw the revised first pair, never the fillers.
    assert "[Answer]: Kevin Drew" in llm.calls[3][0]["content"]
    assert result.answer == "Toronto"
    for ref in result.references:  # every mark resolves to the cited passage and the answer span
        assert ref.passage == result.path[ref.mark - 1].passage and ref.span_text
    assert [r.passage.pid for r in result.references] == ["p1", "p2"]
    assert result.references[1].span_text == "Toronto"
    steps = [e for e in events if isinstance(e, StrategyStep)]
    assert [s.action for s in steps] == ["Deduce", "Ground", "Ground", "Deduce", "Ground", "FinalAnswer"]
    kinds = [type(e).__name__ for e in events if not isinstance(e, (TokenGenerated, StrategyStep))]
    assert kinds == ["RoundStarted", "ChainGenerated", "RoundStarted", "ChainGenerated", "RoundStarted", "Done"]
    # progress says what a GenGround round does, not SearChain's "writing a chain of queries"
    assert {e.activity for e in events if type(e).__name__ == "RoundStarted"} == {"deducing the next sub-question"}


def test_all_batches_empty_keeps_the_generated_answer_unmarked():
    retriever = FixedRetriever(FILLER)  # 10 passages: batches of 3, 3, 3, 1
    llm = ScriptedLLM([step(Q1, "Kevin Drew"), EMPTY, EMPTY, "[Evidence 1]: Empty", EMPTY,
                       "[Final Answer]: Kevin Drew"])
    result = engine(llm, retriever).answer("Who performs Spirit If...?", mode="genground")
    nodes = result.branches[0].nodes
    assert [n.decision for n in nodes] == [DECISION_EMPTY] * 4 + [DECISION_UNGROUNDED]
    assert "[1-1]" in llm.params[4].grammar  # the last batch holds one passage
    assert result.path == [nodes[-1]] and result.path[0].passage is None
    assert result.references == [] and "[" not in result.final_content
    assert result.answer == "Kevin Drew"
    assert result.branches[0].feedback.endswith("the generated answer stands")


def test_r_max_reached_asks_for_the_final_answer_outright():
    retriever = FixedRetriever([P1, P2, P3])
    llm = ScriptedLLM([step(Q1, "Kevin Drew"), cite(1, "debut solo album by Kevin Drew", "Kevin Drew"),
                       step(Q2, "Toronto"), cite(2, "born in Toronto", "Toronto"),
                       "[Final Answer]: Toronto Coach Terminal"])
    result = engine(llm, retriever, r_max=2).answer(QUESTION, mode="genground")
    assert result.stop_reason == "r_max" and result.rounds == 2 and llm.remaining == 0
    assert '"[Final Answer]: "' in llm.params[-1].grammar and "Sub-question" not in llm.params[-1].grammar
    assert result.answer == "Toronto Coach Terminal"
    assert [r.mark for r in result.references] == [1, 2]


def test_a_repeated_sub_question_stops_the_loop():
    retriever = FixedRetriever([P1])
    llm = ScriptedLLM([step(Q1, "Kevin Drew"), cite(1, "by Kevin Drew", "Kevin Drew"), step(Q1, "Kevin Drew"),
                       "[Final Answer]: Kevin Drew"])
    result = engine(llm, retriever, r_max=5).answer(QUESTION, mode="genground")
    assert result.stop_reason == "repeated_chain" and result.rounds == 1 and result.answer == "Kevin Drew"


def test_without_a_grammar_preambles_and_sloppy_markers_still_parse():
    retriever = FixedRetriever([P2])
    llm = ScriptedLLM(["Sure! Here is the next step.\n[Sub-question]: Where was Kevin Drew born?\n[answer]: Toronto\n",
                       "The document says:\n[Evidence 1]: Kevin Drew was born in Toronto\n[revised answer]: Toronto.",
                       "final answer below\n[Final Answer]: Toronto"], grammar=False)
    result = engine(llm, retriever).answer("Where was Kevin Drew born?", mode="genground")
    assert all(p.grammar is None for p in llm.params)
    assert result.path[0].decision == DECISION_GROUNDED and result.answer == "Toronto"


def test_cancel_mid_grounding_raises_and_returns_nothing():
    retriever = FixedRetriever(FILLER)
    token = CancelToken()
    llm = ScriptedLLM([step(Q1, "Kevin Drew"), "[Evidence]: Empty and more words to stream", EMPTY])
    seen = []

    def on_event(event):
        seen.append(event)
        if isinstance(event, TokenGenerated) and event.phase == "ground":
            token.cancel()

    with pytest.raises(Cancelled):
        engine(llm, retriever).answer(QUESTION, mode="genground", on_event=on_event, cancel=token)
    assert not any(isinstance(e, (Done, ChainGenerated)) for e in seen)
    assert llm.remaining == 1  # the second batch was never asked


def test_genground_needs_a_retriever_and_checks_its_batch_size():
    with pytest.raises(ConfigError, match="needs a corpus"):
        engine(ScriptedLLM([]), None).answer(QUESTION, mode="genground")
    e = engine(ScriptedLLM([step(Q1, "x")]), FixedRetriever([P1]), options={"genground": {"batch_size": 12}})
    with pytest.raises(ValueError, match="batch_size"):
        e.answer(QUESTION, mode="genground")


def test_grammars_offer_exactly_the_format():
    g = ground_grammar(3)
    assert '"[Evidence]: Empty"' in g and '"[Evidence " [1-3] "]: "' in g and "[Revised Answer]" in g
    d = deduce_grammar()
    assert '"[Sub-question]: "' in d and '"[Final Answer]: "' in d


def test_a_yes_no_question_gets_a_yes_or_no_final_answer():
    """HotpotQA's comparison questions have yes/no golds: the deduction's final answer (and the
    outright one after r_max) is constrained to yes or no, and a sloppy one is cut to it."""
    question = "Were Scott Derrickson and Ed Wood of the same nationality?"
    retriever = FixedRetriever([P1])
    llm = ScriptedLLM([step(Q1, "American"), EMPTY, "[Final Answer]: Yes, both were American."])
    result = engine(llm, retriever, r_max=3).answer(question, mode="genground")
    deduce = llm.params[-1].grammar
    assert '"[Final Answer]: " ( "yes" | "no" )' in deduce and "yes or no" in llm.calls[-1][0]["content"]
    assert result.answer == "yes" and result.stop_reason == "finish"
    llm = ScriptedLLM([step(Q1, "American"), EMPTY, "[Final Answer]: no"])
    engine(llm, retriever, r_max=1).answer(question, mode="genground")
    assert llm.params[-1].grammar.startswith('root ::= "[Final Answer]: " ( "yes" | "no" )')
    # Not a yes/no question: the final answer stays free text.
    llm = ScriptedLLM([step(Q1, "Kevin Drew"), EMPTY, "[Final Answer]: Kevin Drew"])
    engine(llm, retriever, r_max=3).answer(QUESTION, mode="genground")
    assert '( "yes" | "no" )' not in llm.params[-1].grammar and "yes or no" not in llm.calls[-1][0]["content"]
