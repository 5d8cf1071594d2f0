"""Searching several corpora at once: one retriever per corpus, their rankings fused.

Each corpus keeps its own passage store and index (nothing is merged or rebuilt when a chat
adds a corpus); ``MixedRetriever`` asks each corpus's first stage for ``depth`` candidates and
merges them. Scores from separate indexes are mostly not comparable: BM25 depends on each
corpus's own term statistics, and hybrid scores are standardised over each corpus's own
candidates, so a raw-score merge would let the corpus with the widest score spread win every
time. So:

- **hybrid and BM25**: reciprocal-rank fusion (``hybrid.rrf``, the function hybrid retrieval
  uses for ``method="rrf"``). A passage is in one corpus's list only, so this interleaves the
  corpora by rank: each corpus's best, then each one's second... Which corpus leads at each rank
  is decided by a score that *is* comparable across corpora: the query's cosine with the
  passage (one embedding model for every corpus; hybrid), or the share of the query's keywords
  the passage holds (BM25). This matters most at the top: SearChain checks a node against the
  single best passage (``top_k`` 1), which must not always come from the corpus named first.
- **dense**: the cosines are one scale (same model, same metric), so the lists are merged by
  cosine: the true top k over all the corpora.

When a cross-encoder re-ranker is set (``retrieval.reranker``), ``open_retriever`` re-ranks the
merged candidates once, jointly: its scores are comparable too. A hit's passage keeps its
``corpus``, so citations, the store and the CLI say which corpus a passage came from.
"""

from __future__ import annotations

from typing import Sequence

from ..errors import ConfigError
from ..types import Hit
from .bm25.query import keywords, tokenize
from .dense import DenseRetriever
from .hybrid import HybridRetriever, rrf

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
        query_vec = self._query_vector(query)
        lists = [self._candidates(part, query, depth, query_vec) for part in self.parts.values()]
        if query_vec is not None and all(isinstance(p, DenseRetriever) for p in self.parts.values()):
            merged = sorted((pair for pairs in lists for pair in pairs), key=lambda pair: -pair[1])
            return [Hit(hit.passage, cosine, self.name) for hit, cosine in merged[:k]]
        found = {(h.passage.corpus, h.passage.pid): (h, c) for pairs in lists for h, c in pairs}
        fused = rrf([[(h.passage.corpus, h.passage.pid) for h, _ in pairs] for pairs in lists])
        # Equal fused scores (the same rank in two corpora): the more relevant passage first.
        ranked = sorted(fused, key=lambda key: (-fused[key], -found[key][1]))[:k]
        return [Hit(found[key][0].passage, fused[key], self.name) for key in ranked]

    def _query_vector(self, query: str):
        """The query embedded once for every corpus (they share the model), or None (BM25)."""
        for part in self.parts.values():
            dense = part if isinstance(part, DenseRetriever) else getattr(part, "dense", None)
            if isinstance(dense, DenseRetriever):
                return dense.embed_query(query)
        return None

    @staticmethod
    def _candidates(part, query: str, depth: int, query_vec) -> list[tuple[Hit, float]]:
        """One corpus's candidates, best first, each with a relevance comparable across corpora."""
        if isinstance(part, DenseRetriever) and query_vec is not None:
            ranked = part.scores(query_vec, depth)
            passages = part.source.fetch([i for i, _ in ranked])
            return [(Hit(passages[i], s, part.name), s) for i, s in ranked if i in passages]
        if isinstance(part, HybridRetriever) and query_vec is not None:
            fused = part.fused_scores(query, depth, query_vec=query_vec)
            cosines = part.dense.similarities(query_vec, [i for i, _, _ in fused])
            return [(Hit(p, s, part.name), cosines.get(i, -1.0)) for i, s, p in fused]
        words = set(keywords(query))
        return [(hit, keyword_share(words, hit.passage)) for hit in part.search(query, depth)]

    def close(self) -> None:
        for retriever in self.parts.values():
            source = getattr(retriever, "source", None)
            if source is not None and hasattr(source, "close"):
                source.close()


def keyword_share(words: set[str], passage) -> float:
    """The share of the query's keywords found in the passage's title or text: unlike a BM25
    score it does not depend on the corpus's statistics."""
    if not words:
        return 0.0
    return len(words & set(tokenize(f"{passage.title} {passage.text}"))) / len(words)
