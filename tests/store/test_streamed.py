"""An answer saved while it streams (store.streamed): what the app and `ask --chat` share."""

import pytest

from searchain.errors import Cancelled, ModelError
from searchain.reasoning.events import PHASE_REWRITE, TokenGenerated
from searchain.store import STATE_CANCELLED, STATE_COMPLETE, STATE_FAILED, answer_while_saving


def _answer_streaming(tokens, then=None, result=None):
    """An engine stand-in: streams ``tokens`` ((phase, text) pairs) through ``relay``, then raises
    ``then`` or returns ``result``."""
    def answer(relay):
        for phase, text in tokens:
            relay(TokenGenerated(text, phase))
        if then is not None:
            raise then
        return result
    return answer


def _message(store, cid, mid):
    return {m.id: m for m in store.get_conversation(cid).messages}[mid]


def test_a_failure_keeps_the_last_phases_text_and_the_reason_with_its_hint(conversation_store, sample_run):
    s = conversation_store
    cid = s.create_conversation()
    mid = s.begin_answer(cid, sample_run)
    seen = []
    tokens = [(PHASE_REWRITE, "Who is X?"), ("chain", "[Query 1] "), ("final", "Van "), ("final", "Hook")]
    with pytest.raises(ModelError):
        answer_while_saving(s, mid, _answer_streaming(tokens, ModelError("The server stopped.", hint="Start it.")),
                            seen.append)
    m = _message(s, cid, mid)
    # the rewrite is not answer text, a new phase starts the text over, every event is relayed
    assert (m.state, m.content, m.error) == (STATE_FAILED, "Van Hook", "The server stopped. Start it.")
    assert len(seen) == len(tokens)


def test_a_cancel_keeps_the_text_and_a_finished_answer_is_saved(conversation_store, sample_run, sample_result):
    s = conversation_store
    cid = s.create_conversation()
    cancelled = s.begin_answer(cid, sample_run)
    with pytest.raises(Cancelled):
        answer_while_saving(s, cancelled, _answer_streaming([("final", "Mount")], Cancelled()))
    done = s.begin_answer(cid, sample_run)
    assert answer_while_saving(s, done, _answer_streaming([("final", "x")], result=sample_result)) is sample_result
    assert (_message(s, cid, cancelled).state, _message(s, cid, cancelled).content) == (STATE_CANCELLED, "Mount")
    assert _message(s, cid, done).state == STATE_COMPLETE
    assert _message(s, cid, done).content == sample_result.final_content
