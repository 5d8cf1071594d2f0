"""A folder of ``.txt`` and ``.md`` files (searched recursively), one document per file.

The title is the first ``# heading`` of a Markdown file, else the file name. Markdown files
are split at their headings (heading lines are not passage text) and each section is chunked
into ~100-word passages; offsets index the file's own text, so ``file_text[start:end]`` is
the passage. pids are ``"<folder>/<relative path>#<k>"``, stable for unchanged files.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Iterator

from ...errors import CorpusError
from ...types import Passage
from ..chunking import chunk_spans
from .base import Source, read_text_file

TEXT_SUFFIXES = (".txt", ".md", ".markdown")
_MD_HEADING = re.compile(r"^#{1,6}[ \t]+(.*?)[ \t#]*$", re.M)


class FolderSource(Source):
    format = "folder"

    def passages(self) -> Iterator[Passage]:
        if not self.path.is_dir():
            raise CorpusError(f"{self.path} is not a folder.", hint="Pass a folder of .txt/.md files.")
        files = sorted(p for p in self.path.rglob("*") if p.is_file() and not _hidden(p, self.path))
        texts = [p for p in files if p.suffix.lower() in TEXT_SUFFIXES]
        self.ignored += len(files) - len(texts)
        self.bytes_total = sum(p.stat().st_size for p in texts)
        for file in texts:
            yield from self._file(file)
            self.bytes_done += file.stat().st_size

    def _file(self, file: Path) -> Iterator[Passage]:
        text = read_text_file(file, self.problems)
        if text is None:
            return
        doc_id = f"{self.path.name}/{file.relative_to(self.path).as_posix()}"
        spans, title = document_spans(text, file)
        if not spans:
            self.problems.skip(file, None, "no text in this file")
            return
        for k, (start, end) in enumerate(spans):
            yield Passage(self.corpus, f"{doc_id}#{k}", title, text[start:end], str(file), doc_id, start, end)


def document_spans(text: str, file: Path) -> tuple[list[tuple[int, int]], str]:
    """Passage spans of one file and its title (see module doc)."""
    title = file.stem.replace("_", " ").strip()
    if file.suffix.lower() == ".txt":
        return chunk_spans(text), title
    headings = list(_MD_HEADING.finditer(text))
    if headings and headings[0].group(0).startswith("# "):
        title = headings[0].group(1).strip() or title
    spans: list[tuple[int, int]] = []
    section_start = 0
    for heading in headings:
        spans += chunk_spans(text, section_start, heading.start())
        section_start = heading.end()
    spans += chunk_spans(text, section_start, len(text))
    return spans, title


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)
