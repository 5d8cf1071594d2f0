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


def _located(result):
    """``result`` citing a ZIM article section and a PDF page (what v7 keeps, and v6 half of)."""
    import dataclasses

    zim = dataclasses.replace(result.references[0].passage, url="https://en.wikipedia.org/wiki/X",
                              section="History > Early years")
    pdf = dataclasses.replace(result.references[1].passage, source="/home/u/report.pdf", page=12,
                              section="3.2 Results")
    result.references[0] = dataclasses.replace(result.references[0], passage=zim)
    result.references[1] = dataclasses.replace(result.references[1], passage=pdf)
    return result


@pytest.mark.parametrize("version", [4, 6])
def test_v4_and_v6_answers_reach_the_current_version_and_take_pages(tmp_path, sample_result, sample_run, version):
    """v4 rows had no url or section, v6 rows have both but no page: after v7 each keeps what it
    had (page None), and a new answer citing a PDF page reloads with it."""
    import dataclasses

    located = _located(dataclasses.replace(sample_result, references=list(sample_result.references)))
    path = tmp_path / "old.db"
    build_old(path, version, located)
    with ConversationStore.open(path) as store:
        assert store.schema_version == schema.CURRENT_VERSION >= 7
        old = store.get_conversation(7).messages[1].result.references
        if version >= 6:  # v6 kept url and section; the page came with v7
            assert (old[0].passage.url, old[0].passage.section) == (
                "https://en.wikipedia.org/wiki/X", "History > Early years")
            assert (old[1].passage.page, old[1].passage.section) == (None, "3.2 Results")
        else:
            assert [(r.passage.url, r.passage.section, r.passage.page) for r in old[:2]] == [
                ("", "", None), ("", "", None)]
        cid = store.create_conversation("new")
        store.add_user_message(cid, located.question)
        mid = store.begin_answer(cid, sample_run)
        store.finish_answer(mid, located)
        assert store.get_conversation(cid).messages[1].result == located
        assert "report.pdf, p. 12 - 3.2 Results" in store.export_markdown(cid)


@pytest.mark.parametrize("version", [1, 7])
def test_chats_saved_before_v8_open_with_no_corpora_chosen_and_can_choose(tmp_path, sample_result, version):
    """v8 (#34) keeps a chat's corpora; an older chat reads as "never chose" (the active
    corpus), and choosing, re-choosing and clearing round-trip."""
    path = tmp_path / "old.db"
    build_old(path, version, sample_result)
    with ConversationStore.open(path) as store:
        assert store.schema_version == schema.CURRENT_VERSION
        assert store.corpora(7) == []
        store.set_corpora(7, ["wiki", " papers ", "wiki", ""])
        assert store.corpora(7) == ["wiki", "papers"]
        assert store.get_conversation(7).messages  # the chat itself is untouched
        exported = store.export_json([7])
        assert exported["conversations"][0]["corpora"] == ["wiki", "papers"]
        (copy,) = store.import_json(exported)
        assert store.corpora(copy) == ["wiki", "papers"]
        store.set_corpora(7, None)
        assert store.corpora(7) == []
        with pytest.raises(StoreError):
            store.corpora(12345)
        with pytest.raises(StoreError):
            store.set_corpora(7, ["a,b"])
