import sqlite3

import pytest

from searchain.corpus.store import PassageStore
from searchain.errors import CorpusError
from searchain.types import Passage


def P(pid, title="T", text="some text", doc_id="", start=0, end=0, corpus="c"):
    return Passage(corpus, pid, title, text, "src", doc_id or pid, start, end)


@pytest.fixture
def store(tmp_path):
    s = PassageStore.open(tmp_path / "c" / "passages.db", create=True)
    yield s
    s.close()


def test_open_missing_without_create_is_a_clear_error(tmp_path):
    with pytest.raises(CorpusError, match="No passage store"):
        PassageStore.open(tmp_path / "nope" / "passages.db")


def test_open_a_file_that_is_not_sqlite_is_a_clear_error(tmp_path):
    bad = tmp_path / "x" / "passages.db"
    bad.parent.mkdir()
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(CorpusError, match="Cannot open passage store"):
        PassageStore.open(bad)


def test_add_get_and_duplicates(store):
    r = store.add([P("a", text="alpha"), P("b", text="beta"), P("a", text="other")])
    assert (r.added, r.duplicates) == (2, 1)
    assert store.count() == 2
    assert store.get("a").text == "alpha"  # first copy wins, nothing overwritten
    assert store.get("b").corpus == "c"
    r = store.add([P("b"), P("c", text="gamma")])
    assert (r.added, r.duplicates) == (1, 1)
    with pytest.raises(CorpusError, match="no passage 'zzz'"):
        store.get("zzz")
    assert store.id_of("zzz") is None


def test_batches_commit_separately(store):
    store.add((P(str(i)) for i in range(1234)), batch_size=100)
    assert store.count() == 1234


def test_ids_ascend_and_are_never_reused(store):
    store.add([P("a"), P("b"), P("c")])
    ids = [store.id_of(p) for p in "abc"]
    assert ids == sorted(ids)
    store.delete(["c"])
    store.add([P("d")])
    assert store.id_of("d") > ids[-1]
    assert store.max_id() >= store.id_of("d")


def test_get_by_ids_keeps_order_and_reports_missing(store):
    store.add([P("a", text="A"), P("b", text="B"), P("c", text="C")])
    ids = [store.id_of(p) for p in "cab"]
    assert [p.text for p in store.get_by_ids(ids + ids[:1])] == ["C", "A", "B", "C"]
    with pytest.raises(CorpusError, match="index is out of date|no passages with ids"):
        store.get_by_ids([999999])


def test_iter_batches_ascending_after_id(store):
    store.add(P(f"p{i}") for i in range(10))
    batches = list(store.iter_batches(batch_size=4))
    assert [len(b) for b in batches] == [4, 4, 2]
    flat = [i for b in batches for i, _ in b]
    assert flat == sorted(flat)
    rest = [i for b in store.iter_batches(after_id=flat[5], batch_size=100) for i, _ in b]
    assert rest == flat[6:]


def test_document_returns_passages_in_document_order(store):
    store.add([P("d#1", doc_id="d", start=50, text="second"), P("d#0", doc_id="d", start=0, text="first"),
               P("e#0", doc_id="e", text="other")])
    assert [p.text for p in store.document("d")] == ["first", "second"]
    assert store.document("missing") == []


def test_fts_follows_inserts_and_deletes_with_bm25_weights(store):
    store.add([P("a", title="Heron", text="a wading bird of the marshes"),
               P("b", title="Bridge", text="three arches of stone over the river"),
               P("c", title="Bridges", text="herons nesting under bridges")])
    q = ("SELECT p.pid FROM passages_fts JOIN passages p ON p.id = passages_fts.rowid "
         "WHERE passages_fts MATCH ? ORDER BY bm25(passages_fts, 2.0, 1.0)")
    assert [r[0] for r in store.db.execute(q, ["heron"]).fetchall()] == ["a", "c"]  # porter: herons
    assert [r[0] for r in store.db.execute(q, ["arch"]).fetchall()] == ["b"]
    store.delete(["a"])
    assert [r[0] for r in store.db.execute(q, ["heron"]).fetchall()] == ["c"]
    assert store.fts_integrity_ok()


def test_fts_removes_diacritics(store):
    store.add([P("a", title="Café", text="Crème brûlée in Zürich")])
    rows = store.db.execute("SELECT rowid FROM passages_fts WHERE passages_fts MATCH 'zurich creme'").fetchall()
    assert len(rows) == 1


def test_meta_round_trips_json(store):
    assert store.meta_get("missing", 7) == 7
    store.meta_set("sources", [{"path": "/x", "n": 2}])
    assert store.meta_get("sources") == [{"path": "/x", "n": 2}]


def test_sqlite_utils_sees_the_fts_table(store):
    assert store.db["passages"].detect_fts() == "passages_fts"
    assert store.db["passages"].pks == ["id"]


def test_full_disk_is_a_clear_error_and_keeps_committed_batches(tmp_path):
    store = PassageStore.open(tmp_path / "c" / "passages.db", create=True)
    store.add(P(f"keep{i}", text="x " * 50) for i in range(50))
    pages = store.conn.execute("PRAGMA page_count").fetchone()[0]
    store.conn.execute(f"PRAGMA max_page_count={pages + 3}")
    big = (P(f"big{i}", text="word " * 400) for i in range(2000))
    with pytest.raises(CorpusError, match="Disk full") as info:
        store.add(big, batch_size=5)
    assert "continues where it stopped" in str(info.value)
    store.close()
    reopened = PassageStore.open(tmp_path / "c" / "passages.db")
    kept = reopened.count()
    assert kept >= 50 and reopened.get("keep49").text.startswith("x")
    assert reopened.fts_integrity_ok()
    reopened.close()


