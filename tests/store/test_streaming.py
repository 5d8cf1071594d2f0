"""Streaming answers: checkpoints are throttled, yet held-back text always reaches the disk."""

import sqlite3
import time

import pytest

from searchain.errors import StoreError
from searchain.store import STATE_COMPLETE, STATE_FAILED, ConversationStore


def _content_on_disk(path, message_id):
    """What another process would read now (a separate connection)."""
    conn = sqlite3.connect(path)
    try:
        return conn.execute("SELECT content FROM messages WHERE id = ?", (message_id,)).fetchone()[0]
    finally:
        conn.close()


def _wait_until(predicate, limit=30.0):
    """Wait for a background write; the limit only stops a broken test from hanging."""
    deadline = time.monotonic() + limit
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def streaming(tmp_path, sample_run):
    def make(interval):
        store = ConversationStore.open(tmp_path / "c.db", checkpoint_interval=interval)
        cid = store.create_conversation()
        store.add_user_message(cid, "Where is Van Hook Township?")
        return store, store.begin_answer(cid, sample_run)
    opened = []
    yield lambda interval: opened.append(make(interval)) or opened[-1]
    for store, _ in opened:
        store.close()


def test_without_throttle_every_checkpoint_is_written(streaming, tmp_path):
    store, mid = streaming(0.0)
    for text in ("Van", "Van Hook", "Van Hook is in"):
        assert store.checkpoint_answer(mid, text) is True
        assert _content_on_disk(tmp_path / "c.db", mid) == text


def test_throttled_text_is_held_back_then_written_by_the_timer(streaming, tmp_path):
    store, mid = streaming(0.2)
    written = [store.checkpoint_answer(mid, "Van" + " Hook" * i) for i in range(50)]
    assert written.count(True) < 5  # 50 tokens in well under a second: a handful of writes
    # The last text is written even though no further token arrives.
    assert _wait_until(lambda: _content_on_disk(tmp_path / "c.db", mid) == "Van" + " Hook" * 49)


def test_pending_text_is_kept_by_fail_and_by_close(streaming, tmp_path, sample_result):
    store, failed = streaming(3600.0)  # the timer never fires during this test
    assert store.checkpoint_answer(failed, "Van Hook is") is False
    assert _content_on_disk(tmp_path / "c.db", failed) == ""
    store.fail_answer(failed, "out of memory")
    msg = store.get_message(failed)
    assert (msg.state, msg.content, msg.error) == (STATE_FAILED, "Van Hook is", "out of memory")

    cid = store.create_conversation()
    held = store.begin_answer(cid, msg.run)
    store.checkpoint_answer(held, "Mountrail")
    store.close()
    assert _content_on_disk(tmp_path / "c.db", held) == "Mountrail"


def test_finish_replaces_the_partial_text(streaming, sample_result):
    store, mid = streaming(0.0)
    store.checkpoint_answer(mid, "partial")
    store.finish_answer(mid, sample_result)
    msg = store.get_message(mid)
    assert (msg.state, msg.content) == (STATE_COMPLETE, sample_result.final_content)
    with pytest.raises(StoreError, match="not an answer being generated"):
        store.checkpoint_answer(mid, "late token")


def test_deleting_a_streaming_chat_stops_its_checkpoints(streaming):
    store, mid = streaming(3600.0)
    assert store.checkpoint_answer(mid, "held back") is False
    store.delete(store.list_conversations()[0].id)
    with pytest.raises(StoreError, match=f"no message with id {mid}"):
        store.checkpoint_answer(mid, "next token")
    store.close()  # nothing held back for the deleted message: closing does not fail
