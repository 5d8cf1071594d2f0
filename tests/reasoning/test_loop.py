"""Algorithm 1 branch by branch, with a scripted LLM, the BM25 retriever and the lexical reader."""

import re

import pytest

from searchain.errors import Cancelled, ConfigError, SearchainError
from searchain.events import CancelToken
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.events import (
    ChainDrafted, ChainGenerated, Done, Failed, FeedbackGiven, NodeChecked, RoundStarted, TokenGenerated,
)
from searchain.reasoning.result import (
    DECISION_COMPLETED, DECISION_CORRECTED, DECISION_DUPLICATE, DECISION_NOT_CONFIRMED, DECISION_PASS,
    DECISION_UNCHECKED, SOURCE_IR_COMPLETED, SOURCE_IR_CORRECTED, SOURCE_LLM_VERIFIED,
)
from tests.fixtures.reasoning import PASSAGES, Q1, Q2, Q3, QUESTION, HashingEmbedder, chain, loop_settings

TRACE = ("[Final Content]: Spirit If... is by Kevin Drew [1]. He was born in Toronto [2]. "
         "Greyhound buses leave from the Toronto Coach Terminal [3]. So the final answer is Toronto Coach Terminal.")


def engine(llm, retriever, reader, **settings):
    return SearChainEngine(llm, retriever, reader, settings=loop_settings(**settings),
                           embedder=HashingEmbedder())


def kinds(events):
    """The loop's steps; streamed output (tokens, the chain's steps as drafted) left out."""
    return [type(e).__name__ for e in events if not isinstance(e, (TokenGenerated, ChainDrafted))]


def test_pass_all_nodes_verified_finishes_in_one_round(retriever, reader):
    llm = ScriptedLLM([chain((Q1, "Kevin Drew"), (Q2, "Toronto"), (Q3, "Toronto Coach Terminal")), TRACE])
    events = []
    result = engine(llm, retriever, reader).answer(QUESTION, on_event=events.append)
    assert result.stop_reason == "finish" and result.rounds == 1
    assert [n.decision for n in result.path] == [DECISION_PASS] * 3
    assert [n.source for n in result.path] == [SOURCE_LLM_VERIFIED] * 3
    assert [n.passage.pid for n in result.path] == ["p1", "p2", "p3"]
    assert kinds(events) == ["RoundStarted", "ChainGenerated", "NodeChecked", "NodeChecked", "NodeChecked", "Done"]
    assert result.answer == "Toronto Coach Terminal"
    assert llm.remaining == 0  # the tracing prompt was the second and last call


def test_correct_confident_reader_disagreeing_gives_correction_and_new_branch(retriever, reader):
    llm = ScriptedLLM([
        chain((Q1, "Kevin Drew"), (Q2, "Vancouver"), (Q3, "Pacific Central Station")),
        chain((Q2, "Toronto"), (Q3, "Toronto Coach Terminal")),
        TRACE,
    ])
    events = []
    result = engine(llm, retriever, reader).answer(QUESTION, on_event=events.append)
    first, second = result.branches
    assert [n.decision for n in first.nodes] == [DECISION_PASS, DECISION_CORRECTED, DECISION_UNCHECKED]
    assert first.nodes[1].reader_answer == "Toronto" and first.nodes[1].confidence > 1.5
    assert second.parent == (1, 1)  # grows from the node that got feedback
    assert [n.decision for n in second.nodes] == [DECISION_DUPLICATE, DECISION_PASS]
    assert [(n.answer, n.source) for n in result.path] == [
        ("Kevin Drew", SOURCE_LLM_VERIFIED), ("Toronto", SOURCE_IR_CORRECTED),
        ("Toronto Coach Terminal", SOURCE_LLM_VERIFIED)]
    feedback = [e for e in events if isinstance(e, FeedbackGiven)]
    assert len(feedback) == 1 and feedback[0].kind == "correction"
    assert '"Toronto"' in feedback[0].text and "Kevin Drew was born in Toronto" in feedback[0].text
    # The whole dialogue is kept: round 2 sees prompt, chain 1 and the feedback.
    round2 = llm.calls[1]
    assert [m["role"] for m in round2] == ["user", "assistant", "user"]
    assert round2[2]["content"] == first.feedback
    assert result.stop_reason == "finish" and result.rounds == 2


