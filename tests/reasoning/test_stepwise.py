"""A chain written step by step (#37): each step is checked before the next is written, so nothing
is decoded that IR would discard, and the verified path is the one the whole chain gives.

``ScriptedReplyLLM`` writes the same scripted reply whether it is asked for whole or continued
step by step, like a deterministic model: the two ways can be compared on one script."""


import pytest

from searchain.llm.fakes.scripted import ScriptedLLM, ScriptedReplyLLM
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.events import ChainDrafted, ChainGenerated, NodeChecked
from searchain.reasoning.result import DECISION_CORRECTED, DECISION_DUPLICATE, DECISION_PASS, DECISION_UNCHECKED
from searchain.reasoning.loop.stepwise import FINAL_LINE, FINAL_STOP
from tests.fixtures.reasoning import Q1, Q2, Q3, QUESTION, HashingEmbedder, chain, loop_settings

FINAL = "Greyhound buses leave from the Toronto Coach Terminal [1]. So the final answer is Toronto Coach Terminal."

# Dialogues of the loop's tests: every output but the last is a round's chain.
DIALOGUES = {
    "passes": [chain((Q1, "Kevin Drew"), (Q2, "Toronto"), (Q3, "Toronto Coach Terminal")), FINAL],
    "corrected": [chain((Q1, "Kevin Drew"), (Q2, "Vancouver"), (Q3, "Pacific Central Station")),
                  chain((Q2, "Toronto"), (Q3, "Toronto Coach Terminal")), FINAL],
    "completed": [chain((Q1, "Kevin Drew"), (Q2, None), (Q3, "Toronto Coach Terminal")),
                  chain((Q2, "Toronto"), (Q3, "Toronto Coach Terminal")), FINAL],
    "corrected twice": [chain((Q1, "Owen Pallett"), (Q2, "Vancouver")),
                        chain((Q1, "Kevin Drew"), (Q2, "Vancouver"), (Q3, "Pacific Central Station")),
                        chain((Q3, "Toronto Coach Terminal")), FINAL],
    "concludes after feedback": [chain((Q1, "Kevin Drew"), (Q2, "Vancouver")),
                                 "[Final Content]: Toronto [2].", FINAL],
}


def _answer(llm, steps: str, **settings):
    engine = SearChainEngine(llm, _retriever(), _reader(),
                             settings=loop_settings(chain_steps=steps, **settings),
                             embedder=HashingEmbedder())
    events = []
    return engine.answer(QUESTION, on_event=events.append), events


def _retriever():
    from searchain.reasoning.inmemory import InMemoryRetriever
    from tests.fixtures.reasoning import PASSAGES

    return InMemoryRetriever(list(PASSAGES))


def _reader():
    from searchain.reasoning.inmemory import LexicalReader

    return LexicalReader()


def _path(result):
    return [(n.query, n.answer, n.decision, n.source, n.passage.pid if n.passage else None) for n in result.path]


@pytest.mark.parametrize("name", sorted(DIALOGUES))
def test_the_path_is_the_whole_chains_and_less_is_written(name):
    # A chain with no step at all is what only a model without a grammar can write.
    grammar = name != "concludes after feedback"
    whole, _ = _answer(ScriptedReplyLLM(DIALOGUES[name], grammar=grammar), "whole")
    llm = ScriptedReplyLLM(DIALOGUES[name], grammar=grammar)
    stepwise, _ = _answer(llm, "stepwise")
    assert _path(stepwise) == _path(whole) and stepwise.stop_reason == whole.stop_reason
    assert stepwise.rounds == whole.rounds and stepwise.answer == whole.answer
    # Only the chain's decoding is cut: nothing after a node that took feedback, no final line.
    assert stepwise.tokens_by_phase["chain"][1] < whole.tokens_by_phase["chain"][1]
    assert stepwise.tokens_by_phase.get("final") == whole.tokens_by_phase.get("final")
    chain_replies = [p for p in llm.params if p.stop and FINAL_STOP in p.stop]
    assert chain_replies, "the chain was not written step by step"
    assert llm.remaining == 0


