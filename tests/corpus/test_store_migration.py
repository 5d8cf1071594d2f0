"""A passage store written before pages and sections (#34) opens, reads and takes new passages;
one that cannot be written is still read."""

import sqlite3

import pytest

from searchain.config import Settings
from searchain.corpus.documents import DocumentRecord
from searchain.corpus.manager import CorpusManager
from searchain.corpus.store import SCHEMA_VERSION, PassageStore
from searchain.errors import CorpusError
from searchain.types import Passage
from tests.fixtures.documents import page_texts, write_pdf

# The schema as released before #34 (user_version 0), written out here so it never drifts.
V0_SCHEMA = """
CREATE TABLE passages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, pid TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL DEFAULT '', text TEXT NOT NULL, source TEXT NOT NULL DEFAULT '',
    doc_id TEXT NOT NULL DEFAULT '', start INTEGER NOT NULL DEFAULT 0, "end" INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX passages_doc ON passages(doc_id, start);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);
CREATE VIRTUAL TABLE passages_fts USING fts5(
    title, text, content="passages", content_rowid="id",
    tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER passages_ai AFTER INSERT ON passages BEGIN
    INSERT INTO passages_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
END;
CREATE TRIGGER passages_ad AFTER DELETE ON passages BEGIN
    INSERT INTO passages_fts(passages_fts, rowid, title, text) VALUES ('delete', old.id, old.title, old.text);
END;
"""


def write_v0_store(path, name="old"):
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(V0_SCHEMA)
    conn.executemany('INSERT INTO passages (pid, title, text, source, doc_id, start, "end") '
                     "VALUES (?,?,?,?,?,?,?)",
                     [("p1", "Glacier", "Glaciers carve valleys.", "old.tsv:2", "p1", 0, 23),
                      ("p2", "River", "Rivers carry silt to the sea.", "old.tsv:3", "p2", 0, 29)])
    conn.executemany("INSERT INTO meta VALUES (?, ?)",
                     [("name", f'"{name}"'), ("created", '"2024-05-01T00:00:00+00:00"'),
                      ("state", '"ready"'),
                      ("sources", '[{"path": "/x/old.tsv", "format": "tsv", "status": "done"}]')])
    conn.commit()
    conn.close()
    return path


def test_an_old_store_opens_reads_and_takes_located_passages(tmp_path):
    db = write_v0_store(tmp_path / "old" / "passages.db")
    with PassageStore.open(db) as store:
        assert store.version == SCHEMA_VERSION
        old = store.get("p1")
        assert (old.text, old.page, old.section, old.location()) == ("Glaciers carve valleys.", None, "", "")
        store.add([Passage("old", "n1", "Report", "Moraines date the retreat.", "/d/r.pdf", "d/r.pdf",
                           0, 26, page=3, section="2 Methods")])
        new = store.get("n1")
        assert (new.page, new.section) == (3, "2 Methods")
        assert store.fts_integrity_ok()
        assert store.passages_by_id([store.id_of("p2")])[store.id_of("p2")].title == "River"
        store.put_documents([DocumentRecord("d/r.pdf", "/d/r.pdf", "pdf", 10, 5, "ab", 1)])
        assert store.documents()[0].format == "pdf"
    # migrated once, in place: the next open finds the current schema
    assert sqlite3.connect(db).execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_an_old_store_that_cannot_be_written_is_still_read(tmp_path):
    db = write_v0_store(tmp_path / "old" / "passages.db")
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, check_same_thread=False)
    from searchain.corpus.store_schema import migrate

    migrate(conn)  # cannot write: leaves it as it is
    store = PassageStore(conn, db, "old")
    assert store.version == 0
    assert [p.text for p in store.document("p2")] == ["Rivers carry silt to the sea."]
    assert store.get("p1").page is None and store.documents() == []
    with pytest.raises(CorpusError, match="older SearChain") as info:
        store.add([Passage("old", "n", "t", "x")])
    assert "writable" in info.value.hint
    store.close()


def test_a_folder_of_documents_joins_an_old_corpus(home, tmp_path):
    write_v0_store(home.corpora_dir / "old" / "passages.db")
    manager = CorpusManager(home, Settings())
    assert manager.info("old").passages == 2
    docs = tmp_path / "docs"
    docs.mkdir()
    write_pdf(docs / "paper.pdf", page_texts(2, seed=31))
    report = manager.add("old", docs)
    assert report.added > 0 and report.files == 1
    with manager.open_store("old") as store:
        pages = {p.page for batch in store.iter_batches() for _, p in batch if p.doc_id == "docs/paper.pdf"}
        assert pages == {1, 2}
        assert store.get("p1").page is None
        assert [r.doc_id for r in store.documents()] == ["docs/paper.pdf"]


