"""A tiny in-memory retriever and a deterministic lexical reader.

They are real (if simple) implementations of the retriever and ``Reader`` interfaces, with no
model files: unit tests of the reasoning loop and ``searchain bench engine`` run on them. The
production path uses ``searchain.index.retrievers`` and ``searchain.reader``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Sequence

from ..reader.base import ReaderResult
from ..types import Hit, Passage

_WORD = re.compile(r"[A-Za-z0-9]+(?:[''][A-Za-z]+)?")
_STOP = frozenset(
    "a an the of in on at to for from by with and or is are was were be been who what when where "
    "which why how whom whose did do does has have had it its this that as into than then there "
    "can could would should will shall may might must not no yes".split()
)


def content_words(text: str) -> list[str]:
    """Lower-cased words of ``text`` without stop words."""
    return [w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP]


class InMemoryRetriever:
    """BM25 over a fixed list of passages (title + text), exact and deterministic."""

    name = "inmemory-bm25"

    def __init__(self, passages: Sequence[Passage], *, k1: float = 1.2, b: float = 0.75):
        self.passages = list(passages)
        self._docs = [Counter(content_words(f"{p.title} {p.text}")) for p in self.passages]
        self._lengths = [sum(d.values()) for d in self._docs]
        self._avg = (sum(self._lengths) / len(self._lengths)) if self._lengths else 1.0
        df: Counter = Counter()
        for d in self._docs:
            df.update(d.keys())
        n = len(self._docs)
        self._idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in df.items()}
        self.k1, self.b = k1, b

    def search(self, query: str, k: int = 1) -> list[Hit]:
        terms = content_words(query)
        scored = []
        for i, (doc, length) in enumerate(zip(self._docs, self._lengths)):
            score = 0.0
            for t in terms:
                tf = doc.get(t, 0)
                if tf:
                    norm = tf + self.k1 * (1 - self.b + self.b * length / self._avg)
                    score += self._idf[t] * tf * (self.k1 + 1) / norm
            if score > 0:
                scored.append((score, i))
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [Hit(self.passages[i], s, self.name) for s, i in scored[:k]]


class LexicalReader:
    """Extracts an answer span by word overlap; confidence on a 0..3 scale, θ = 1.5.

    The span is the first run of capitalised words or numbers, in the passage sentence that
    shares most words with the question, that does not repeat the question's own words.
    Confidence is 3 × the share of the question's content words found in the passage, so a
    passage that covers more than half of the question is "confident".
    """

    name = "lexical"

    def __init__(self, threshold: float = 1.5):
        self.threshold = threshold

    def read(self, question: str, title: str, passage_text: str) -> ReaderResult:
        q_words = set(content_words(question))
        p_words = set(content_words(f"{title} {passage_text}"))
        confidence = 3.0 * len(q_words & p_words) / len(q_words) if q_words else 0.0
        best: tuple[int, int] | None = None
        best_overlap = -1
        for sent in re.finditer(r"[^.!?]+[.!?]?", passage_text):
            overlap = len(q_words & set(content_words(sent.group(0))))
            span = self._span(sent.group(0), sent.start(), q_words)
            if span is not None and overlap > best_overlap:
                best, best_overlap = span, overlap
        if best is None:
            return ReaderResult("", 0, 0, 0.0, self.threshold)
        return ReaderResult(passage_text[best[0] : best[1]], best[0], best[1], confidence, self.threshold)

    def read_many(self, question: str, passages: list[tuple[str, str]]) -> list[ReaderResult]:
        return [self.read(question, title, text) for title, text in passages]

    @staticmethod
    def _span(sentence: str, offset: int, q_words: set[str]) -> tuple[int, int] | None:
        start = end = None
        for m in _WORD.finditer(sentence):
            word = m.group(0)
            candidate = (word[0].isupper() or word[0].isdigit()) and word.lower() not in q_words
            # A span is one run of such words separated by spaces only ("Toronto, Ontario" -> "Toronto").
            adjacent = start is None or not sentence[end : m.start()].strip()
            if candidate and word.lower() not in _STOP and adjacent:
                if start is None:
                    start = m.start()
                end = m.end()
            elif start is not None:
                break
        if start is None:
            return None
        return offset + start, offset + end
