"""Searching several corpora at once: one retriever per corpus, their rankings fused by rank.

Each corpus keeps its own passage store and index (nothing is merged or rebuilt when a chat
adds a corpus); ``MixedRetriever`` asks each corpus's retriever for ``depth`` candidates and
fuses the lists with reciprocal-rank fusion (``hybrid.rrf``, the function hybrid retrieval uses
for ``method="rrf"``). Scores from separate indexes are not comparable: BM25 depends on each
corpus's own term statistics, and hybrid scores are standardised over each corpus's own
candidates, so a raw-score merge would let the corpus with the widest score spread win every
time. Rank fusion only trusts each corpus's order. As every passage is in one corpus's list
only, the fused order interleaves the corpora by rank (each corpus's best, then each one's
second...), ties going to the corpus named first. When a cross-encoder re-ranker is set
(``retrieval.reranker``), ``open_retriever`` re-ranks the fused candidates once, jointly: its
scores are comparable across corpora, so it can put three passages of one corpus first.

A hit's passage keeps its ``corpus``, so citations, the store and the CLI say which corpus a
passage came from.
"""

from __future__ import annotations

from typing import Sequence

from ..errors import ConfigError
from ..types import Hit
from .hybrid import rrf

SEPARATOR = ","


def parse_corpora(value: str | Sequence[str]) -> list[str]:
    """Corpus names from ``"a,b"`` or a list, in order, without blanks or repeats.

    Corpus names cannot hold a comma (``corpus.manager``'s name rule), so ``"a,b"`` is never
    one corpus. Raises ``ConfigError`` when no name is left.
    """
    items = value.split(SEPARATOR) if isinstance(value, str) else [str(v) for v in value]
    names = list(dict.fromkeys(n.strip() for n in items if n and n.strip()))
    if not names:
        raise ConfigError(f"No corpus named in {value!r}.",
                          hint="Name one corpus, or several separated by commas: wiki,papers.")
    return names


class MixedRetriever:
    """The ``Retriever`` over several corpora: ``parts`` maps corpus name to its retriever."""

    def __init__(self, parts: dict[str, object], *, depth: int = 50):
        if not parts:
            raise ValueError("a mixed retriever needs at least one corpus")
        self.parts = dict(parts)
        self.corpora = list(self.parts)
        self.depth = max(1, depth)
        kinds = list(dict.fromkeys(getattr(r, "name", "?") for r in self.parts.values()))
        self.name = f"{'/'.join(kinds)}+mixed"
        self.source = None  # several stores; ``close`` closes them all

    def search(self, query: str, k: int = 5) -> list[Hit]:
        if not query.strip() or k <= 0:
            return []
        depth = max(self.depth, k)
        lists = [retriever.search(query, depth) for retriever in self.parts.values()]
        hits = {(h.passage.corpus, h.passage.pid): h for hits in lists for h in hits}
        fused = rrf([[(h.passage.corpus, h.passage.pid) for h in hits] for hits in lists])
        ranked = sorted(fused.items(), key=lambda kv: -kv[1])[:k]  # stable: first corpus wins ties
        return [Hit(hits[key].passage, score, self.name) for key, score in ranked]

    def close(self) -> None:
        for retriever in self.parts.values():
            source = getattr(retriever, "source", None)
            if source is not None and hasattr(source, "close"):
                source.close()
