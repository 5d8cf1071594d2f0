"""What the store keeps for follow-up questions: the earlier turns, and the question as searched."""

import copy
import json
import sqlite3

import pytest

from searchain.errors import StoreError
from searchain.reasoning.followup import PriorTurn
from searchain.store import ConversationStore
from searchain.store import schema
from searchain.store.markdown import conversation_markdown
from tests.store.old_layout import build_old


def _exchange(store, cid, run, question, result=None, fail=False):
    store.add_user_message(cid, question)
    mid = store.begin_answer(cid, run)
    if fail:
        store.fail_answer(mid, "model crashed", partial_text="Hal")
    else:
        store.finish_answer(mid, result)
    return mid


def _answer(sample_result, question, text, standalone=None):
    r = copy.deepcopy(sample_result)
    r.question, r.final_content, r.standalone_question = question, text, standalone
    return r


def test_prior_turns_are_the_last_answered_ones_oldest_first(conversation_store, sample_result, sample_run):
    s = conversation_store
    cid = s.create_conversation("chat")
    assert s.prior_turns(cid, 3) == []
    for n in range(4):
        _exchange(s, cid, sample_run, f"Question {n}?", _answer(sample_result, f"Question {n}?", f"Answer {n} [1]."))
    _exchange(s, cid, sample_run, "Broken question?", fail=True)  # nothing a follow-up can use
    s.add_user_message(cid, "Unanswered question?")  # e.g. the app was killed before answering
    assert s.prior_turns(cid, 2) == [PriorTurn("Question 2?", "Answer 2 [1]."),
                                     PriorTurn("Question 3?", "Answer 3 [1].")]
    assert [t.question for t in s.prior_turns(cid, 10)] == [f"Question {n}?" for n in range(4)]
    assert s.prior_turns(cid, 0) == []
    other = s.create_conversation("other")
    assert s.prior_turns(other, 3) == []  # turns never leak across conversations
    with pytest.raises(StoreError, match="no conversation"):
        s.prior_turns(9999, 3)


def test_standalone_question_round_trips_through_db_json_and_markdown(tmp_path, sample_result, sample_run):
    path = tmp_path / "c.db"
    follow = _answer(sample_result, "Where was he born?", "He was born in Toronto [1].",
                     standalone="Where was Kevin Drew born?")
    with ConversationStore.open(path) as s:
        cid = s.create_conversation("chat")
        _exchange(s, cid, sample_run, follow.question, follow)
    with ConversationStore.open(path) as s:
        conv = s.get_conversation(cid)
        assert conv.messages[1].result == follow
        assert conv.messages[1].result.standalone_question == "Where was Kevin Drew born?"
        exported = json.loads(json.dumps(s.export_json([cid])))
        (new_id,) = s.import_json(exported)
        assert s.get_conversation(new_id).messages[1].result == follow
        # Exports written before follow-ups existed have no such key: they import as "as typed".
        for conversation in exported["conversations"]:
            for message in conversation["messages"]:
                if message["result"]:
                    del message["result"]["standalone_question"]
        (old_id,) = s.import_json(exported)
        assert s.get_conversation(old_id).messages[1].result.standalone_question is None
    md = conversation_markdown(conv)
    assert "*Answered as: Where was Kevin Drew born?*" in md
    assert md.index("## Question") < md.index("Answered as") < md.index("He was born in Toronto")


def test_answers_saved_before_v4_load_as_answered_as_typed(tmp_path, sample_result, sample_run):
    path = tmp_path / "old.db"
    build_old(path, 3, sample_result)  # v3: results had no standalone_question column
    with ConversationStore.open(path) as s:
        assert s.schema_version == schema.CURRENT_VERSION
        result = s.get_conversation(7).messages[1].result
        assert result == sample_result and result.standalone_question is None
