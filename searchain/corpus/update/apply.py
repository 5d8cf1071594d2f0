"""Replacing documents in a passage store, one batch of documents at a time, keeping what did
not change: the step a folder re-sync and a snapshot update share.

``DocumentUpdater.put(doc_id, passages)`` hands over a document's passages as its source gives
them now. Per batch, each document is compared with what the store holds for its ``doc_id``:

- the same passages (pid, title and text, in order): **unchanged**. Its rows, ids and so its
  vectors stay; only a changed address (source file name, offsets, url, section, page) is
  written over in place, with the FTS trigger left out since title and text are the same;
- other passages: **changed**. Its rows are deleted (the index hides their vectors at its
  next build) and the new passages stored with fresh ids above every id handed out, which the
  index build embeds as "passages after the last checkpoint";
- nothing stored: **added**.

Order of writes, per batch: old rows deleted, new rows added, then the files' records. A kill
between any two leaves a store whose every document is either as before or as now (a document
whose old rows were deleted and new ones not yet added is simply absent), and running the
update again compares again, finding the finished documents unchanged: it resumes.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Callable, Iterable

from ...errors import CorpusError, is_disk_full
from ...events import CancelToken, check
from ...types import Passage
from ..documents import DocumentRecord
from ..store import DEFAULT_BATCH, PassageStore
from ..store_schema import SCHEMA_VERSION

UNCHANGED, CHANGED, ADDED, EMPTY = "unchanged", "changed", "added", "empty"
_CHUNK = 500  # SQLite's bound-variable limit, with room
_STORED = 'id, pid, title, text, source, start, "end", url, section, page, doc_id'


@dataclass(frozen=True)
class _Row:
    id: int
    pid: str
    title: str
    text: str
    source: str
    start: int
    end: int
    url: str
    section: str
    page: int | None
    doc_id: str


class DocumentUpdater:
    """Applies documents to ``store`` in batches of about ``batch_size`` passages (see above).

    ``on_document(doc_id, kind, record, title)`` is told each document's kind (``UNCHANGED``,
    ``CHANGED``, ``ADDED`` or ``EMPTY``: no passages before or now) once its batch is written.
    ``track_seen`` keeps every doc_id put in a temporary table, for ``remove_unseen``.
    """

    def __init__(self, store: PassageStore, *, batch_size: int = DEFAULT_BATCH,
                 track_seen: bool = False, cancel: CancelToken | None = None,
                 on_document: Callable[[str, str, DocumentRecord | None, str], None] | None = None):
        if store.version < SCHEMA_VERSION:
            raise CorpusError(f"The passage store {store.path} is from an older SearChain and "
                              "could not be updated (is it read-only?).",
                              hint="Make the file writable and open it again; it is then updated "
                                   "in place.")
        # Its deletes go through the FTS trigger, which touches only the passages the keyword
        # index holds (``store_schema``): an index a large ingest left to tantivy stays so.
        self.store = store
        self.batch_size = batch_size
        self.cancel = cancel
        self.on_document = on_document
        self.track_seen = track_seen
        self.passages_added = self.passages_removed = 0
        self.documents_seen = 0
        self._pending: list[tuple[str, list[Passage], DocumentRecord | None]] = []
        self._pending_passages = 0
        if track_seen:
            store.conn.execute("CREATE TEMP TABLE IF NOT EXISTS update_seen (doc_id TEXT PRIMARY KEY)")
            store.conn.execute("DELETE FROM temp.update_seen")

    # -- putting documents -------------------------------------------------------------------

    def put(self, doc_id: str, passages: list[Passage], record: DocumentRecord | None = None) -> None:
        """The document ``doc_id`` as it is now (``record``: its file's facts, stored with it)."""
        self._pending.append((doc_id, passages, record))
        self._pending_passages += len(passages) + 1
        if self._pending_passages >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        """Write the documents put so far (see the module docstring for the order)."""
        pending, self._pending, self._pending_passages = self._pending, [], 0
        if not pending:
            return
        check(self.cancel)
        stored = self._stored([doc_id for doc_id, _, _ in pending])
        delete_ids: list[int] = []
        fresh: list[Passage] = []
        moved: list[tuple] = []  # (source, start, end, url, section, page, id) of kept rows
        kinds: list[tuple[str, str, DocumentRecord | None, str]] = []
        for doc_id, passages, record in pending:
            old = stored.pop(doc_id, [])
            if not old:
                kind = ADDED if passages else EMPTY
            elif [(p.pid, p.title, p.text) for p in passages] == [(r.pid, r.title, r.text) for r in old]:
                kind = UNCHANGED
                moved += [(p.source, p.start, p.end, p.url, p.section, p.page, r.id)
                          for p, r in zip(passages, old)
                          if (p.source, p.start, p.end, p.url, p.section, p.page)
                          != (r.source, r.start, r.end, r.url, r.section, r.page)]
            else:  # other text, or none now (a file that gives nothing any more)
                kind = CHANGED
                delete_ids += [r.id for r in old]
            if kind in (CHANGED, ADDED):
                fresh += passages
            title = passages[0].title if passages else (old[0].title if old else "")
            kinds.append((doc_id, kind, record, title))
        self._delete_ids(delete_ids)
        if fresh:
            result = self.store.add(fresh, batch_size=max(self.batch_size, len(fresh)))
            self.passages_added += result.added
        if moved:
            self._move(moved)
        records = [r for _, _, r, _ in kinds if r is not None]
        if records:
            self.store.put_documents(records)
        if self.track_seen:
            self._write("INSERT OR IGNORE INTO temp.update_seen(doc_id) VALUES (?)",
                        [(doc_id,) for doc_id, _, _, _ in kinds])
        self.documents_seen += len(kinds)
        if self.on_document is not None:
            for doc_id, kind, record, title in kinds:
                self.on_document(doc_id, kind, record, title)

    # -- removing ----------------------------------------------------------------------------

    def unseen(self) -> list[tuple[str, str]]:
        """``(doc_id, title)`` of the documents stored but never put since this updater began
        (needs ``track_seen``)."""
        self.flush()
        rows = self.store.conn.execute(
            "SELECT doc_id, min(title) FROM passages WHERE doc_id NOT IN "
            "(SELECT doc_id FROM temp.update_seen) GROUP BY doc_id ORDER BY doc_id")
        return [(row[0], row[1] or row[0]) for row in rows]

    def remove(self, doc_ids: Iterable[str]) -> int:
        """Delete every passage and record of ``doc_ids``; returns the passages deleted."""
        doc_ids = list(doc_ids)
        removed = 0
        for i in range(0, len(doc_ids), _CHUNK):
            check(self.cancel)
            chunk = doc_ids[i:i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            try:
                with self.store.conn as conn:
                    removed += conn.execute(f"DELETE FROM passages WHERE doc_id IN ({marks})",
                                            chunk).rowcount
                    conn.execute(f"DELETE FROM documents WHERE doc_id IN ({marks})", chunk)
            except sqlite3.DatabaseError as exc:
                raise _write_error(self.store, exc) from exc
        self.passages_removed += removed
        return removed

    # -- the store ---------------------------------------------------------------------------

    def _stored(self, doc_ids: list[str]) -> dict[str, list[_Row]]:
        found: dict[str, list[_Row]] = {}
        unique = list(dict.fromkeys(doc_ids))
        for i in range(0, len(unique), _CHUNK):
            chunk = unique[i:i + _CHUNK]
            marks = ",".join("?" * len(chunk))
            for row in self.store.conn.execute(
                    f"SELECT {_STORED} FROM passages WHERE doc_id IN ({marks}) ORDER BY id", chunk):
                found.setdefault(row[-1], []).append(_Row(*row))
        return found

    def _delete_ids(self, ids: list[int]) -> None:
        if ids:
            self._write("DELETE FROM passages WHERE id=?", [(i,) for i in ids])
            self.passages_removed += len(ids)

    def _move(self, rows: list[tuple]) -> None:
        """New addresses for kept rows. Title and text stay, so the FTS index needs nothing:
        its update trigger is left out for this one transaction (and back before it commits)."""
        conn = self.store.conn
        trigger = conn.execute(
            "SELECT sql FROM sqlite_master WHERE type='trigger' AND name='passages_au'").fetchone()
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if trigger:
                    conn.execute("DROP TRIGGER passages_au")
                conn.executemany('UPDATE passages SET source=?, start=?, "end"=?, url=?, section=?, '
                                 "page=? WHERE id=?", rows)
                if trigger:
                    conn.execute(trigger[0])
                conn.commit()
            except BaseException:
                conn.rollback()
                raise
        except sqlite3.DatabaseError as exc:
            raise _write_error(self.store, exc) from exc

    def _write(self, sql: str, rows: list[tuple]) -> None:
        try:
            with self.store.conn as conn:
                conn.executemany(sql, rows)
        except sqlite3.DatabaseError as exc:
            raise _write_error(self.store, exc) from exc


def _write_error(store: PassageStore, exc: sqlite3.DatabaseError) -> CorpusError:
    if is_disk_full(exc):
        return CorpusError(f"Disk full while updating {store.path}; what was written before is "
                           "kept and consistent.",
                           hint="Free some disk space, then run the same update again: it "
                                "continues (documents already brought up to date are unchanged).")
    return CorpusError(f"Cannot write to passage store {store.path}: {exc}",
                       hint="Check that the file is writable and not damaged.")
