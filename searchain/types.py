"""Small value types shared across subsystems."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath


@dataclass(frozen=True)
class Passage:
    """One retrievable unit of a corpus (about 100 words, as in DPR).

    ``pid`` is stable within its corpus (the source's own id where it has one). ``source`` says
    where the passage came from (file path, dump name, or dataset record) and ``start``/``end``
    are character offsets of ``text`` within the source document ``doc_id``.

    ``url`` and ``section`` are filled where the source knows them: ``url`` is a ZIM or MediaWiki
    article's address (inside the ZIM file, or on the web when the file names its wiki);
    ``section`` is the heading path of the passage's section in an article or a document, e.g.
    ``"History > Early years"`` or ``"3 Methods > 3.2 Results"``; "" otherwise. ``page`` is the
    1-based page of a paged document (PDF), None otherwise; a passage never spans two pages.
    They come last, with defaults, so positional construction elsewhere keeps working.
    """

    corpus: str
    pid: str
    title: str
    text: str
    source: str = ""
    doc_id: str = ""
    start: int = 0
    end: int = 0
    url: str = ""
    section: str = ""
    page: int | None = None

    def location(self) -> str:
        """Where in its file the passage is, as a citation shows it: ``"report.pdf, p. 12 - 3.2
        Results"``; "" when neither page nor section is known (a Wikipedia passage, a .txt)."""
        if self.page is None and not self.section:
            return ""
        where = [PurePath(self.source.replace("\\", "/")).name] if self.source else []
        if self.page is not None:
            where.append(f"p. {self.page}")
        text = ", ".join(where)
        if self.section:
            text = f"{text} - {self.section}" if text else self.section
        return text


@dataclass(frozen=True)
class Hit:
    """A passage returned by a retriever, with the retriever's score (higher is better)."""

    passage: Passage
    score: float
    retriever: str
