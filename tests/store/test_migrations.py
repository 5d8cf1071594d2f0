"""Forward migrations: a database left by every earlier schema version opens with its data."""

import sqlite3

import pytest

from searchain.errors import StoreError
from searchain.store import ConversationStore
from searchain.store import schema
from tests.store.old_layout import build_old


def _build_old(path, version, sample_result):
    build_old(path, version, sample_result)


@pytest.mark.parametrize("version", range(schema.CURRENT_VERSION))
def test_every_earlier_version_migrates_with_its_data(tmp_path, sample_result, sample_run,
                                                      version):
    path = tmp_path / "old.db"
    _build_old(path, version, sample_result)
    with ConversationStore.open(path) as store:
        assert store.schema_version == schema.CURRENT_VERSION
        if version >= 1:
            conv = store.get_conversation(7)
            assert conv.title == "Old chat" and conv.message_count == 2
            assert conv.messages[1].result == sample_result
            assert conv.messages[1].run.model == "m.gguf"
            # Messages written before search existed are found (v2 indexes them).
            assert [h.message_id for h in store.search("Van Hook Township")] == [70, 71]
        # And the migrated database takes new data like a fresh one.
        cid = store.create_conversation("new")
        store.add_user_message(cid, "fresh glacier question")
        assert [h.conversation_id for h in store.search("glacier")] == [cid]
        assert store.list_conversations()[0].id == cid
        assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert store.db.execute("PRAGMA foreign_keys").fetchone()[0] == 1


def test_a_failing_step_leaves_the_previous_version_intact(tmp_path, monkeypatch,
                                                          sample_result):
    path = tmp_path / "old.db"
    _build_old(path, 1, sample_result)

    def broken_step(conn):
        schema._statements(schema._V2_SEARCH)(conn)
        raise sqlite3.OperationalError("simulated crash in the middle of a migration")

    monkeypatch.setattr(schema, "MIGRATIONS", [schema.MIGRATIONS[0], broken_step,
                                               *schema.MIGRATIONS[2:]])
    with pytest.raises(StoreError, match="simulated crash"):
        ConversationStore.open(path)
    conn = sqlite3.connect(path)
    assert schema.user_version(conn) == 1
    assert "messages_fts" not in {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    monkeypatch.undo()
    with ConversationStore.open(path) as store:
        assert store.schema_version == schema.CURRENT_VERSION
        assert store.get_conversation(7).messages[1].result == sample_result


def test_newer_database_is_refused_untouched(tmp_path):
    path = tmp_path / "new.db"
    ConversationStore.open(path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {schema.CURRENT_VERSION + 1}")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="newer SearChain"):
        ConversationStore.open(path)
    assert schema.user_version(sqlite3.connect(path)) == schema.CURRENT_VERSION + 1


def test_listing_uses_the_v3_index(conversation_store):
    plan = " ".join(str(r) for r in conversation_store.db.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM conversations ORDER BY updated_at DESC, id DESC"))
    assert "conversations_by_update" in plan