def test_a_round_ends_at_the_node_that_takes_feedback():
    llm = ScriptedReplyLLM(DIALOGUES["corrected"])
    result, events = _answer(llm, "stepwise")
    first, second = result.branches
    # Q3 of round 1 was never written: Q2's correction ended the round.
    assert [(n.query, n.decision) for n in first.nodes] == [(Q1, DECISION_PASS), (Q2, DECISION_CORRECTED)]
    assert first.raw_text == "[Query 1]: Q\n[Answer 1]: Kevin Drew\n[Query 2]: W\n[Answer 2]: Vancouver".replace(
        "Q\n", f"{Q1}\n").replace("W\n", f"{Q2}\n")
    # Round 2 sees round 1's reply up to that node, then the feedback.
    round2 = next(call for call in llm.calls if len(call) == 4 and call[2]["role"] == "user")
    assert round2[1] == {"role": "assistant", "content": first.raw_text}
    assert round2[2]["content"] == first.feedback
    # ...and the new chain's first header, written by the loop (the grammar forces it).
    assert round2[3] == {"role": "assistant", "content": "[Query 1]:"}
    assert [n.decision for n in second.nodes] == [DECISION_DUPLICATE, DECISION_PASS]
    assert second.final_content is None  # the final line is not written: the answer is written apart
    whole, _ = _answer(ScriptedReplyLLM(DIALOGUES["corrected"]), "whole")
    assert [n.decision for n in whole.branches[0].nodes] == [DECISION_PASS, DECISION_CORRECTED, DECISION_UNCHECKED]


def test_each_step_shows_before_it_is_checked_and_the_round_keeps_its_decisions():
    engine = SearChainEngine(ScriptedReplyLLM(DIALOGUES["passes"]), _retriever(), _reader(),
                             settings=loop_settings(), embedder=HashingEmbedder())
    seen, events = [], []

    def record(e):  # the branch grows as steps come: note its size when each event is sent
        events.append(e)
        if isinstance(e, (ChainDrafted, ChainGenerated)):
            seen.append((type(e).__name__, len(e.branch.nodes)))
        elif isinstance(e, NodeChecked):
            seen.append(("NodeChecked", e.node.position))

    engine.answer(QUESTION, on_event=record)
    assert seen == [("ChainDrafted", 1), ("NodeChecked", 0), ("ChainDrafted", 2), ("NodeChecked", 1),
                    ("ChainDrafted", 3), ("NodeChecked", 2), ("ChainGenerated", 3)]
    generated = next(e for e in events if isinstance(e, ChainGenerated))
    assert [n.decision for n in generated.branch.nodes] == [DECISION_PASS] * 3


def test_models_that_cannot_continue_a_reply_get_whole_chains():
    llm = ScriptedLLM(DIALOGUES["corrected"])  # no supports_prefill: a server, say
    result, _ = _answer(llm, "stepwise")
    assert all(call[-1]["role"] == "user" for call in llm.calls)
    assert [n.decision for n in result.branches[0].nodes] == [DECISION_PASS, DECISION_CORRECTED, DECISION_UNCHECKED]
    llm = ScriptedReplyLLM(DIALOGUES["corrected"])
    _answer(llm, "whole")  # or when the setting says so
    assert all(call[-1]["role"] == "user" for call in llm.calls)


def test_whole_chains_can_stop_before_their_final_line():
    llm = ScriptedReplyLLM(DIALOGUES["concludes after feedback"])
    result, _ = _answer(llm, "whole_no_final")
    whole, _ = _answer(ScriptedReplyLLM(DIALOGUES["concludes after feedback"]), "whole")
    assert _path(result) == _path(whole) and result.stop_reason == whole.stop_reason == "finish"
    assert FINAL_LINE not in result.branches[0].raw_text and FINAL_LINE in whole.branches[0].raw_text
    assert result.tokens_by_phase["chain"][1] < whole.tokens_by_phase["chain"][1]


def test_nothing_verified_answers_from_the_questions_passages():
    # A chain written step by step has no closing line to fall back on when nothing was verified.
    llm = ScriptedReplyLLM([chain((Q1, None)), FINAL])

    class Blind:  # a reader that never finds an answer: the unsolved step stays off the path
        threshold = 0.5

        def read(self, query, title, text):
            from searchain.reader.base import ReaderResult

            return ReaderResult(answer="", confidence=0.0, start=0, end=0, threshold=0.5)

    engine = SearChainEngine(llm, _retriever(), Blind(), settings=loop_settings(r_max=1),
                             embedder=HashingEmbedder())
    result = engine.answer(QUESTION)
    assert result.path == [] and "Toronto Coach Terminal" in result.final_content
    assert "main intercity bus station" in llm.calls[-1][0]["content"]  # RAG's prompt, its passages
    assert result.branches[0].final_content is None


def test_an_unknown_way_of_writing_chains_is_refused():
    from searchain.errors import ConfigError

    with pytest.raises(ConfigError, match="'sideways'"):
        _answer(ScriptedReplyLLM(DIALOGUES["passes"]), "sideways")


