"""The passage store: one SQLite file per corpus, with an FTS5 table for BM25.

Schema (``<data>/corpora/<name>/passages.db``, WAL mode)::

    passages(id INTEGER PRIMARY KEY AUTOINCREMENT, pid TEXT UNIQUE, title, text,
             source, doc_id, start, end, url, section, page)
    passages_fts  FTS5(title, text), external content = passages, content_rowid = id,
                  tokenize 'porter unicode61 remove_diacritics 2'; ``add`` indexes each batch
                  it inserts (a large ingest: all at its end, ``fts_build``, or never where
                  tantivy serves its keyword search); triggers follow deletes and updates
                  of the passages it holds
    meta(key TEXT PRIMARY KEY, value TEXT)   JSON values: corpus facts (state, sources, ...)
    documents(doc_id TEXT PRIMARY KEY, source, format, size, mtime_ns, sha256, passages, problem)
                  one row per file a folder ingest met (``documents.DocumentRecord``)

``url`` (a ZIM or wiki article's address, #33), ``section`` (the heading path, #33 and #34) and
``page`` (#34) came later. ``PRAGMA user_version`` is the schema's version (see
``store_schema``): opening an older store adds what it lacks (new columns with defaults, the
documents table), so every corpus made before stays readable; a store that cannot be written
(a read-only file) is read as it is, the columns it lacks read as empty.

``id`` is the label the vector index stores, so it is never reused or renumbered:
AUTOINCREMENT guarantees a deleted id is not handed out again, and a rebuild copies the
old ids across (see ``add(..., ids_from=...)``).

BM25 query example (lower is better in SQLite's sign convention)::

    SELECT rowid, bm25(passages_fts, 0.5, 1.0) AS score FROM passages_fts
    WHERE passages_fts MATCH ? ORDER BY score LIMIT 10
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from ..errors import TRANSIENT_IO_HINT, CorpusError, is_disk_full, is_transient_io
from ..types import Passage
from . import fts_build
from .documents import DocumentsMixin
from .store_schema import (FTS_TOKENIZER, SCHEMA, SCHEMA_VERSION, migrate, passage_columns,
                           user_version)

DB_NAME = "passages.db"
DEFAULT_BATCH = 500
# Pages of new stores (SQLite's default is 4 KiB; an existing store keeps its own). Measured on
# 240k passages (BENCHMARKS.md, "The writer receives rows"): the writer's CPU 1.30x lower with
# FTS5 deferred, 1.13x indexing per batch, 4 % less disk, FTS5 searches as fast.
PAGE_SIZE = 16384
ADDED_BY_SOURCE = "added_by_source"  # meta key: {source key: passages it added, over all runs}
_COLUMNS = "pid, title, text, source, doc_id, start, \"end\", url, section, page"
_MARKS = ",".join("?" * 10)
# What an older store that could not be migrated (read-only) gives for a column it lacks.
_LATER_COLUMNS = {"url": "''", "section": "''", "page": "NULL"}


def passage_row(p: Passage) -> tuple:
    """``p`` as the store's columns (``_COLUMNS``; its corpus is the store's): what ``add_rows``
    takes, and what the ingest's worker processes send (``parallel``: cheaper to unpickle)."""
    return (p.pid, p.title, p.text, p.source, p.doc_id, p.start, p.end, p.url, p.section, p.page)


@dataclass(frozen=True)
class AddResult:
    added: int
    duplicates: int  # passages whose pid was already stored (or repeated in the input)


