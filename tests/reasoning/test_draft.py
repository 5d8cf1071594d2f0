"""SearChain's draft (#37, ``reasoning.draft_answer``): plain RAG's answer over the question's
passages, written before the chain and shown while the chain is checked. The final answer reads
those passages and the path's: when the path adds none, its prompt is the draft's and the draft
is the answer (no second call); otherwise its prompt begins as the draft's did."""

from dataclasses import replace

import pytest

from searchain.config import ReasoningSettings
from searchain.llm.fakes.scripted import ScriptedLLM, ScriptedReplyLLM
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.events import (
    PHASE_DRAFT, PHASE_FINAL, ChainDrafted, DraftStarted, NodeChecked, TokenGenerated, streamed_text_action,
)
from searchain.reasoning.inmemory import InMemoryRetriever, LexicalReader
from searchain.store.streamed import PartialText
from tests.fixtures.reasoning import PASSAGES, Q1, Q2, Q3, QUESTION, HashingEmbedder, chain, loop_settings

DRAFT = "Greyhound buses leave from the Toronto Coach Terminal [3]. So the final answer is Toronto Coach Terminal."
STEPS = chain((Q1, "Kevin Drew"), (Q2, "Toronto"), (Q3, "Toronto Coach Terminal"))
# Steps whose passages (Spirit If..., Toronto Coach Terminal) are the question's own top two.
OWN_STEPS = chain((Q1, "Kevin Drew"), (Q3, "Toronto Coach Terminal"))


def _retriever():
    return InMemoryRetriever(list(PASSAGES))


def _reader():
    return LexicalReader()


def _engine(llm, retriever, reader, **settings):
    return SearChainEngine(llm, retriever, reader, embedder=HashingEmbedder(),
                           settings=replace(ReasoningSettings(), **settings))


@pytest.mark.parametrize("model, after_first_step", [
    (ScriptedReplyLLM, True),  # a chain written step by step: its first step, then the draft
    (ScriptedReplyLLM, False),
    (ScriptedLLM, True),  # written whole (a server): the draft first, not after the whole chain
])
def test_a_path_that_adds_no_passage_answers_with_the_draft_itself(retriever, reader, model, after_first_step):
    chain_first = after_first_step and model is ScriptedReplyLLM
    script = [OWN_STEPS, DRAFT] if chain_first else [DRAFT, OWN_STEPS]
    llm = model(script)
    events = []
    result = _engine(llm, retriever, reader, draft_answer=True,
                     draft_after_first_step=after_first_step).answer(QUESTION, on_event=events.append)
    plain_llm = ScriptedLLM([OWN_STEPS, DRAFT])
    # (the plain final answer without the checked steps listed: the draft's prompt is RAG's own)
    plain = _engine(plain_llm, retriever, reader, draft_answer=False, final_steps="off").answer(QUESTION)
    answer_calls = [c for c in llm.calls if c[0]["content"].startswith("Answer the question")]
    assert len(answer_calls) == 1 and len(plain_llm.calls) == 2  # the draft, no final call; chain + final
    assert answer_calls[0] == plain_llm.calls[-1]  # the draft's prompt is the final answer's
    assert (result.final_content, result.references, result.answer) == (plain.final_content, plain.references, plain.answer)
    assert result.answer == "Toronto Coach Terminal" and len(result.path) == 2
    assert "final" not in result.tokens_by_phase and PHASE_DRAFT in result.tokens_by_phase
    # The draft streams before any step is checked: first of all, or after the chain's first step.
    phases = [e.phase for e in events if isinstance(e, TokenGenerated)]
    first_check = next(i for i, e in enumerate(events) if isinstance(e, NodeChecked))
    drafted = [i for i, e in enumerate(events) if isinstance(e, TokenGenerated) and e.phase == PHASE_DRAFT]
    assert drafted and max(drafted) < first_check
    said = [i for i, e in enumerate(events) if isinstance(e, DraftStarted)]
    assert len(said) == 1 and said[0] < min(drafted)  # said once, before its first token
    assert phases[0] == ("chain" if chain_first else PHASE_DRAFT)
    assert 0 <= result.first_answer_seconds <= result.seconds and plain.first_answer_seconds is None
    # The first node is timed either way; it shows before the draft only when written first.
    assert (result.first_node_seconds <= result.first_answer_seconds) == chain_first


