"""What every source shares: progress in bytes, the problem log, line-by-line file reading."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ...errors import CorpusError
from ...types import Passage
from ..chunking import chunk_spans
from ..documents import DocumentRecord
from ..problems import ProblemLog

LONG_RECORD_WORDS = 200  # a record longer than this is a document and gets chunked


@dataclass(frozen=True)
class SourceOptions:
    """Settings a source reads by (from ``Settings.corpus``): ``max_file_bytes`` is the size
    over which a folder's file is reported and not read (None: no limit); ``read_ahead`` how
    many files a folder reads ahead on its reader thread (0: none, all on the caller's thread)."""

    max_file_bytes: int | None = None
    read_ahead: int = 2


class Source:
    """Base class. Subclasses implement ``passages()``; ``bytes_done/bytes_total`` drive progress.

    ``ignored`` counts records left out on purpose (redirects, other namespaces, non-text
    files): not errors, but reported so nothing disappears unexplained. A source made of files
    appends a ``DocumentRecord`` per file to ``documents``; the ingest stores and clears them.
    """

    format = ""

    def __init__(self, path: Path, corpus: str, problems: ProblemLog,
                 options: SourceOptions | None = None):
        self.path = Path(path)
        self.corpus = corpus
        self.problems = problems
        self.options = options or SourceOptions()
        self.bytes_done = 0
        self.bytes_total = 0
        self.ignored = 0
        self.documents: list[DocumentRecord] = []

    def passages(self) -> Iterator[Passage]:
        raise NotImplementedError

    def record_passages(self, pid: str, title: str, text: str, source: str) -> list[Passage]:
        """A passage-level record as passages: kept whole, or chunked when document-sized.

        A chunked record's pieces get pids ``"<pid>#<k>"`` and offsets into the record's text.
        """
        if len(text.split()) <= LONG_RECORD_WORDS:
            return [Passage(self.corpus, pid, title, text, source, pid, 0, len(text))]
        return [Passage(self.corpus, f"{pid}#{k}", title, text[s:e], source, pid, s, e)
                for k, (s, e) in enumerate(chunk_spans(text))]

    def iter_lines(self) -> Iterator[tuple[int, str]]:
        """``(line_number, line)`` over a UTF-8 text file, tracking bytes for progress.

        An undecodable line, or one holding NUL bytes (binary data inside a text file), is
        logged as a problem and skipped, not fatal.
        """
        try:
            raw = open(self.path, "rb")
        except OSError as exc:
            raise CorpusError(f"Cannot read {self.path}: {exc.strerror or exc}",
                              hint="Check the path and its permissions.") from exc
        with raw:
            self.bytes_total = _size(self.path)
            for number, data in enumerate(raw, start=1):
                self.bytes_done += len(data)
                if number == 1 and data.startswith(b"\xef\xbb\xbf"):
                    data = data[3:]
                try:
                    line = data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    self.problems.skip(self.path, number, f"not valid UTF-8 ({exc.reason} at byte {exc.start})")
                    continue
                if "\0" in line:
                    self.problems.skip(self.path, number, "holds NUL bytes: binary data, not text")
                    continue
                yield number, line.rstrip("\r\n")

    def iter_json_lines(self) -> Iterator[tuple[int, object]]:
        """``(line_number, value)`` for each non-blank JSON line; invalid JSON is logged and skipped."""
        for number, line in self.iter_lines():
            if not line.strip():
                continue
            try:
                yield number, json.loads(line)
            except ValueError as exc:
                self.problems.skip(self.path, number, f"invalid JSON: {exc}")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0