def test_unconfident_reader_never_corrects(retriever, reader):
    # The lexical reader's confidence is 2.0 on Q1's passage: above θ=1.5, below θ=2.5.
    llm = ScriptedLLM([chain((Q1, "Owen Pallett")), chain((Q1, "Kevin Drew")), "[Final Content]: Kevin Drew [1]."])
    result = engine(llm, retriever, reader).answer(QUESTION)
    assert result.path[0].decision == DECISION_CORRECTED and result.path[0].answer == "Kevin Drew"
    llm = ScriptedLLM([chain((Q1, "Owen Pallett")), "[Final Content]: Owen Pallett [1]."])
    confident_only = _with_threshold(reader, 2.5)
    result = engine(llm, retriever, confident_only).answer(QUESTION)
    # Not overruled, but not confirmed either: the reader found "Kevin Drew", not "Owen Pallett".
    assert result.path[0].decision == DECISION_NOT_CONFIRMED and result.path[0].answer == "Owen Pallett"


def _with_threshold(reader, theta):
    from searchain.reasoning.inmemory import LexicalReader

    return LexicalReader(threshold=theta)


def test_complete_unsolved_query_always_gets_completion(retriever, reader):
    llm = ScriptedLLM([
        chain((Q1, "Kevin Drew"), (Q2, None), (Q3, "Toronto Coach Terminal")),
        chain((Q2, "Toronto"), (Q3, "Toronto Coach Terminal")),
        TRACE,
    ])
    events = []
    result = engine(llm, retriever, reader, theta=99.0).answer(QUESTION, on_event=events.append)
    node = result.branches[0].nodes[1]
    assert node.unsolved and node.decision == DECISION_COMPLETED and node.source == SOURCE_IR_COMPLETED
    assert node.answer == "Toronto"
    feedback = [e for e in events if isinstance(e, FeedbackGiven)]
    assert [f.kind for f in feedback] == ["completion"]
    assert "You may give your answer" in feedback[0].text


def test_duplicate_queries_are_skipped_by_embedding_similarity(retriever, reader):
    paraphrase = "In which city was Kevin Drew born?"
    llm = ScriptedLLM([
        chain((Q1, "Kevin Drew"), (Q2, "Vancouver")),
        chain((paraphrase, "Vancouver"), (Q3, "Toronto Coach Terminal")),
        TRACE,
    ])
    embedder = HashingEmbedder()
    eng = SearChainEngine(llm, retriever, reader, settings=loop_settings(duplicate_threshold=0.6),
                          embedder=embedder)
    result = eng.answer(QUESTION)
    assert result.branches[1].nodes[0].decision == DECISION_DUPLICATE
    assert embedder.calls >= 1
    # Without duplicate detection the paraphrase is checked (and corrected) again.
    llm = ScriptedLLM(llm.outputs[:2] + [chain((Q3, "Toronto Coach Terminal"))] + [TRACE])
    eng = SearChainEngine(llm, retriever, reader, settings=loop_settings(duplicate_threshold=2.0))
    result = eng.answer(QUESTION)
    assert result.branches[1].nodes[0].decision == DECISION_CORRECTED


def test_r_max_stops_the_loop(retriever, reader):
    # Each round asks a new (non-duplicate) wrong question, so feedback never runs out.
    outputs = [chain((f"Where was Kevin Drew born, version {i}?", f"City {i}")) for i in range(2)] + [TRACE]
    llm = ScriptedLLM(outputs)
    result = engine(llm, retriever, reader, r_max=2, duplicate_threshold=2.0).answer(QUESTION)
    assert result.stop_reason == "r_max" and result.rounds == 2
    assert len(result.branches) == 2 and all(b.feedback for b in result.branches)


def test_identical_chain_after_identical_feedback_stops_early(retriever, reader):
    same = chain((Q1, "Kevin Drew"), (Q2, "Vancouver"))
    llm = ScriptedLLM([same, same, same, same, same, TRACE])
    result = engine(llm, retriever, reader, r_max=5, duplicate_threshold=2.0).answer(QUESTION)
    assert result.stop_reason == "repeated_chain" and result.rounds == 2
    assert llm.remaining == 3  # rounds 3-5 never asked


def test_coq_mode_uses_no_ir_and_keeps_no_marks(reader):
    llm = ScriptedLLM([chain((Q1, "Kevin Drew"), (Q2, "Toronto"))])
    result = SearChainEngine(llm, None, None, settings=loop_settings()).answer(QUESTION, mode="coq")
    assert result.stop_reason == "no_ir" and result.references == []
    assert "[" not in result.final_content and result.answer == "Toronto Coach Terminal"
    assert [n.decision for n in result.path] == [DECISION_UNCHECKED] * 2