def test_rebuild_style_add_keeps_ids_from_old_store(tmp_path):
    old = PassageStore.open(tmp_path / "old" / "passages.db", create=True)
    old.add([P("a"), P("b"), P("c"), P("d", text="original")])
    old.delete(["c"])
    fresh = PassageStore.open(tmp_path / "new" / "passages.db", create=True)
    fresh.add([P("new1"), P("b"), P("a"), P("d", text="changed")], ids_from=old)
    assert fresh.id_of("a") == old.id_of("a") and fresh.id_of("b") == old.id_of("b")
    assert fresh.id_of("new1") > old.max_id()  # never takes c's old id either
    assert fresh.id_of("d") > old.max_id() and fresh.id_of("d") != old.id_of("d")
    old.close()
    fresh.close()


def test_database_file_is_wal_and_plain_sqlite(store):
    store.add([P("a")])
    assert store.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with sqlite3.connect(store.path) as other:
        assert other.execute("SELECT count(*) FROM passages").fetchone()[0] == 1


def test_every_inserted_passage_is_in_the_full_text_index_once(tmp_path):
    """add() indexes each batch itself (no per-row trigger): new rows exactly, duplicates never,
    and the same when a rebuild hands over old ids (``ids_from``)."""
    def matches(store, word):
        return sorted(r[0] for r in store.conn.execute(
            "SELECT rowid FROM passages_fts WHERE passages_fts MATCH ?", (word,)))

    with PassageStore.open(tmp_path / "a" / "passages.db", create=True) as old:
        old.add([P(f"p{i}", text=f"moraine number{i}") for i in range(7)], batch_size=3)
        old.add([P("p1", text="moraine again"), P("q", text="drumlin")], batch_size=3)
        assert old.fts_integrity_ok() and len(matches(old, "moraine")) == 7
        assert matches(old, "drumlin") == [old.id_of("q")]
        old.delete(["p2"])
        assert old.fts_integrity_ok() and len(matches(old, "moraine")) == 6
        with PassageStore.open(tmp_path / "b" / "passages.db", create=True) as fresh:
            fresh.add([P("p0", text="moraine number0"), P("new", text="moraine esker"),
                       P("q", text="drumlin")], ids_from=old, batch_size=2)
            assert fresh.fts_integrity_ok()
            assert fresh.id_of("p0") == old.id_of("p0") and fresh.id_of("q") == old.id_of("q")
            assert matches(fresh, "moraine") == sorted([fresh.id_of("p0"), fresh.id_of("new")])
            assert matches(fresh, "esker") == [fresh.id_of("new")]


# The schema before url/section (#33), as stores made by earlier versions have it.
_OLD_SCHEMA = """
CREATE TABLE passages (id INTEGER PRIMARY KEY AUTOINCREMENT, pid TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL DEFAULT '', text TEXT NOT NULL, source TEXT NOT NULL DEFAULT '',
    doc_id TEXT NOT NULL DEFAULT '', start INTEGER NOT NULL DEFAULT 0, "end" INTEGER NOT NULL DEFAULT 0);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE VIRTUAL TABLE passages_fts USING fts5(title, text, content="passages", content_rowid="id",
    tokenize='porter unicode61 remove_diacritics 2');
CREATE TRIGGER passages_ai AFTER INSERT ON passages BEGIN
    INSERT INTO passages_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
END;
INSERT INTO passages (pid, title, text, source, doc_id, start, "end")
    VALUES ('old1', 'Old', 'A passage stored before url and section existed.', 'old.tsv', 'd', 0, 48);
"""


def test_a_store_from_before_url_and_section_opens_and_keeps_its_passages(tmp_path):
    path = tmp_path / "old" / "passages.db"
    path.parent.mkdir()
    conn = sqlite3.connect(path)
    conn.executescript(_OLD_SCHEMA)
    conn.commit()
    conn.close()
    with PassageStore.open(path) as store:
        old = store.get("old1")
        assert (old.title, old.source, old.end, old.url, old.section) == ("Old", "old.tsv", 48, "", "")
        store.add([Passage("old", "new1", "New", "Fresh text.", url="https://x.org/New", section="A > B")])
        assert store.get("new1").section == "A > B" and store.get("new1").url == "https://x.org/New"
        assert [p.pid for _, p in next(store.iter_batches())] == ["old1", "new1"]
    with PassageStore.open(path) as again:  # migrated once; opening again changes nothing
        assert again.get("new1").url == "https://x.org/New" and again.count() == 2


def test_a_new_store_has_16k_pages_and_an_older_one_keeps_its_own(tmp_path):
    """New stores get ``PAGE_SIZE`` pages (the writer's SQLite work 1.1-1.3x cheaper); a store made
    with SQLite's 4 KiB default is opened, written and read as it is."""
    from searchain.corpus.store import PAGE_SIZE

    with PassageStore.open(tmp_path / "new" / "passages.db", create=True) as store:
        store.add([Passage("c", "p1", "T", "some text")])
        assert store.conn.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE == 16384
    old_db = tmp_path / "old" / "passages.db"
    with PassageStore.open(old_db, create=True) as store:
        store.add([Passage("c", "p1", "T", "some text")])
    copy = tmp_path / "old4k.db"
    src = sqlite3.connect(old_db)
    src.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    src.execute("PRAGMA journal_mode=DELETE")
    src.execute("PRAGMA page_size=4096")
    src.execute(f"VACUUM INTO '{copy}'")  # rewritten with 4 KiB pages, as every store before
    src.close()
    with PassageStore.open(copy) as store:
        assert store.conn.execute("PRAGMA page_size").fetchone()[0] == 4096
        store.add([Passage("c", "p2", "T", "more text")])
        assert store.count() == 2 and store.get("p2").text == "more text"
