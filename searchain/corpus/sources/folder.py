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

In one process, files are read and parsed ahead on one reader thread (``SourceOptions.read_ahead``
files) while the caller's thread chunks and stores the file before: file reads, hashing and
SQLite release the GIL and overlap, PDFium does not (measured; BENCHMARKS.md), so for PDFs the
overlap that pays comes from worker processes. With worker processes (``parallel``),
``work_items`` hands out the same files in the same order, one large file or a group of small
ones per item, and ``parse_item`` reads, parses and chunks them in a worker; the caller only
stores. A file whose reader kills its worker process (a crash inside PDFium) becomes that file's
problem line (``item_died``), and the other files of its item are read again one by one.
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

ITEM_BYTES = 256_000  # small files are grouped into items of about this many bytes ...
ITEM_FILES = 8  # ... and at most this many files, so a worker's round trip pays for itself ...
ITEMS_AT_LEAST = 32  # ... but a small folder is cut into about this many, so workers share it evenly
CRASHED = ("reading it made the reader process crash (a fault in the format's library, e.g. "
           "PDFium, on this file); the other files were read: re-export or repair the file")


@dataclass
class _Loaded:
    """One file, read and parsed: its document, or why it gave none."""

    document: Document | None
    record: DocumentRecord
    line: int | None = None  # the line to blame, for a text file that is not UTF-8


class FolderSource(Source):
    """A folder of documents, or one document (format ``document``: a folder of one file, its
    doc_id the file's name)."""

    format = "folder"
    _planned: tuple[list, list[tuple[FileEntry, str]]] | None = None

    # -- in one process --------------------------------------------------------------------

    def passages(self) -> Iterator[Passage]:
        wanted = self._start()
        for entry, loaded in self._loaded(wanted):
            yield from self._file_passages(entry, loaded)
            self.bytes_done += entry.size

    def _walk(self) -> tuple[list[FileEntry], list]:
        """The folder's files and the problems met finding them (a sync reads only some)."""
        return walk(self.path)

    def _plan(self) -> tuple[list, list[tuple[FileEntry, str]]]:
        """The walk's problems and the supported files with their formats (walked once)."""
        if self._planned is None:
            if self.path.is_file():
                info = self.path.stat()
                entries, walk_problems = [FileEntry(self.path, self.path.name, info.st_size,
                                                    info.st_mtime_ns)], []
            elif self.path.is_dir():
                entries, walk_problems = self._walk()
            else:
                raise CorpusError(f"{self.path} is neither a folder nor a file.",
                                  hint="Pass a folder of documents, or one document.")
            wanted = [(e, format_of(e.path.suffix)) for e in entries]
            self._planned = (walk_problems, [(e, fmt) for e, fmt in wanted if fmt is not None])
            self.ignored += len(entries) - len(self._planned[1])
        return self._planned

    def _start(self) -> list[tuple[FileEntry, str]]:
        """Report the walk's problems and set the total; the files to read, in order."""
        walk_problems, wanted = self._plan()
        for problem in walk_problems:
            self.problems.skip(problem.path, None, problem.reason)
        self.bytes_total = sum(e.size for e, _ in wanted)
        return wanted

    @property
    def _prefix(self) -> str:
        return "" if self.path.is_file() else f"{self.path.name}/"

    def _file_passages(self, entry: FileEntry, loaded: _Loaded) -> Iterator[Passage]:
        """One loaded file's passages; then its record (and problem, if any) is noted."""
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

    def _record(self, entry: FileEntry, fmt: str, doc_id: str | None = None) -> DocumentRecord:
        return DocumentRecord(doc_id or f"{self._prefix}{entry.relative}", str(entry.path), fmt,
                              entry.size, entry.mtime_ns)

    def _load(self, entry: FileEntry, fmt: str, doc_id: str | None = None) -> _Loaded:
        """Read, hash and parse one file; every failure becomes its problem line."""
        record = self._record(entry, fmt, doc_id)
        try:
            data = read(entry, self.options.max_file_bytes)
            record = replace(record, sha256=hashlib.sha256(data).hexdigest())
            return _Loaded(read_document(data, fmt), record)
        except Unreadable as exc:
            return _Loaded(None, replace(record, problem=exc.reason), exc.line)
        except Exception as exc:  # noqa: BLE001 - one bad file must not stop the folder
            reason = f"could not be read ({type(exc).__name__}: {short_error(exc)})"
            return _Loaded(None, replace(record, problem=reason))

    # -- in worker processes (``parallel``) ------------------------------------------------

    def work_bytes(self) -> int:
        """The supported files' bytes: whether worker processes pay for starting them."""
        return sum(e.size for e, _ in self._plan()[1])

    def work_items(self) -> Iterator[tuple[tuple, int]]:
        """``(("files", files), bytes_done)``: a large file alone or a run of small ones, in
        the walk's order; each file as ``(path, relative, size, mtime_ns, format, doc_id)``."""
        group: list[tuple] = []
        group_bytes = done = 0
        wanted = self._start()
        limit = min(ITEM_BYTES, self.bytes_total // ITEMS_AT_LEAST)
        for entry, fmt in wanted:
            if group and (group_bytes + entry.size > limit or len(group) >= ITEM_FILES):
                yield ("files", tuple(group)), done
                group, group_bytes = [], 0
            group.append((str(entry.path), entry.relative, entry.size, entry.mtime_ns, fmt,
                          f"{self._prefix}{entry.relative}"))
            group_bytes += entry.size
            done += entry.size
        if group:
            yield ("files", tuple(group)), done

    def parse_item(self, item: tuple) -> list[Passage]:
        """The passages of an item's files, in order; their records go to ``documents``."""
        passages: list[Passage] = []
        for entry, fmt, doc_id in map(_file_of, item[1]):
            passages.extend(self._file_passages(entry, self._load(entry, fmt, doc_id)))
        return passages

    def split_item(self, item: tuple, done: int) -> list[tuple[tuple, int]]:
        """An item whose worker died, as one item per file (``[]`` when it is one file)."""
        files = item[1]
        if len(files) < 2:
            return []
        ends, after = [], done
        for f in reversed(files):
            ends.append(after)
            after -= f[2]
        return [(("files", (f,)), end) for f, end in zip(files, reversed(ends))]

    def item_died(self, item: tuple, detail: str = "") -> None:
        """A one-file item killed its worker twice: the file's problem line and record."""
        for entry, fmt, doc_id in map(_file_of, item[1]):
            record = self._record(entry, fmt, doc_id)
            try:  # hashed here (reading bytes is safe) so that a sync sees when it changes
                record = replace(record, sha256=hashlib.sha256(
                    read(entry, self.options.max_file_bytes)).hexdigest())
            except Unreadable:
                pass
            reason = CRASHED + (f" ({detail})" if detail else "")
            self.problems.skip(entry.path, None, reason)
            self.documents.append(replace(record, problem=reason))


def _file_of(spec: tuple) -> tuple[FileEntry, str, str]:
    path, relative, size, mtime_ns, fmt, doc_id = spec
    return FileEntry(Path(path), relative, size, mtime_ns), fmt, doc_id


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
