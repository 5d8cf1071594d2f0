"""Dense retrieval: the query's embedding against the corpus's compact vector index (cosine)."""

from __future__ import annotations

import numpy as np

from ..errors import IndexError_
from ..types import Hit
from .ann.vector_index import VectorIndex, open_vector_index, read_meta
from .embed.embedder import Embedder
from .layout import IndexLayout, IndexMeta, rebuild_hint
from .passages import PassageSource
from .status import mismatch_message

NAME = "dense"


def open_vectors(layout: IndexLayout, corpus_name: str, embedder: Embedder, *,
                 verify_checksum: bool = True) -> tuple[VectorIndex, IndexMeta]:
    """Open a corpus's vector index after checking it was built by ``embedder`` and is intact."""
    meta = read_meta(layout, corpus_name)
    if meta.embedder != embedder.model_id:
        raise IndexError_(mismatch_message(corpus_name, meta.embedder, embedder.model_id),
                          hint=rebuild_hint(corpus_name))
    return open_vector_index(layout, corpus_name, meta, verify_checksum=verify_checksum), meta


class DenseRetriever:
    name = NAME

    def __init__(self, source: PassageSource, index: VectorIndex, embedder: Embedder):
        self.source = source
        self.index = index
        self.embedder = embedder

    def embed_query(self, query: str) -> np.ndarray:
        return self.embedder.encode([query], batch_size=1)[0]

    def scores(self, query_vec: np.ndarray, k: int) -> list[tuple[int, float]]:
        """``[(passage id, cosine)]`` best first (exact cosines of the best candidates)."""
        ids, sims = self.index.search(query_vec, k)
        return [(int(i), float(s)) for i, s in zip(ids, sims)]

    def similarities(self, query_vec: np.ndarray, ids: list[int]) -> dict[int, float]:
        """Exact cosine of the query with the stored vectors of ``ids`` (those indexed)."""
        return self.index.similarities(query_vec, ids)

    def search(self, query: str, k: int = 5) -> list[Hit]:
        if not query.strip() or k <= 0:
            return []
        ranked = self.scores(self.embed_query(query), k)
        passages = self.source.fetch([i for i, _ in ranked])
        return [Hit(passages[i], s, NAME) for i, s in ranked if i in passages]
