"""SearChain's draft (#37, ``reasoning.draft_answer``): plain RAG's answer over the question's
passages, written before the chain and shown while the chain is checked. The final answer reads
those passages and the path's: when the path adds none, its prompt is the draft's and the draft
is the answer (no second call); otherwise its prompt begins as the draft's did."""

from dataclasses import replace

import pytest

from searchain.config import ReasoningSettings
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.events import PHASE_DRAFT, PHASE_FINAL, TokenGenerated, streamed_text_action
from searchain.store.streamed import PartialText
from tests.fixtures.reasoning import Q1, Q2, Q3, QUESTION, HashingEmbedder, chain

DRAFT = "Greyhound buses leave from the Toronto Coach Terminal [3]. So the final answer is Toronto Coach Terminal."
STEPS = chain((Q1, "Kevin Drew"), (Q2, "Toronto"), (Q3, "Toronto Coach Terminal"))
# Steps whose passages (Spirit If..., Toronto Coach Terminal) are the question's own top two.
OWN_STEPS = chain((Q1, "Kevin Drew"), (Q3, "Toronto Coach Terminal"))


def _engine(llm, retriever, reader, **settings):
    return SearChainEngine(llm, retriever, reader, embedder=HashingEmbedder(),
                           settings=replace(ReasoningSettings(), **settings))


def test_a_path_that_adds_no_passage_answers_with_the_draft_itself(retriever, reader):
    llm = ScriptedLLM([DRAFT, OWN_STEPS])
    events = []
    result = _engine(llm, retriever, reader, draft_answer=True).answer(QUESTION, on_event=events.append)
    plain_llm = ScriptedLLM([OWN_STEPS, DRAFT])
    plain = _engine(plain_llm, retriever, reader, draft_answer=False).answer(QUESTION)
    assert len(llm.calls) == 2 and len(plain_llm.calls) == 2  # draft + chain; chain + final
    assert llm.calls[0] == plain_llm.calls[-1]  # the draft's prompt is the final answer's, word for word
    assert (result.final_content, result.references, result.answer) == (plain.final_content, plain.references, plain.answer)
    assert result.answer == "Toronto Coach Terminal" and len(result.path) == 2
    assert "final" not in result.tokens_by_phase and PHASE_DRAFT in result.tokens_by_phase
    # The draft streams first, before any step of the chain.
    phases = [e.phase for e in events if isinstance(e, TokenGenerated)]
    assert phases[0] == PHASE_DRAFT and set(phases[:phases.index("chain")]) == {PHASE_DRAFT}
    assert 0 <= result.first_answer_seconds <= result.seconds and plain.first_answer_seconds is None


def test_a_path_that_adds_passages_gets_a_final_answer_that_begins_as_the_draft_did(retriever, reader):
    final = "Kevin Drew was born in Toronto [2]; buses leave from the Toronto Coach Terminal [3]. " \
            "So the final answer is Toronto Coach Terminal."
    llm = ScriptedLLM([DRAFT, STEPS, final])
    result = _engine(llm, retriever, reader, draft_answer=True, question_passages=1).answer(QUESTION)
    draft_prompt, final_prompt = llm.calls[0][0]["content"], llm.calls[-1][0]["content"]
    shared = draft_prompt.split("\n\nQuestion:")[0]  # the instructions and the question's passage
    assert final_prompt.startswith(shared) and len(final_prompt) > len(draft_prompt)
    assert llm.params[-1].grammar is None and result.tokens_by_phase[PHASE_FINAL][1] > 0
    assert result.answer == "Toronto Coach Terminal"
    # The question's passage was retrieved once, for the draft, and read again by the final answer.
    cited = {r.passage.title for r in result.references}
    assert "Toronto Coach Terminal" in cited and "Kevin Drew" in cited


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
