"""A document as the readers hand it over: one text, cut into parts that each know their page
or heading path, so passages (chunked within a part) never straddle a page or a section.

Readers build it block by block through ``DocumentBuilder``::

    doc = DocumentBuilder()
    doc.heading(1, "Results")          # a line of the text, but in no part (as in Markdown)
    doc.paragraph("We found ...")       # joins the open part, section "Results"
    doc.heading(2, "3.2 Errors")
    doc.paragraph("...")                # section "Results > 3.2 Errors"
    document = doc.build("Report")

A file that yields nothing raises ``Unreadable`` with the one line the ingest report shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SECTION_SEPARATOR = " > "  # between the headings of a path: "3 Methods > 3.2 Results"
_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")


class Unreadable(Exception):
    """The file gives no passages; ``reason`` says why in one line ("encrypted PDF: ..."),
    ``line`` where a line of a text file is to blame."""

    def __init__(self, reason: str, line: int | None = None):
        super().__init__(reason)
        self.reason = reason
        self.line = line


@dataclass(frozen=True)
class Part:
    """``text[start:end]`` of a document, all on ``page`` (1-based, or None) under ``section``."""

    start: int
    end: int
    page: int | None = None
    section: str = ""


@dataclass
class Document:
    title: str  # "" lets the folder use the file name
    text: str
    parts: list[Part] = field(default_factory=list)


class DocumentBuilder:
    """Accumulates text block by block (blocks end with a blank line) and the parts over it."""

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._length = 0
        self._headings: list[tuple[int, str]] = []  # (level, text), outermost first
        self._page: int | None = None
        self._part_start: int | None = None
        self.parts: list[Part] = []
        self.first_heading = ""
        self._top_headings: list[str] = []  # the written level-1 headings

    @property
    def section(self) -> str:
        return SECTION_SEPARATOR.join(text for _, text in self._headings)

    def heading(self, level: int, text: str, *, write: bool = True) -> None:
        """A heading of ``level`` (1 = outermost): closes the open part and becomes the path's
        last step, replacing any heading of the same or a deeper level. ``write=False`` puts it
        in the path only (a table-of-contents label that is not in the text)."""
        text = clean(text)
        if not text:
            return
        self._close_part()
        while self._headings and self._headings[-1][0] >= level:
            self._headings.pop()
        self._headings.append((level, text))
        if write:
            self.first_heading = self.first_heading or text
            if level == 1:
                self._top_headings.append(text)
            self._write(text + "\n\n")

    def reset_headings(self) -> None:
        """Forget the heading path (a new chapter file of an e-book starts afresh)."""
        self._close_part()
        self._headings = []

    def page(self, number: int, section: str = "") -> None:
        """Start page ``number``; ``section`` (from a PDF's outline) replaces the heading path."""
        self._close_part()
        self._page = number
        self._headings = [(1, section)] if section else []

    def paragraph(self, text: str, *, keep_lines: bool = False) -> None:
        """A block of body text; whitespace runs collapse (line breaks too unless ``keep_lines``)."""
        text = clean(text, keep_lines=keep_lines)
        if not text:
            return
        if self._part_start is None:
            self._part_start = self._length
        self._write(text + "\n\n")

    def text_block(self, text: str) -> None:
        """Text kept as extracted (a PDF page's lines), only trimmed; blank lines inside it
        stay, and the chunker prefers to cut there."""
        text = text.strip()
        if not text:
            return
        if self._part_start is None:
            self._part_start = self._length
        self._write(text + "\n\n")

    def build(self, title: str = "") -> Document:
        """The document; a single level-1 heading that is (part of) its title is left out of
        the paths: it names the whole document, which the citation names already."""
        self._close_part()
        title = clean(title)
        parts = self.parts
        if len(self._top_headings) == 1 and self._top_headings[0] in title:  # "Guide | Site"
            top = self._top_headings[0]
            parts = [Part(p.start, p.end, p.page, drop_title(p.section, top)) for p in parts]
        return Document(title=title, text="".join(self._pieces), parts=parts)

    def _write(self, text: str) -> None:
        self._pieces.append(text)
        self._length += len(text)

    def _close_part(self) -> None:
        if self._part_start is not None:
            # the part ends before the blank line that closed its last block
            self.parts.append(Part(self._part_start, self._length - 2, self._page, self.section))
            self._part_start = None


def clean(text: str, *, keep_lines: bool = False) -> str:
    """``text`` with runs of spaces as one space and no blank lines inside (a block stays one
    block), trimmed; with ``keep_lines`` single line breaks are kept (preformatted text)."""
    if keep_lines:
        lines = (_SPACES.sub(" ", line).strip() for line in text.splitlines())
        return "\n".join(line for line in lines if line)
    return _SPACES.sub(" ", text.replace("\n", " ")).strip()


def short_error(exc: BaseException) -> str:
    """The first line of a library's error, at most 160 characters, for a one-line reason."""
    text = str(exc).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:160]


def drop_title(section: str, title: str) -> str:
    """``section`` without a leading ``title`` step: "Guide > Install" -> "Install"."""
    if section == title:
        return ""
    return section.removeprefix(title + SECTION_SEPARATOR)