def test_a_chain_written_step_by_step_shows_its_first_node_then_the_draft_then_goes_on():
    """The draft comes between the chain's first step and its check; the chain then continues
    its own reply where it stopped (the backend puts its KV state back, llm/llama/prefix_states.py)."""
    llm = ScriptedReplyLLM([STEPS, DRAFT, "Kevin Drew was born in Toronto [2]. So the final answer is Toronto."])
    engine = SearChainEngine(llm, _retriever(), _reader(), embedder=HashingEmbedder(),
                             settings=loop_settings(draft_answer=True, draft_after_first_step=True))
    seen = []

    def record(e):
        if isinstance(e, ChainDrafted):
            seen.append(("step", len(e.branch.nodes)))
        elif isinstance(e, TokenGenerated) and e.phase == PHASE_DRAFT and seen[-1] != "draft":
            seen.append("draft")
        elif isinstance(e, NodeChecked):
            seen.append(("checked", e.node.position))

    result = engine.answer(QUESTION, on_event=record)
    assert seen[:4] == [("step", 1), "draft", ("checked", 0), ("step", 2)]
    assert [n.query for n in result.branches[0].nodes] == [Q1, Q2, Q3] and llm.remaining == 0
    chain_calls = [c for c in llm.calls if c[0]["content"].startswith(llm.calls[0][0]["content"][:40])]
    assert len(chain_calls) >= 3  # step 1, then continued after the draft: nothing written twice
    assert result.first_node_seconds <= result.first_answer_seconds


def test_no_draft_under_the_papers_tracing_or_without_question_passages(retriever, reader):
    trace = "[Final Content]: Greyhound buses leave from the Toronto Coach Terminal [3]."
    for settings in ({"final_answer": "tracing"}, {"question_passages": 0}):
        llm = ScriptedLLM([STEPS, trace])
        result = _engine(llm, retriever, reader, draft_answer=True, **settings).answer(QUESTION)
        assert PHASE_DRAFT not in result.tokens_by_phase and result.first_answer_seconds is None


def test_the_draft_stays_on_screen_and_in_the_saved_text_until_the_final_answer_starts():
    partial = PartialText()
    seen = [partial.add(TokenGenerated(text, phase)) for text, phase in (
        ("Toronto ", PHASE_DRAFT), ("Coach", PHASE_DRAFT), ("[Query 1]", "chain"), ("Kevin", "reader"),
        ("Toronto Coach Terminal", PHASE_FINAL))]
    assert seen == ["Toronto ", "Toronto Coach", None, None, "Toronto Coach Terminal"]  # None: nothing new to save
    assert partial.text == "Toronto Coach Terminal"
    assert streamed_text_action("chain", "reader") == "replace"  # without a draft, as before
    assert streamed_text_action(PHASE_DRAFT, "chain") == "keep"
    assert streamed_text_action(PHASE_FINAL, PHASE_FINAL) == "append"


def test_the_chain_behind_a_draft_writes_nothing_and_a_cancel_keeps_the_draft():
    from searchain.errors import Cancelled
    from searchain.store.streamed import answer_while_saving

    class Store:  # records what the answer saving writes
        def __init__(self):
            self.saved = []

        def checkpoint_answer(self, message_id, text):
            self.saved.append(text)

        def cancel_answer(self, message_id, text):
            self.saved.append(("cancelled", text))

    def answer(relay):
        for text, phase in (("Toronto", PHASE_DRAFT), ("[Query 1]", "chain"), ("Kevin", "reader"), ("[Answer", "chain")):
            relay(TokenGenerated(text, phase))
        raise Cancelled()

    store = Store()
    with pytest.raises(Cancelled):
        answer_while_saving(store, 1, answer)
    assert store.saved == ["Toronto", ("cancelled", "Toronto")]