def test_direct_and_rag_baselines(retriever):
    llm = ScriptedLLM(["It is the Toronto Coach Terminal. So the final answer is Toronto Coach Terminal."])
    result = SearChainEngine(llm, None, None, settings=loop_settings()).answer(QUESTION, mode="direct")
    assert result.answer == "Toronto Coach Terminal" and result.references == []
    pids = [h.passage.pid for h in retriever.search(QUESTION, k=3)]
    n = pids.index("p3") + 1
    llm = ScriptedLLM([f"Buses leave from the Toronto Coach Terminal [{n}][9]. So the final answer is Toronto Coach Terminal."])
    result = SearChainEngine(llm, retriever, None, settings=loop_settings()).answer(QUESTION, mode="rag")
    assert "[9]" not in result.final_content and [r.mark for r in result.references] == [n]
    assert result.references[0].span_text == "Toronto Coach Terminal"
    assert f"[{n}] Toronto Coach Terminal:" in llm.calls[0][0]["content"]


def test_grammar_is_sent_only_when_enabled_and_supported(retriever, reader):
    outputs = [chain((Q1, "Kevin Drew")), "[Final Content]: Kevin Drew [1]."]
    llm = ScriptedLLM(outputs)
    engine(llm, retriever, reader, final_answer="tracing").answer(QUESTION)
    assert all(p.grammar and "[Final Content]: " in p.grammar for p in llm.params)
    # The passage-style final answer is free text (a one-line grammar cut a 1.5B model's reasoning).
    llm = ScriptedLLM(outputs)
    engine(llm, retriever, reader).answer(QUESTION)
    assert "[Final Content]: " in llm.params[0].grammar and llm.params[-1].grammar is None
    llm = ScriptedLLM(outputs)
    SearChainEngine(llm, retriever, reader, settings=loop_settings(), use_grammar=False).answer(QUESTION)
    assert all(p.grammar is None for p in llm.params) and "\n[Question]" in llm.params[0].stop
    llm = ScriptedLLM(outputs, grammar=False)
    engine(llm, retriever, reader).answer(QUESTION)
    assert all(p.grammar is None for p in llm.params)


def test_events_stream_tokens_by_phase_and_end_with_done(retriever, reader):
    llm = ScriptedLLM([chain((Q1, "Kevin Drew")), "[Final Content]: Kevin Drew [1]."])
    events = list(engine(llm, retriever, reader).iter_answer(QUESTION))
    assert isinstance(events[0], RoundStarted) and isinstance(events[-1], Done)
    chain_text = "".join(e.text for e in events if isinstance(e, TokenGenerated) and e.phase == "chain")
    final_text = "".join(e.text for e in events if isinstance(e, TokenGenerated) and e.phase == "final")
    assert chain_text == llm.outputs[0] and final_text == llm.outputs[1]
    checked = [e for e in events if isinstance(e, NodeChecked)]
    assert checked[0].node.decision == DECISION_PASS
    assert any(isinstance(e, ChainGenerated) for e in events)
    assert events[-1].result.references[0].passage.pid == "p1"


def test_cancel_raises_cancelled_at_the_next_check_point(retriever, reader):
    llm = ScriptedLLM([chain((Q1, "Kevin Drew"), (Q2, "Toronto")), TRACE])
    token = CancelToken()
    seen = []

    def on_event(event):
        seen.append(event)
        if isinstance(event, NodeChecked):
            token.cancel()

    with pytest.raises(Cancelled):
        engine(llm, retriever, reader).answer(QUESTION, on_event=on_event, cancel=token)
    assert sum(isinstance(e, NodeChecked) for e in seen) == 1  # stopped before the second node
    assert not any(isinstance(e, Done) for e in seen)


def test_cancel_during_generation_and_via_closing_the_iterator(retriever, reader):
    llm = ScriptedLLM([chain((Q1, "Kevin Drew")), TRACE])
    token = CancelToken()

    def on_event(event):
        if isinstance(event, TokenGenerated):
            token.cancel()

    with pytest.raises(Cancelled):
        engine(llm, retriever, reader).answer(QUESTION, on_event=on_event, cancel=token)
    llm = ScriptedLLM([chain((Q1, "Kevin Drew")), TRACE])
    outer = CancelToken()
    events = engine(llm, retriever, reader).iter_answer(QUESTION, cancel=outer)
    assert isinstance(next(events), RoundStarted)
    events.close()  # the consumer walked away: the worker is cancelled and joined
    assert not outer.cancelled


