"""What a corpus remembers about each file it read: the facts a later sync compares.

A folder ingest records one ``DocumentRecord`` per supported file it met, read or not. Keeping
size, modification time and content hash lets an update re-read only what changed (size or mtime
first, the hash to confirm), and a file that failed keeps its reason, so it is retried once it
changes rather than on every update.
"""

from __future__ import annotations

from dataclasses import dataclass


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