# What #33 (on main) left: user_version 0, url and section added on open, the insert trigger kept.
MAIN_V0_COLUMNS = ["ALTER TABLE passages ADD COLUMN url TEXT NOT NULL DEFAULT ''",
                   "ALTER TABLE passages ADD COLUMN section TEXT NOT NULL DEFAULT ''"]


def test_a_store_with_url_and_section_but_no_version_gets_pages_and_documents(tmp_path):
    db = write_v0_store(tmp_path / "wiki" / "passages.db", "wiki")
    conn = sqlite3.connect(db)
    for sql in MAIN_V0_COLUMNS:
        conn.execute(sql)
    conn.execute("UPDATE passages SET url='https://x.org/Glacier', section='History' WHERE pid='p1'")
    conn.commit()
    conn.close()
    with PassageStore.open(db) as store:
        assert store.version == SCHEMA_VERSION
        old = store.get("p1")
        assert (old.url, old.section, old.page) == ("https://x.org/Glacier", "History", None)
        store.add([Passage("wiki", "n1", "Report", "Moraines date the retreat.", "/d/r.pdf", "d/r.pdf",
                           0, 26, page=4, section="2 Methods")])
        assert (store.get("n1").page, store.get("n1").section, store.get("n1").url) == (4, "2 Methods", "")
        assert store.fts_integrity_ok()  # the old insert trigger is gone: indexed once
        assert store.conn.execute("SELECT count(*) FROM passages_fts WHERE passages_fts MATCH 'moraines'"
                                  ).fetchone()[0] == 1
        assert store.documents() == []


def test_a_version_1_store_without_url_gains_it(tmp_path):
    """A store written by #34 before it met #33: page and section, the documents table, no url."""
    db = write_v0_store(tmp_path / "docs" / "passages.db", "docs")
    conn = sqlite3.connect(db)
    for sql in ["ALTER TABLE passages ADD COLUMN page INTEGER",
                "ALTER TABLE passages ADD COLUMN section TEXT NOT NULL DEFAULT ''",
                "CREATE TABLE documents (doc_id TEXT PRIMARY KEY, source TEXT NOT NULL, "
                "format TEXT NOT NULL DEFAULT '', size INTEGER NOT NULL DEFAULT 0, "
                "mtime_ns INTEGER NOT NULL DEFAULT 0, sha256 TEXT NOT NULL DEFAULT '', "
                "passages INTEGER NOT NULL DEFAULT 0, problem TEXT NOT NULL DEFAULT '')",
                "DROP TRIGGER passages_ai",
                "UPDATE passages SET page=7, section='Intro' WHERE pid='p2'",
                "INSERT INTO documents VALUES ('p2', '/x/r.pdf', 'pdf', 1, 2, 'ab', 1, '')",
                "PRAGMA user_version = 1"]:
        conn.execute(sql)
    conn.commit()
    conn.close()
    with PassageStore.open(db) as store:
        assert store.version == SCHEMA_VERSION
        kept = store.get("p2")
        assert (kept.page, kept.section, kept.url) == (7, "Intro", "")
        assert [r.doc_id for r in store.documents()] == ["p2"]
        store.add([Passage("docs", "z", "Ellin", "Barges sailed it.", "w.zim", "A/Ellin", 0, 17,
                           url="https://en.wikipedia.org/wiki/Ellin", section="History")])
        assert store.get("z").url == "https://en.wikipedia.org/wiki/Ellin"
        assert store.fts_integrity_ok()


def test_a_read_only_store_of_either_line_reads_the_columns_it_has(tmp_path):
    db = write_v0_store(tmp_path / "wiki" / "passages.db", "wiki")
    conn = sqlite3.connect(db)
    for sql in MAIN_V0_COLUMNS:
        conn.execute(sql)
    conn.execute("UPDATE passages SET url='https://x.org/Glacier', section='History' WHERE pid='p1'")
    conn.commit()
    conn.close()
    ro = sqlite3.connect(f"file:{db}?mode=ro", uri=True, check_same_thread=False)
    from searchain.corpus.store_schema import migrate

    migrate(ro)
    store = PassageStore(ro, db, "wiki")
    assert store.version == 0
    p1 = store.get("p1")
    assert (p1.url, p1.section, p1.page) == ("https://x.org/Glacier", "History", None)
    store.close()