class PassageStore(fts_build.KeywordIndexMixin, DocumentsMixin):
    """Passages of one corpus. Not thread-safe: use it from one thread at a time."""

    def __init__(self, conn: sqlite3.Connection, path: Path, corpus: str):
        import sqlite_utils

        self.path = path
        self.corpus = corpus
        self.db = sqlite_utils.Database(conn)
        self.version = user_version(conn)
        self._select = _COLUMNS
        if self.version < SCHEMA_VERSION:  # not migrated (read-only): read what it has
            have = passage_columns(conn)
            self._select = ", ".join(
                [c for c in _COLUMNS.split(", ") if c.strip('"') not in _LATER_COLUMNS]
                + [name if name in have else _LATER_COLUMNS[name] for name in _LATER_COLUMNS])

    # -- opening ---------------------------------------------------------------------------

    @classmethod
    def open(cls, path: str | Path, create: bool = False, *, corpus: str | None = None) -> "PassageStore":
        """Open ``path`` (a passages.db file); ``create`` makes it (and its folder) if missing.

        ``corpus`` defaults to the name of the folder holding the file.
        """
        path = Path(path)
        name = corpus or path.parent.name
        if not path.exists():
            if not create:
                raise CorpusError(f"No passage store at {path}.",
                                  hint="Add the corpus first: searchain corpus add NAME SOURCE")
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise CorpusError(f"Cannot create folder {path.parent}: {exc}") from exc
        try:
            conn = sqlite3.connect(str(path), check_same_thread=False)
            if create and conn.execute("PRAGMA page_count").fetchone()[0] == 0:
                conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # a new file: before WAL fixes it
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA busy_timeout=10000")
            has_table = conn.execute(
                "SELECT 1 FROM sqlite_master WHERE name='passages'").fetchone()
            if not has_table:
                if not create:
                    conn.close()
                    raise CorpusError(f"{path} is not a SearChain passage store (no passages table).",
                                      hint="Remove the corpus and add it again.")
                conn.executescript(SCHEMA)
                conn.commit()
            else:
                migrate(conn)
        except sqlite3.DatabaseError as exc:
            if is_disk_full(exc):
                raise CorpusError(f"Disk full: cannot open {path}.",
                                  hint="Free some disk space and try again.") from exc
            if is_transient_io(exc):  # the file is most likely fine: never advise removing it
                raise CorpusError(f"Cannot read passage store {path} right now: {exc}",
                                  hint=TRANSIENT_IO_HINT) from exc
            raise CorpusError(f"Cannot open passage store {path}: {exc}",
                              hint="The file may be damaged: run `searchain corpus rebuild NAME`, "
                              "or remove the corpus and add it again.") from exc
        return cls(conn, path, name)

    @property
    def conn(self) -> sqlite3.Connection:
        return self.db.conn

    def close(self) -> None:
        self.db.conn.close()

    def __enter__(self) -> "PassageStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing ---------------------------------------------------------------------------

    def add(self, passages: Iterable[Passage], *, batch_size: int = DEFAULT_BATCH,
            ids_from: "PassageStore | None" = None, count_as: str | None = None) -> AddResult:
        """Insert passages, one transaction per ``batch_size``; a known pid counts as duplicate.

        ``ids_from``: give each passage the id it has in that store when its pid, title and
        text are unchanged there (a rebuild keeps the vector index's labels valid); new or
        changed passages get ids above that store's largest id, so no label changes meaning.
        ``count_as``: add each batch's new passages to ``meta[ADDED_BY_SOURCE][count_as]`` in the
        batch's own transaction, so the count stays exact across a kill and a resume.
        A full disk raises CorpusError; batches committed before it stay.
        """
        return self.add_rows((passage_row(p) for p in passages), batch_size=batch_size,
                             ids_from=ids_from, count_as=count_as)

    def add_rows(self, rows: Iterable[tuple], *, batch_size: int = DEFAULT_BATCH,
                 ids_from: "PassageStore | None" = None, count_as: str | None = None) -> AddResult:
        """``add`` for passages as ``passage_row`` tuples (the parallel ingest's form)."""
        added = duplicates = 0
        if ids_from is not None:
            self._reserve_ids_above(ids_from.max_id())
        batch: list[tuple] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= batch_size:
                a, d = self._insert_batch(batch, ids_from, count_as)
                added, duplicates, batch = added + a, duplicates + d, []
        if batch:
            a, d = self._insert_batch(batch, ids_from, count_as)
            added, duplicates = added + a, duplicates + d
        return AddResult(added, duplicates)

    def _insert_batch(self, batch: list[tuple], ids_from: "PassageStore | None",
                      count_as: str | None = None) -> tuple[int, int]:
        self._require_current()
        total = len(batch)
        conn = self.conn
        try:
            with conn:
                # Only pids not stored yet (and each once) reach the INSERT: SQLite's AUTOINCREMENT
                # spends an id on every row OR IGNORE skips, so a resumed ingest re-reading its
                # stored records would leave a gap of ids an uninterrupted one does not have.
                known, fresh = self.ids_of([r[0] for r in batch]), {}
                for r in batch:
                    if r[0] not in known:
                        fresh.setdefault(r[0], r)
                rows = list(fresh.values())
                if not rows:  # all stored already (a resume re-reading its first records)
                    return 0, total
                # rowcount sums sqlite3_changes(), which leaves out rows skipped by OR IGNORE:
                # exactly the passages inserted. Then the new rows join the FTS index in one
                # statement (``fts_build.index_new``), unless a large ingest deferred it.
                if ids_from is None:
                    top = conn.execute("SELECT coalesce(max(id), 0) FROM passages").fetchone()[0]
                    cur = conn.executemany(
                        f"INSERT OR IGNORE INTO passages ({_COLUMNS}) VALUES ({_MARKS})", rows)
                    # AUTOINCREMENT: every id handed out now is above the largest before
                    fts_build.index_new(conn, above=top)
                else:
                    old = ids_from.ids_of_unchanged(rows)
                    pids = [r[0] for r in rows]
                    known = self.ids_of(pids)
                    cur = conn.executemany(
                        f"INSERT OR IGNORE INTO passages (id, {_COLUMNS}) VALUES (?,{_MARKS})",
                        [(old.get(r[0]),) + r for r in rows])
                    fts_build.index_new(conn, ids=[i for pid, i in self.ids_of(pids).items()
                                                   if pid not in known])
                inserted = cur.rowcount
                if count_as is not None and inserted:
                    counts = self.meta_get(ADDED_BY_SOURCE, {})
                    counts[count_as] = counts.get(count_as, 0) + inserted
                    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                                 (ADDED_BY_SOURCE, json.dumps(counts)))
        except sqlite3.DatabaseError as exc:
            raise self._write_error(exc) from exc
        return inserted, total - inserted

    def _reserve_ids_above(self, max_id: int) -> None:
        """Make AUTOINCREMENT hand out ids above ``max_id`` (ids of a replaced store)."""
        with self.conn:
            row = self.conn.execute("SELECT seq FROM sqlite_sequence WHERE name='passages'").fetchone()
            if row is None:
                self.conn.execute("INSERT INTO sqlite_sequence(name, seq) VALUES ('passages', ?)",
                                  (max_id,))
            elif row[0] < max_id:
                self.conn.execute("UPDATE sqlite_sequence SET seq=? WHERE name='passages'", (max_id,))

    def delete(self, pids: Iterable[str]) -> int:
        """Delete passages by pid (FTS follows through the trigger, for the passages it holds:
        ``store_schema``); returns how many."""
        pids = list(pids)
        self._require_current()  # an older store's trigger would damage a deferred index
        try:
            with self.conn:
                cur = self.conn.executemany("DELETE FROM passages WHERE pid=?", [(p,) for p in pids])
                return cur.rowcount
        except sqlite3.DatabaseError as exc:
            raise self._write_error(exc) from exc

    def _write_error(self, exc: sqlite3.DatabaseError) -> CorpusError:
        if is_disk_full(exc):
            return CorpusError(
                f"Disk full while writing {self.path}; the {self.count()} passages stored "
                "before this batch are kept.",
                hint="Free some disk space, then run the same command again: it continues "
                "where it stopped (stored passages are skipped).")
        return CorpusError(f"Cannot write to passage store {self.path}: {exc}",
                           hint="Check that the file is writable and not damaged; "
                           "`searchain corpus rebuild NAME` re-creates it from its sources.")

    # -- reading ---------------------------------------------------------------------------

    def count(self) -> int:
        return self.conn.execute("SELECT count(*) FROM passages").fetchone()[0]

    def max_id(self) -> int:
        """Largest id ever handed out (0 for an empty store), deleted ones included."""
        row = self.conn.execute("SELECT seq FROM sqlite_sequence WHERE name='passages'").fetchone()
        top = self.conn.execute("SELECT max(id) FROM passages").fetchone()[0] or 0
        return max(top, row[0] if row else 0)

    def get(self, pid: str) -> Passage:
        """The passage with stable id ``pid``; CorpusError if there is none."""
        row = self.conn.execute(f"SELECT id, {self._select} FROM passages WHERE pid=?", (pid,)).fetchone()
        if row is None:
            raise CorpusError(f"Corpus {self.corpus!r} has no passage {pid!r}.")
        return self._passage(row)

    def id_of(self, pid: str) -> int | None:
        """The integer id (vector-index label) of ``pid``, or None if it is not stored."""
        row = self.conn.execute("SELECT id FROM passages WHERE pid=?", (pid,)).fetchone()
        return row[0] if row else None

    def ids_of(self, pids: list[str]) -> dict[str, int]:
        """``{pid: id}`` for the pids that are stored (missing ones are left out)."""
        found: dict[str, int] = {}
        for i in range(0, len(pids), 500):  # stay under SQLite's bound-variable limit
            chunk = pids[i:i + 500]
            marks = ",".join("?" * len(chunk))
            found.update(self.conn.execute(
                f"SELECT pid, id FROM passages WHERE pid IN ({marks})", chunk).fetchall())
        return found

    def ids_of_unchanged(self, rows: list[tuple]) -> dict[str, int]:
        """``{pid: id}`` for the passages (``passage_row`` tuples) stored here with the same
        pid, title and text."""
        wanted = {r[0]: (r[1], r[2]) for r in rows}
        found: dict[str, int] = {}
        pids = list(wanted)
        for i in range(0, len(pids), 500):
            chunk = pids[i:i + 500]
            marks = ",".join("?" * len(chunk))
            for pid, id_, title, text in self.conn.execute(
                    f"SELECT pid, id, title, text FROM passages WHERE pid IN ({marks})", chunk):
                if wanted[pid] == (title, text):
                    found[pid] = id_
        return found

    def get_by_ids(self, ids: list[int]) -> list[Passage]:
        """Passages for integer ids, in the order given; CorpusError names any missing id."""
        by_id: dict[int, Passage] = {}
        unique = list(dict.fromkeys(int(i) for i in ids))
        for i in range(0, len(unique), 500):
            chunk = unique[i:i + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(
                    f"SELECT id, {self._select} FROM passages WHERE id IN ({marks})", chunk):
                by_id[row[0]] = self._passage(row)
        missing = [i for i in unique if i not in by_id]
        if missing:
            raise CorpusError(
                f"Corpus {self.corpus!r} has no passages with ids {missing[:10]}"
                f"{' ...' if len(missing) > 10 else ''}.",
                hint="The search index is out of date: rebuild it (searchain corpus rebuild NAME).")
        return [by_id[int(i)] for i in ids]

    def iter_batches(self, after_id: int = 0, batch_size: int = 256) -> Iterator[list[tuple[int, Passage]]]:
        """``[(id, passage), ...]`` batches in ascending id, starting after ``after_id``."""
        last = after_id
        while True:
            rows = self.conn.execute(
                f"SELECT id, {self._select} FROM passages WHERE id > ? ORDER BY id LIMIT ?",
                (last, batch_size)).fetchall()
            if not rows:
                return
            yield [(row[0], self._passage(row)) for row in rows]
            last = rows[-1][0]

    def document(self, doc_id: str) -> list[Passage]:
        """Every passage of source document ``doc_id``, in document order."""
        rows = self.conn.execute(
            f"SELECT id, {self._select} FROM passages WHERE doc_id=? ORDER BY start, id", (doc_id,))
        return [self._passage(row) for row in rows]

    def passages_by_id(self, ids: list[int]) -> dict[int, Passage]:
        """``{id: Passage}`` for those of ``ids`` that are stored (missing ones left out)."""
        found: dict[int, Passage] = {}
        unique = list(dict.fromkeys(int(i) for i in ids))
        for i in range(0, len(unique), 500):  # SQLite's bound-variable limit
            chunk = unique[i:i + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.conn.execute(
                    f"SELECT id, {self._select} FROM passages WHERE id IN ({marks})", chunk):
                found[row[0]] = self._passage(row)
        return found

    def _passage(self, row: tuple) -> Passage:
        return Passage(self.corpus, *row[1:])

    def _require_current(self) -> None:
        if self.version < SCHEMA_VERSION:
            raise CorpusError(
                f"The passage store {self.path} is from an older SearChain and could not be "
                "updated (is it read-only?).",
                hint="Make the file writable and open it again; it is then updated in place.")

    # -- corpus facts ----------------------------------------------------------------------

    def meta_get(self, key: str, default: Any = None) -> Any:
        row = self.conn.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return default if row is None else json.loads(row[0])

    def meta_set(self, key: str, value: Any) -> None:
        try:
            with self.conn:
                self.conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
                                  (key, json.dumps(value)))
        except sqlite3.DatabaseError as exc:
            raise self._write_error(exc) from exc

    def checkpoint_and_detach_wal(self) -> None:
        """Fold the WAL into the main file and leave rollback-journal mode (one file on disk)."""
        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.conn.execute("PRAGMA journal_mode=DELETE")

