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
"""

from __future__ import annotations

import hashlib
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


class FolderSource(Source):
    format = "folder"

    def passages(self) -> Iterator[Passage]:
        if not self.path.is_dir():
            raise CorpusError(f"{self.path} is not a folder.", hint="Pass a folder of documents.")
        entries, walk_problems = walk(self.path)
        for problem in walk_problems:
            self.problems.skip(problem.path, None, problem.reason)
        wanted = [(e, format_of(e.path.suffix)) for e in entries]
        wanted = [(e, fmt) for e, fmt in wanted if fmt is not None]
        self.ignored += len(entries) - len(wanted)
        self.bytes_total = sum(e.size for e, _ in wanted)
        for entry, fmt in wanted:
            yield from self._file(entry, fmt)
            self.bytes_done += entry.size

    def _file(self, entry: FileEntry, fmt: str) -> Iterator[Passage]:
        doc_id = f"{self.path.name}/{entry.relative}"
        digest = ""
        try:
            data = read(entry, self.options.max_file_bytes)
            digest = hashlib.sha256(data).hexdigest()
            document = read_document(data, fmt)
            passages = list(document_passages(document, self.corpus, doc_id, str(entry.path),
                                              _default_title(entry.path)))
            if not passages:
                raise Unreadable("no text in this file")
        except Unreadable as exc:
            self._record(entry, doc_id, fmt, digest, 0, exc.reason, exc.line)
            return
        except Exception as exc:  # noqa: BLE001 - one bad file must not stop the folder
            self._record(entry, doc_id, fmt, digest, 0,
                         f"could not be read ({type(exc).__name__}: {short_error(exc)})")
            return
        yield from passages
        # recorded after its passages, so the ingest stores the record after they are committed
        self._record(entry, doc_id, fmt, digest, len(passages))

    def _record(self, entry: FileEntry, doc_id: str, fmt: str, digest: str, count: int,
                problem: str = "", line: int | None = None) -> None:
        if problem:
            self.problems.skip(entry.path, line, problem)
        self.documents.append(DocumentRecord(doc_id, str(entry.path), fmt, entry.size,
                                             entry.mtime_ns, digest, count, problem))


def document_passages(document: Document, corpus: str, doc_id: str, source: str,
                      default_title: str) -> Iterator[Passage]:
    """The passages of one read document: each part chunked on its own (see module doc)."""
    title = document.title or default_title
    text = document.text
    k = 0
    for part in document.parts:
        for start, end in chunk_spans(text, part.start, part.end):
            yield Passage(corpus, f"{doc_id}#{k}", title, text[start:end], source, doc_id, start,
                          end, part.page, part.section)
            k += 1


def _default_title(path: Path) -> str:
    return path.stem.replace("_", " ").strip()
