"""The passage store's schema, and the steps that bring an older store up to it.

``PRAGMA user_version`` is the schema's version: 0 for stores written before pages and sections
(#34), 1 for stores with page/section and the documents table but no url, 2 since url and
section (#33) and the documents work (#34) met, 3 since the FTS triggers act only on passages
the keyword index holds (#33: a large ingest may leave it to tantivy). ``MIGRATIONS[v]`` takes
a store from version v to v + 1; released steps are never edited, a change is a new step. See
``store`` for what the tables hold.

Two lines of stores reach version 2: a version-0 store may already have ``url`` and ``section``
(#33 added them without a version number, on open), and a version-1 store has ``section`` but
no ``url``. So each step adds only the columns the store lacks (``AddColumn`` entries).
"""

from __future__ import annotations

import sqlite3

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"
SCHEMA_VERSION = 3

_DOCUMENTS_TABLE = """CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    format TEXT NOT NULL DEFAULT '',
    size INTEGER NOT NULL DEFAULT 0,
    mtime_ns INTEGER NOT NULL DEFAULT 0,
    sha256 TEXT NOT NULL DEFAULT '',
    passages INTEGER NOT NULL DEFAULT 0,
    problem TEXT NOT NULL DEFAULT ''
);"""

# The FTS5 index follows deletes and updates of the passages it holds. A large ingest may leave
# it holding only the passages up to an id X (``fts_build``: meta 'fts' {"state": "deferred",
# "indexed_to": X}), or none, when tantivy serves the corpus's keyword search; FTS5's
# external-content 'delete' of a row it never indexed would damage it, so the triggers act only
# on rows at or below X (every row when the index is complete: no such meta entry).
_INDEXED_TO = ("coalesce((SELECT json_extract(value, '$.indexed_to') FROM meta WHERE key = 'fts' "
               "AND json_extract(value, '$.state') = 'deferred'), 9223372036854775807)")
_DELETE_TRIGGER = f"""CREATE TRIGGER IF NOT EXISTS passages_ad AFTER DELETE ON passages
WHEN old.id <= {_INDEXED_TO} BEGIN
    INSERT INTO passages_fts(passages_fts, rowid, title, text)
        VALUES ('delete', old.id, old.title, old.text);
END;"""
_UPDATE_TRIGGER = f"""CREATE TRIGGER IF NOT EXISTS passages_au AFTER UPDATE ON passages
WHEN old.id <= {_INDEXED_TO} BEGIN
    INSERT INTO passages_fts(passages_fts, rowid, title, text)
        VALUES ('delete', old.id, old.title, old.text);
    INSERT INTO passages_fts(rowid, title, text) VALUES (new.id, new.title, new.text);
END;"""

SCHEMA = f"""
CREATE TABLE IF NOT EXISTS passages (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    pid TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL DEFAULT '',
    text TEXT NOT NULL,
    source TEXT NOT NULL DEFAULT '',
    doc_id TEXT NOT NULL DEFAULT '',
    start INTEGER NOT NULL DEFAULT 0,
    "end" INTEGER NOT NULL DEFAULT 0,
    url TEXT NOT NULL DEFAULT '',
    section TEXT NOT NULL DEFAULT '',
    page INTEGER
);
CREATE INDEX IF NOT EXISTS passages_doc ON passages(doc_id, start);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
{_DOCUMENTS_TABLE}
CREATE VIRTUAL TABLE IF NOT EXISTS passages_fts USING fts5(
    title, text, content="passages", content_rowid="id", tokenize='{FTS_TOKENIZER}'
);
{_DELETE_TRIGGER}
{_UPDATE_TRIGGER}
PRAGMA user_version = {SCHEMA_VERSION};
"""


class AddColumn(tuple):
    """A migration entry ``AddColumn((name, declaration))``: ``ALTER TABLE passages ADD COLUMN``
    unless the store already has that column (constant time; old rows read the default)."""


# MIGRATIONS[v] takes a store from version v to v + 1; released steps are never edited.
MIGRATIONS: list[list[str | AddColumn]] = [
    # 1 (#34): where in its file a passage is, and what each file was when it was read.
    # (section may be there already: #33 added it, with url, to version-0 stores)
    [AddColumn(("page", "INTEGER")),
     AddColumn(("section", "TEXT NOT NULL DEFAULT ''")),
     _DOCUMENTS_TABLE,
     # add() indexes each batch in one INSERT ... SELECT, 3x cheaper than a trigger per row
     "DROP TRIGGER IF EXISTS passages_ai"],
    # 2 (#33 with #34): the article address of ZIM and wiki passages, for version-1 stores
    # (documents) that lack it; a version-0 store from #33 has it already.
    [AddColumn(("url", "TEXT NOT NULL DEFAULT ''")),
     AddColumn(("section", "TEXT NOT NULL DEFAULT ''"))],
    # 3 (#33): deletes and updates leave FTS5 alone for passages it does not hold (a large
    # ingest's keyword index left to tantivy), so an update never has to build it first.
    ["DROP TRIGGER IF EXISTS passages_ad", "DROP TRIGGER IF EXISTS passages_au",
     _DELETE_TRIGGER, _UPDATE_TRIGGER],
]
assert len(MIGRATIONS) == SCHEMA_VERSION


def passage_columns(conn: sqlite3.Connection) -> set[str]:
    return {row[1] for row in conn.execute("PRAGMA table_info(passages)")}


def user_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection) -> None:
    """Bring an older store up to SCHEMA_VERSION: every missing step in one ``BEGIN IMMEDIATE``
    transaction, so two processes opening it cannot both migrate, and a crash leaves it as it was.

    A store that cannot be written stays as it is (``PassageStore`` then reads it without the
    new columns and refuses writes).
    """
    if user_version(conn) >= SCHEMA_VERSION:
        return  # the usual case: no write lock needed
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as exc:
        if "readonly" in str(exc) or "read-only" in str(exc):
            return
        raise
    try:
        version = user_version(conn)  # re-read under the write lock: another process may be done
        for step in MIGRATIONS[version:]:
            for sql in step:
                if isinstance(sql, AddColumn):
                    name, decl = sql
                    if name not in passage_columns(conn):
                        conn.execute(f"ALTER TABLE passages ADD COLUMN {name} {decl}")
                else:
                    conn.execute(sql)
            version += 1
            conn.execute(f"PRAGMA user_version = {version}")
        conn.execute("COMMIT")
    except sqlite3.OperationalError as exc:
        conn.execute("ROLLBACK")
        if "readonly" not in str(exc):
            raise
