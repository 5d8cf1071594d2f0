"""Faults: locked, damaged, full, unwritable. Each gives a clear StoreError and loses nothing."""

import json
import sqlite3

import pytest

from searchain.errors import StoreError
from searchain.store import ConversationStore
from searchain.store.connection import set_aside


def _fill(store, sample_result, sample_run):
    cid = store.create_conversation("kept")
    store.add_user_message(cid, sample_result.question)
    mid = store.begin_answer(cid, sample_run)
    store.finish_answer(mid, sample_result)
    return cid


# ---- locked --------------------------------------------------------------------------------

def test_locked_database_retries_then_explains(tmp_path, sample_result, sample_run):
    path = tmp_path / "c.db"
    store = ConversationStore.open(path, busy_timeout=0.05, retries=2)
    cid = _fill(store, sample_result, sample_run)
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another program holds the write lock
    try:
        with pytest.raises(StoreError, match="locked by another program") as info:
            store.add_user_message(cid, "blocked question")
        assert "Close other SearChain" in str(info.value)
        # Reading still works while another program writes (WAL).
        assert store.get_conversation(cid).message_count == 2
        # Opening still works too: nothing to migrate, so no write lock is needed.
        ConversationStore.open(path, busy_timeout=0.05, retries=0).close()
    finally:
        other.execute("ROLLBACK")
        other.close()
    store.add_user_message(cid, "now it goes through")
    assert store.get_conversation(cid).message_count == 3
    store.close()


# ---- damaged -------------------------------------------------------------------------------

def _assert_backup_and_refusal(path, original_bytes):
    with pytest.raises(StoreError, match="is damaged") as info:
        ConversationStore.open(path)
    message = str(info.value)
    backups = list(path.parent.glob(path.name + ".damaged-*"))
    assert len(backups) == 1
    assert str(backups[0]) in message and "start with an empty history" in message
    assert backups[0].read_bytes() == original_bytes
    assert path.read_bytes() == original_bytes  # the original is left for the user to decide
    return backups[0]


def test_a_file_that_is_not_a_database_is_kept_and_explained(tmp_path):
    path = tmp_path / "c.db"
    garbage = b"these are not the chats you are looking for\n" * 200
    path.write_bytes(garbage)
    _assert_backup_and_refusal(path, garbage)


def test_opening_a_damaged_file_again_keeps_one_copy_until_it_changes(tmp_path):
    """Four commands on the same damaged file made four full copies; one is enough."""
    path = tmp_path / "c.db"
    path.write_bytes(b"not a database\n" * 500)
    first = _assert_backup_and_refusal(path, path.read_bytes())
    for _ in range(3):
        with pytest.raises(StoreError, match=str(first.name)):
            ConversationStore.open(path)
    assert list(path.parent.glob(path.name + ".damaged-*")) == [first]
    # Damaged differently (another write, another WAL): that state is kept as well.
    path.write_bytes(b"still not a database\n" * 500)
    with pytest.raises(StoreError, match="is damaged"):
        ConversationStore.open(path)
    backups = sorted(path.parent.glob(path.name + ".damaged-*"))
    assert len(backups) == 2 and {b.read_bytes() for b in backups} == {
        b"not a database\n" * 500, b"still not a database\n" * 500}


def test_corrupted_pages_are_detected_at_open(tmp_path, sample_result, sample_run):
    path = tmp_path / "c.db"
    with ConversationStore.open(path) as store:
        for _ in range(20):
            _fill(store, sample_result, sample_run)
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 6 * page
    for p in range(2, len(data) // page):  # keep the header page, trample the b-tree pages
        data[p * page + 8: p * page + 64] = b"\xa5" * 56
    path.write_bytes(bytes(data))
    _assert_backup_and_refusal(path, bytes(data))
    # Starting fresh: the damaged file is moved aside (not deleted) and a new one opens.
    kept = set_aside(path)
    assert kept.read_bytes() == bytes(data)
    with ConversationStore.open(path) as store:
        assert store.list_conversations() == []


# ---- disk full -----------------------------------------------------------------------------

def test_disk_full_loses_nothing_committed(conversation_store, sample_result, sample_run):
    s = conversation_store
    cid = _fill(s, sample_result, sample_run)
    before = s.get_conversation(cid)
    pages = s.db.execute("PRAGMA page_count").fetchone()[0]
    s.db.execute(f"PRAGMA max_page_count = {pages + 2}")  # simulate a nearly full disk
    with pytest.raises(StoreError, match="disk holding the conversation database is full"):
        s.add_user_message(cid, "x" * 200_000)
    doc = s.export_json([cid])
    with pytest.raises(StoreError, match="is full"):
        for _ in range(20):
            s.import_json(doc)  # grows until the "disk" is full; the failing import is whole
    assert s.get_conversation(cid) == before
    imported = [c for c in s.list_conversations() if c.id != cid]
    assert all(c.message_count == 2 for c in imported)  # no half-imported conversation
    s.db.execute("PRAGMA max_page_count = 1073741823")  # space freed: writes work again
    s.add_user_message(cid, "after the disk was cleaned up")
    assert s.get_conversation(cid).message_count == 3


# ---- export / import -----------------------------------------------------------------------

def test_unwritable_export_paths_raise_store_error(conversation_store, tmp_path, sample_result,
                                                  sample_run):
    cid = _fill(conversation_store, sample_result, sample_run)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="Cannot write the export to .*a-file/out.md"):
        conversation_store.export_markdown_file(blocker / "out.md", [cid])
    with pytest.raises(StoreError, match="it is a folder"):
        conversation_store.export_json_file(tmp_path, [cid])
    out = conversation_store.export_json_file(tmp_path / "sub" / "chats.json", [cid])
    assert json.loads(out.read_text())["conversations"][0]["title"] == "kept"
    assert [p.name for p in out.parent.iterdir()] == ["chats.json"]  # no temp file left


def test_import_errors_name_the_bad_place(conversation_store, tmp_path, sample_result,
                                          sample_run):
    s = conversation_store
    cid = _fill(s, sample_result, sample_run)
    doc = s.export_json([cid])
    doc["conversations"].append(json.loads(json.dumps(doc["conversations"][0])))
    doc["conversations"][1]["messages"][1]["result"]["references"][0]["span"] = [1, "x"]
    with pytest.raises(StoreError,
                       match=r"conversations\[1\]\.messages\[1\]\.result\.references\[0\]\.span"):
        s.import_json(doc)
    doc["conversations"][1]["messages"][0]["role"] = "robot"
    with pytest.raises(StoreError, match=r"messages\[0\]\.role must be one of user, assistant"):
        s.import_json(doc)
    with pytest.raises(StoreError, match="file.format"):
        s.import_json({"format": "something-else", "version": 1, "conversations": []})
    with pytest.raises(StoreError, match="must be an object"):
        s.import_json([1, 2])
    assert [c.id for c in s.list_conversations()] == [cid]  # nothing half-imported
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "searchain-conversations",\n "version": 1,,}')
    with pytest.raises(StoreError, match=r"bad.json is not valid JSON: .*line 2"):
        s.import_json_file(bad)
    with pytest.raises(StoreError, match="Cannot read the import file"):
        s.import_json_file(tmp_path / "missing.json")


def test_an_unusable_database_path_is_explained(tmp_path):
    folder = tmp_path / "a-folder.db"
    folder.mkdir()
    with pytest.raises(StoreError, match="Cannot write the conversation database .*a-folder.db"):
        ConversationStore.open(folder)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    with pytest.raises(StoreError, match="Cannot create the folder"):
        ConversationStore.open(blocker / "sub" / "c.db")
