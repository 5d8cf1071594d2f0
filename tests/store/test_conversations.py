"""Conversations: create, list, rename, delete (with everything that belongs to them)."""

import pytest

from searchain.errors import StoreError
from searchain.store import STATE_CANCELLED, STATE_FAILED, STATE_STREAMING, title_from_question


def _table_counts(store):
    return {t: store.db[t].count for t in
            ("conversations", "messages", "runs", "results", "branches", "nodes", "citations")}


def test_list_is_newest_first_with_counts_and_preview(conversation_store):
    s = conversation_store
    a = s.create_conversation("First")
    b = s.create_conversation("Second")
    s.add_user_message(a, "What is the seat of Mountrail County?")  # a becomes the newest
    listed = s.list_conversations()
    assert [c.id for c in listed] == [a, b]
    assert listed[0].message_count == 1
    assert listed[0].preview == "What is the seat of Mountrail County?"
    assert listed[1].preview == "" and listed[1].message_count == 0
    assert [c.id for c in s.list_conversations(limit=1, offset=1)] == [b]


def test_preview_is_cut_to_a_line_length(conversation_store):
    cid = conversation_store.create_conversation()
    conversation_store.add_user_message(cid, "word " * 200)
    assert len(conversation_store.list_conversations()[0].preview) == 120


def test_a_title_from_a_long_question_ends_at_a_word_and_says_it_was_cut():
    question = "Who designed the bridge in the hometown of the author of The Salt Ledger?"
    title = title_from_question(question)
    assert title == "Who designed the bridge in the hometown of the author of…"
    assert len(title) <= 60 and question.startswith(title[:-1])
    assert title_from_question("  Who is\n Kate   Millett? ") == "Who is Kate Millett?"
    assert title_from_question("x" * 80) == "x" * 59 + "…"  # one long word: cut inside it
    assert title_from_question("   ") == "New chat"


def test_rename_and_title_checks(conversation_store):
    cid = conversation_store.create_conversation()
    conversation_store.rename(cid, "  County   seats ")
    assert conversation_store.get_conversation(cid).title == "County seats"
    with pytest.raises(StoreError, match="title cannot be empty"):
        conversation_store.rename(cid, "   ")
    with pytest.raises(StoreError, match="no conversation with id 999"):
        conversation_store.rename(999, "x")


def test_delete_removes_everything_that_belongs_to_it(conversation_store, sample_result,
                                                      sample_run):
    s = conversation_store
    keep = s.create_conversation("keep")
    s.add_user_message(keep, "kept question")
    gone = s.create_conversation("gone")
    s.add_user_message(gone, sample_result.question)
    mid = s.begin_answer(gone, sample_run)
    s.finish_answer(mid, sample_result)
    assert _table_counts(s)["citations"] == 2
    s.delete(gone)
    counts = _table_counts(s)
    assert counts == {"conversations": 1, "messages": 1, "runs": 0, "results": 0,
                      "branches": 0, "nodes": 0, "citations": 0}
    assert s.search("Stanley") == []
    with pytest.raises(StoreError, match="no conversation with id"):
        s.get_conversation(gone)
    with pytest.raises(StoreError, match="no conversation with id"):
        s.delete(gone)


def test_messages_need_an_existing_conversation_and_text(conversation_store, sample_run):
    with pytest.raises(StoreError, match="no conversation with id 42"):
        conversation_store.add_user_message(42, "hello")
    with pytest.raises(StoreError, match="no conversation with id 42"):
        conversation_store.begin_answer(42, sample_run)
    cid = conversation_store.create_conversation()
    with pytest.raises(StoreError, match="cannot be empty"):
        conversation_store.add_user_message(cid, " \n")
    assert conversation_store.get_conversation(cid).messages == []


def test_fail_and_cancel_keep_partial_text(conversation_store, sample_run, sample_result):
    s = conversation_store
    cid = s.create_conversation()
    failed = s.begin_answer(cid, sample_run)
    s.fail_answer(failed, "llama.cpp ran out of memory", partial_text="Van Hook is in")
    cancelled = s.begin_answer(cid, sample_run)
    s.cancel_answer(cancelled, partial_text="Mount")
    streaming = s.begin_answer(cid, sample_run)
    msgs = {m.id: m for m in s.get_conversation(cid).messages}
    assert (msgs[failed].state, msgs[failed].content, msgs[failed].error) == (
        STATE_FAILED, "Van Hook is in", "llama.cpp ran out of memory")
    assert (msgs[cancelled].state, msgs[cancelled].content) == (STATE_CANCELLED, "Mount")
    assert msgs[streaming].state == STATE_STREAMING and msgs[streaming].run == sample_run
    # A finished answer cannot be finished again, nor a user message be answered into.
    with pytest.raises(StoreError, match="not an answer being generated"):
        s.finish_answer(failed, sample_result)
    user = s.add_user_message(cid, "q")
    with pytest.raises(StoreError, match="user message"):
        s.checkpoint_answer(user, "x")
    with pytest.raises(StoreError, match="user message"):
        s.cancel_answer(user)


def test_closed_store_says_so(tmp_path):
    from searchain.store import ConversationStore

    store = ConversationStore.open(tmp_path / "c.db")
    store.close()
    store.close()  # twice is fine
    with pytest.raises(StoreError, match="is closed"):
        store.list_conversations()


def test_typical_answer_time_is_the_median_of_recent_finished_answers_of_that_model_and_mode(
        conversation_store, sample_run, sample_result):
    from dataclasses import replace

    s = conversation_store
    cid = s.create_conversation()

    def answer(seconds, run=sample_run, end="finish"):
        mid = s.begin_answer(cid, run)
        if end == "finish":
            s.finish_answer(mid, replace(sample_result, seconds=seconds))
        else:
            s.fail_answer(mid, "broke")
    answer(10.0)
    answer(30.0)
    assert s.typical_answer_seconds(sample_run.model, "searchain") is None  # two say too little
    answer(500.0, end="fail")  # no result: not counted
    answer(900.0, run=replace(sample_run, mode="rag"))
    answer(700.0, run=replace(sample_run, model="other.gguf"))
    answer(20.0)
    assert s.typical_answer_seconds(sample_run.model, "searchain") == 20.0
    for seconds in (40.0, 40.0, 40.0):
        answer(seconds)
    assert s.typical_answer_seconds(sample_run.model, "searchain", recent=3) == 40.0  # the latest
    assert s.typical_answer_seconds(sample_run.model, "searchain") == 35.0  # 10 20 30 40 40 40
    assert s.typical_answer_seconds("nothing.gguf", "searchain") is None
