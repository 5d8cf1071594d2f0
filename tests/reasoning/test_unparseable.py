"""Issue #23.6: a chain with no readable [Query]/[Answer] step (what ``--no-grammar`` gets from a
small model) is asked for once more with the format, and if it stays unreadable the run says
"unparseable", never "finish" with 0 nodes as if everything had been verified."""


import pytest

from searchain.llm.base import GenerationParams
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.events import ChainUnreadable
from searchain.reasoning.result import DECISION_PASS
from tests.fixtures.reasoning import Q1, QUESTION, chain, loop_settings

# The traced shape: prose, no markers at all.
PROSE = "Kevin Drew was born in Toronto, so Greyhound buses leave from the Toronto Coach Terminal."


def _engine(llm, retriever, reader, **kw):
    return SearChainEngine(llm, retriever, reader, settings=loop_settings(**kw), use_grammar=False)


def test_unreadable_twice_stops_as_unparseable_with_the_models_text(retriever, reader):
    llm = ScriptedLLM([PROSE, PROSE])
    events = []
    result = _engine(llm, retriever, reader).answer(QUESTION, on_event=events.append)
    assert result.stop_reason == "unparseable" and result.rounds == 2
    assert result.path == [] and result.references == []
    assert result.final_content == PROSE  # the fallback is the model's own text, shown as such
    unreadable = [e for e in events if isinstance(e, ChainUnreadable)]
    assert [(e.round, e.retrying) for e in unreadable] == [(1, True), (2, False)]
    # The retry repeats the question and shows the format.
    reminder = llm.calls[1][-1]["content"]
    assert "[Query 1]" in reminder and QUESTION in reminder
    assert result.branches[0].feedback == reminder and llm.remaining == 0


def test_a_readable_retry_goes_on_and_is_verified(retriever, reader):
    llm = ScriptedLLM([PROSE, chain((Q1, "Kevin Drew")), "[Final Content]: Kevin Drew [1]."])
    result = _engine(llm, retriever, reader).answer(QUESTION)
    assert result.stop_reason == "finish" and result.rounds == 2
    assert [n.decision for n in result.path] == [DECISION_PASS]
    assert [n.nodes for n in result.branches][0] == []  # the unreadable round stays in the tree


def test_a_readable_retry_that_runs_out_of_rounds_stops_at_r_max(retriever, reader):
    llm = ScriptedLLM([PROSE, chain(("Where was Kevin Drew born, really?", "Vancouver")), "[Final Content]: x."])
    result = _engine(llm, retriever, reader, r_max=2).answer(QUESTION)
    assert result.rounds == 2 and result.stop_reason == "r_max"


def test_no_retry_left_with_one_round(retriever, reader):
    result = _engine(ScriptedLLM([PROSE]), retriever, reader, r_max=1).answer(QUESTION)
    assert result.stop_reason == "unparseable" and result.rounds == 1


def test_coq_mode_reports_unparseable_and_keeps_the_text():
    llm = ScriptedLLM([PROSE, PROSE])
    result = SearChainEngine(llm, None, None, settings=loop_settings(), use_grammar=False).answer(
        QUESTION, mode="coq")
    assert result.stop_reason == "unparseable" and result.final_content == PROSE


@pytest.mark.slow
def test_no_grammar_with_the_real_tiny_model_never_finishes_with_zero_nodes(tiny_llm, retriever, reader):
    # Random weights without a grammar write gibberish with no markers.
    eng = SearChainEngine(tiny_llm, retriever, reader, settings=loop_settings(r_max=2),
                          use_grammar=False, generation=GenerationParams(max_tokens=24))
    result = eng.answer(QUESTION)
    assert all(not b.nodes for b in result.branches)  # nothing readable came out
    assert result.stop_reason == "unparseable" and result.rounds == 2
