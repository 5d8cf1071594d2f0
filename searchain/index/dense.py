"""Dense retrieval: the query's embedding against the corpus's HNSW graph (cosine)."""

from __future__ import annotations

import numpy as np

from ..errors import IndexError_
from ..types import Hit
from .embedder import Embedder
from .hnsw import HnswIndex
from .layout import IndexLayout, IndexMeta, build_hint, rebuild_hint, repair_hint
from .passages import PassageSource
from .status import graph_problem, mismatch_message

NAME = "dense"


def open_graph(layout: IndexLayout, corpus_name: str, embedder: Embedder, *, ef: int,
               verify_checksum: bool = True) -> tuple[HnswIndex, IndexMeta]:
    """Load a corpus's graph after checking it was built by ``embedder`` and is intact."""
    if not layout.meta_file.exists():
        raise IndexError_(f"Corpus '{corpus_name}' has no finished vector index.",
                          hint=build_hint(corpus_name) + " Keyword search (--retriever bm25) "
                          "needs no vector index.")
    meta = IndexMeta.read(layout.meta_file, corpus_name)
    if meta.embedder != embedder.model_id:
        raise IndexError_(mismatch_message(corpus_name, meta.embedder, embedder.model_id),
                          hint=rebuild_hint(corpus_name))
    hint = repair_hint(corpus_name)
    problem = graph_problem(layout.hnsw_file, meta, verify_checksum)
    if problem:
        raise IndexError_(f"The vector index of corpus '{corpus_name}' is damaged: {problem}.",
                          hint=hint)
    graph = HnswIndex.load(layout.hnsw_file, meta.dim, expected_sha256=None, m=meta.hnsw_m,
                           ef_construction=meta.hnsw_ef_construction, ef=ef,
                           what=f"corpus '{corpus_name}'", hint=hint)
    graph.deleted = max(0, graph.count - meta.count)
    return graph, meta


class DenseRetriever:
    name = NAME

    def __init__(self, source: PassageSource, graph: HnswIndex, embedder: Embedder):
        self.source = source
        self.graph = graph
        self.embedder = embedder
        self._labels = np.sort(graph.labels())  # for "is this id in the graph" lookups

    def embed_query(self, query: str) -> np.ndarray:
        return self.embedder.encode([query], batch_size=1)[0]

    def scores(self, query_vec: np.ndarray, k: int) -> list[tuple[int, float]]:
        """``[(passage id, cosine)]`` best first."""
        labels, sims = self.graph.search(query_vec, k)
        return [(int(i), float(s)) for i, s in zip(labels[0], sims[0])]

    def similarities(self, query_vec: np.ndarray, ids: list[int]) -> dict[int, float]:
        """Exact cosine of the query with the stored vectors of ``ids`` (those in the graph)."""
        ids_arr = np.asarray(ids, dtype=np.int64)
        pos = np.searchsorted(self._labels, ids_arr)
        present = ids_arr[(pos < len(self._labels)) & (self._labels[np.minimum(pos, len(self._labels) - 1)] == ids_arr)] \
            if len(self._labels) else ids_arr[:0]
        if not len(present):
            return {}
        vecs = self.graph.vectors(present.tolist())
        return {int(i): float(s) for i, s in zip(present, vecs @ query_vec)}

    def search(self, query: str, k: int = 5) -> list[Hit]:
        if not query.strip() or k <= 0:
            return []
        ranked = self.scores(self.embed_query(query), k)
        passages = self.source.fetch([i for i, _ in ranked])
        return [Hit(passages[i], s, NAME) for i, s in ranked if i in passages]