def test_nothing_verified_under_the_tracing_style_also_answers_from_the_questions_passages():
    # Tracing has no passages to read without a path either: a stepwise run still answers.
    llm = ScriptedReplyLLM([chain((Q1, None)), FINAL])

    class Blind:
        def read(self, query, title, text):
            from searchain.reader.base import ReaderResult

            return ReaderResult(answer="", confidence=0.0, start=0, end=0, threshold=0.5)

    engine = SearChainEngine(llm, _retriever(), Blind(), embedder=HashingEmbedder(),
                             settings=loop_settings(r_max=1, final_answer="tracing"))
    result = engine.answer(QUESTION)
    assert result.path == [] and "Toronto Coach Terminal" in result.final_content
    assert "main intercity bus station" in llm.calls[-1][0]["content"]


def test_a_round_after_feedback_begins_with_the_settled_steps_already_written():
    # With reasoning.prefill_settled the model continues after the steps IR settled instead of
    # copying them out again: they are evaluated, not decoded, and not checked a second time.
    rewritten = DIALOGUES["corrected"]
    settled = chain((Q1, "Kevin Drew"), (Q2, "Toronto"), final=None)
    prefilled = [rewritten[0], chain((Q1, "Kevin Drew"), (Q2, "Toronto"), (Q3, "Toronto Coach Terminal")), FINAL]
    copied, _ = _answer(ScriptedReplyLLM(prefilled), "stepwise")  # the model copies them out itself
    llm = ScriptedReplyLLM(prefilled)
    result, events = _answer(llm, "stepwise", prefill_settled=True)
    assert _path(result) == _path(copied) and result.stop_reason == copied.stop_reason == "finish"
    first_of_round2 = next(call for call in llm.calls if len(call) == 4)
    assert first_of_round2[-1] == {"role": "assistant", "content": settled + "\n[Query 3]:"}
    second = result.branches[1]
    assert [(n.query, n.llm_answer, n.decision) for n in second.nodes] == [
        (Q1, "Kevin Drew", DECISION_DUPLICATE), (Q2, "Toronto", DECISION_DUPLICATE), (Q3, "Toronto Coach Terminal", DECISION_PASS)]
    assert second.raw_text == chain((Q1, "Kevin Drew"), (Q2, "Toronto"), (Q3, "Toronto Coach Terminal"), final=None)
    assert result.tokens_by_phase["chain"][1] < copied.tokens_by_phase["chain"][1]
    # The tree shows the settled steps at once, as already processed.
    shown = [e for e in events if isinstance(e, NodeChecked) and e.round == 2]
    assert [e.node.decision for e in shown] == [DECISION_DUPLICATE, DECISION_DUPLICATE, DECISION_PASS]


def test_a_settled_answer_over_several_lines_is_prefilled_on_one_line():
    from searchain.reader.base import ReaderResult

    class Spanning:  # IR's answer holds a line break, as a span across a passage's lines may
        threshold = 0.5

        def read(self, query, title, text):
            if query == Q1:
                return ReaderResult(answer="Kevin\nDrew", confidence=0.9, start=0, end=0, threshold=0.5)
            return ReaderResult(answer="", confidence=0.0, start=0, end=0, threshold=0.5)

    script = [chain((Q1, None)), chain((Q1, "Kevin Drew"), (Q2, "Toronto")), FINAL]
    llm = ScriptedReplyLLM(script)
    engine = SearChainEngine(llm, _retriever(), Spanning(), embedder=HashingEmbedder(),
                             settings=loop_settings(prefill_settled=True))
    result = engine.answer(QUESTION)
    assert [call[-1]["content"] for call in llm.calls if len(call) == 4][0] == f"[Query 1]: {Q1}\n[Answer 1]: Kevin Drew\n[Query 2]:"
    assert [n.query for n in result.branches[1].nodes] == [Q1, Q2] and llm.remaining == 0


def test_the_streamed_chain_reads_as_written_headers_included():
    """The headers the writer writes (not decoded) stream with the model's text, so a view of
    the streamed chain shows "[Query 2]: ..." and not the query alone after the last answer."""
    from searchain.reasoning.events import TokenGenerated

    result, events = _answer(ScriptedReplyLLM(DIALOGUES["passes"]), "stepwise")
    streamed = "".join(e.text for e in events if isinstance(e, TokenGenerated) and e.phase == "chain")
    raw = result.branches[0].raw_text
    assert streamed.rstrip("\n") == raw and raw.startswith("[Query 1]:") and "\n[Query 3]:" in raw