def test_bad_inputs_raise_clear_errors(retriever, reader):
    eng = engine(ScriptedLLM([]), retriever, reader)
    with pytest.raises(SearchainError, match="empty"):
        eng.answer("   ")
    with pytest.raises(ConfigError, match="Unknown answering mode 'fast'"):
        eng.answer(QUESTION, mode="fast")
    with pytest.raises(ConfigError, match="needs a corpus"):
        SearChainEngine(ScriptedLLM([]), None, reader, settings=loop_settings()).answer(QUESTION)
    with pytest.raises(ConfigError, match="needs a reader"):
        SearChainEngine(ScriptedLLM([]), retriever, None, settings=loop_settings()).answer(QUESTION)
    events = []
    with pytest.raises(SearchainError, match="ran out of outputs"):
        eng.answer(QUESTION, on_event=events.append)
    assert isinstance(events[-1], Failed) and "ran out" in events[-1].message


def test_passages_for_the_question_itself_can_be_read_and_cited_by_the_final_answer(retriever, reader):
    """final_answer=tracing, question_passages: the tracing prompt also shows the question's own top passages
    (not already on the path), numbered after the path, and a mark on one resolves to it."""
    trace = ("[Final Content]: Spirit If... is by Kevin Drew [1], born in Toronto [2]. The Toronto Coach Terminal "
             "serves Greyhound [3]. So the final answer is Toronto Coach Terminal [9].")
    steps = chain((Q1, "Kevin Drew"), (Q2, "Toronto"), final="So the final answer is Toronto.")
    llm = ScriptedLLM([steps, trace])
    result = engine(llm, retriever, reader, final_answer="tracing", question_passages=2).answer(QUESTION)
    assert [n.passage.pid for n in result.path] == ["p1", "p2"]
    prompt = llm.calls[-1][0]["content"]
    assert "Passages found for the [Question] itself" in prompt and "[Passage 3]: Toronto Coach Terminal:" in prompt
    assert "Spirit If...: Spirit" not in prompt.split("Passages found")[1]  # the path's own are left out
    assert [r.mark for r in result.references] == [1, 2, 3] and "[9]" not in result.final_content
    third = result.references[-1]
    assert third.passage.pid == "p3" and third.query == QUESTION and third.span_text == "Toronto Coach Terminal"
    assert result.answer == "Toronto Coach Terminal"
    # 0, the paper's setting: no passages for the question, and a mark past the path is dropped.
    llm = ScriptedLLM([steps, trace])
    plain = engine(llm, retriever, reader, final_answer="tracing", question_passages=0).answer(QUESTION)
    assert "Passages found" not in llm.calls[-1][0]["content"]
    assert [r.mark for r in plain.references] == [1, 2] and "[3]" not in plain.final_content


def test_the_default_final_answer_reads_rags_passages_and_the_paths(retriever, reader):
    """final_answer=passages: RAG's prompt over the question's top passages, then the path's
    passages not among them; the model's marks name those sources and resolve to them."""
    steps = chain((Q1, "Kevin Drew"), (Q2, "Toronto"), final="So the final answer is Toronto.")
    top = [h.passage.pid for h in retriever.search(QUESTION, k=1)]
    model = ("Let's read the passages step by step:\n1. Spirit If... is by Kevin Drew [2].\n"
             "2. Greyhound buses leave from the Toronto Coach Terminal [1].\nSo the final answer is Toronto Coach Terminal.")
    llm = ScriptedLLM([steps, model])
    result = engine(llm, retriever, reader, question_passages=1).answer(QUESTION)
    prompt = llm.calls[-1][0]["content"]
    assert prompt.startswith("Answer the question using the numbered passages below.")
    shown = re.findall(r"^\[(\d)\] ([^:]+):", prompt, re.MULTILINE)
    on_path = [n.passage for n in result.path]
    assert shown[0][1] == next(p.title for p in PASSAGES if p.pid == top[0])  # the question's first
    assert [t for _, t in shown[1:]] == [p.title for p in on_path if p.pid not in top]
    assert llm.params[-1].grammar is None and result.answer == "Toronto Coach Terminal"
    cited = {r.mark: r.passage.title for r in result.references}
    assert cited == {len(result.path) + 1: shown[0][1], 1 + [p.title for p in on_path].index(shown[1][1]): shown[1][1]}
    assert "\n" not in result.final_content
    with pytest.raises(ConfigError, match="final-answer style"):
        engine(ScriptedLLM([]), retriever, reader, final_answer="essay").answer(QUESTION)  # before any call
