"""A folder of documents (searched recursively, symlinks followed), one document per file.

Read: PDF, Word (.docx), OpenDocument text (.odt), HTML, EPUB, Markdown and plain text (see
``documents``); any other file counts as ignored. Each file is cut into parts (a PDF page, a
section under a heading) and each part chunked into ~100-word passages, so a passage carries one
page and one heading path. Offsets index the document's text (for .txt and .md, the file's own
text, so ``file_text[start:end]`` is the passage). pids are ``"<folder>/<relative path>#<k>"``,
stable for unchanged files.

A file that gives nothing (encrypted, scanned, damaged, too large, mislabelled, unreadable)
is one problem line in the report and the walk goes on; each file met is recorded, with its
size, mtime and content hash, as a ``DocumentRecord`` in ``documents`` for the store.

Files are read and parsed ahead on one reader thread (``SourceOptions.read_ahead`` files) while
the caller's thread chunks and stores the file before: PDFium and SQLite release the GIL, so with
a core free the two overlap and chunking and storage cost little wall time (BENCHMARKS.md).
"""

from __future__ import annotations

import hashlib
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterator

from ...errors import CorpusError
from ...types import Passage
from ..chunking import chunk_spans
from ..documents import DocumentRecord
from .base import Source
from .documents import Unreadable, format_of, read_document
from .documents.files import FileEntry, read, walk
from .documents.model import Document, short_error


@dataclass
class _Loaded:
    """One file, read and parsed on the reader thread: its document, or why it gave none."""

    document: Document | None
    record: DocumentRecord
    line: int | None = None  # the line to blame, for a text file that is not UTF-8


class FolderSource(Source):
    """A folder of documents, or one document (format ``document``: a folder of one file, its
    doc_id the file's name)."""

    format = "folder"

    def passages(self) -> Iterator[Passage]:
        if self.path.is_file():
            info = self.path.stat()
            entries, walk_problems = [FileEntry(self.path, self.path.name, info.st_size,
                                                info.st_mtime_ns)], []
            self._prefix = ""
        elif self.path.is_dir():
            entries, walk_problems = self._walk()
            self._prefix = f"{self.path.name}/"
        else:
            raise CorpusError(f"{self.path} is neither a folder nor a file.",
                              hint="Pass a folder of documents, or one document.")
        for problem in walk_problems:
            self.problems.skip(problem.path, None, problem.reason)
        wanted = [(e, format_of(e.path.suffix)) for e in entries]
        wanted = [(e, fmt) for e, fmt in wanted if fmt is not None]
        self.ignored += len(entries) - len(wanted)
        self.bytes_total = sum(e.size for e, _ in wanted)
        for entry, loaded in self._loaded(wanted):
            record, count = loaded.record, 0
            if loaded.document is not None:
                for passage in document_passages(loaded.document, self.corpus, record.doc_id,
                                                 record.source, _default_title(entry.path)):
                    count += 1
                    yield passage
                record = replace(record, passages=count,
                                 problem="" if count else "no text in this file")
            if record.problem:
                self.problems.skip(entry.path, loaded.line, record.problem)
            # recorded after its passages, so the ingest stores the record once they are committed
            self.documents.append(record)
            self.bytes_done += entry.size

    def _walk(self) -> tuple[list[FileEntry], list]:
        """The folder's files and the problems met finding them (a sync reads only some)."""
        return walk(self.path)

    def _loaded(self, wanted: list[tuple[FileEntry, str]]) -> Iterator[tuple[FileEntry, _Loaded]]:
        """Each file loaded, in order, up to ``read_ahead`` files ahead on a reader thread."""
        ahead = self.options.read_ahead
        if ahead < 1:
            for entry, fmt in wanted:
                yield entry, self._load(entry, fmt)
            return
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="searchain-read")
        pending: deque[tuple[FileEntry, Future]] = deque()
        todo = iter(wanted)
        try:
            while True:
                while len(pending) <= ahead:
                    job = next(todo, None)
                    if job is None:
                        break
                    pending.append((job[0], pool.submit(self._load, *job)))
                if not pending:
                    return
                entry, future = pending.popleft()
                yield entry, future.result()
        finally:  # also when the ingest stops early (cancelled): drop what was not started
            pool.shutdown(wait=True, cancel_futures=True)

    def _load(self, entry: FileEntry, fmt: str) -> _Loaded:
        """Read, hash and parse one file; every failure becomes its problem line."""
        record = DocumentRecord(f"{self._prefix}{entry.relative}", str(entry.path), fmt,
                                entry.size, entry.mtime_ns)
        try:
            data = read(entry, self.options.max_file_bytes)
            record = replace(record, sha256=hashlib.sha256(data).hexdigest())
            return _Loaded(read_document(data, fmt), record)
        except Unreadable as exc:
            return _Loaded(None, replace(record, problem=exc.reason), exc.line)
        except Exception as exc:  # noqa: BLE001 - one bad file must not stop the folder
            reason = f"could not be read ({type(exc).__name__}: {short_error(exc)})"
            return _Loaded(None, replace(record, problem=reason))


def document_passages(document: Document, corpus: str, doc_id: str, source: str,
                      default_title: str) -> Iterator[Passage]:
    """The passages of one read document: each part chunked on its own (see module doc)."""
    title = document.title or default_title
    text = document.text
    k = 0
    for part in document.parts:
        for start, end in chunk_spans(text, part.start, part.end):
            yield Passage(corpus, f"{doc_id}#{k}", title, text[start:end], source, doc_id, start,
                          end, page=part.page, section=part.section)
            k += 1


def _default_title(path: Path) -> str:
    return path.stem.replace("_", " ").strip()
