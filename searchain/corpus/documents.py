"""What a corpus remembers about each file it read: the facts a later sync compares.

A folder ingest records one ``DocumentRecord`` per supported file it met, read or not. Keeping
size, modification time and content hash lets an update re-read only what changed (size or mtime
first, the hash to confirm), and a file that failed keeps its reason, so it is retried once it
changes rather than on every update. The records live in the passage store's ``documents``
table (``DocumentsMixin``, part of ``store.PassageStore``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Iterable

_COLUMNS = "doc_id, source, format, size, mtime_ns, sha256, passages, problem"


@dataclass(frozen=True)
class DocumentRecord:
    """One file of a corpus: ``doc_id`` (its passages' ``doc_id``), ``source`` (the path read),
    its ``format`` (pdf, docx, odt, html, epub, md, txt), ``size`` in bytes, ``mtime_ns``, hex
    ``sha256`` of its bytes ("" when it could not be read), the ``passages`` it gave and, for a
    file that gave none, the ``problem`` reported for it."""

    doc_id: str
    source: str
    format: str
    size: int
    mtime_ns: int
    sha256: str = ""
    passages: int = 0
    problem: str = ""


class DocumentsMixin:
    """``PassageStore``'s methods for the ``documents`` table; rely on its ``conn``,
    ``version``, ``_write_error`` and ``_require_current``."""

    def put_documents(self, records: Iterable[DocumentRecord]) -> None:
        """Record (or replace) what each file was when it was read; see ``documents``."""
        rows = [(r.doc_id, r.source, r.format, r.size, r.mtime_ns, r.sha256, r.passages, r.problem)
                for r in records]
        if not rows:
            return
        self._require_current()
        try:
            with self.conn:
                self.conn.executemany(
                    f"INSERT OR REPLACE INTO documents ({_COLUMNS}) VALUES (?,?,?,?,?,?,?,?)", rows)
        except sqlite3.DatabaseError as exc:
            raise self._write_error(exc) from exc

    def documents(self) -> list[DocumentRecord]:
        """Every recorded file, by doc_id ([] for a store older than the documents table)."""
        if self.version < 1:
            return []
        rows = self.conn.execute(f"SELECT {_COLUMNS} FROM documents ORDER BY doc_id")
        return [DocumentRecord(*row) for row in rows]
