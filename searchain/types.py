"""Small value types shared across subsystems."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Passage:
    """One retrievable unit of a corpus (about 100 words, as in DPR).

    ``pid`` is stable within its corpus (the source's own id where it has one). ``source`` says
    where the passage came from (file path, dump name, or dataset record) and ``start``/``end``
    are character offsets of ``text`` within the source document ``doc_id``.

    ``url`` and ``section`` are filled where the source knows them (a ZIM or MediaWiki article):
    the article's address (inside the ZIM file, or on the web when the file names its wiki) and
    the heading path of the passage's section, e.g. ``"History > Early years"``; "" otherwise.
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


@dataclass(frozen=True)
class Hit:
    """A passage returned by a retriever, with the retriever's score (higher is better)."""

    passage: Passage
    score: float
    retriever: str
