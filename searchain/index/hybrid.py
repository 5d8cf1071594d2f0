"""Hybrid retrieval: dense and BM25 candidates, fused into one ranking.

Both retrievers propose ``depth`` candidates. With score fusion every candidate then gets
*both* scores: the exact cosine from its stored vector and its BM25 score restricted to the
candidate ids, so a passage found by one side is not penalised for sitting just outside the
other side's list. Each score is normalised over the candidates and the two are mixed with
``dense_weight``:

- ``method="zscore"`` (default): standard scores, so both sides enter with the same spread
  over the candidates; with min-max the two extremes alone set each side's scale.
- ``method="minmax"``: scaled to [0, 1].
- ``"score"``, the name saved by earlier versions for "normalised score fusion", means
  ``"zscore"``: settings files write every field, so mapping it to min-max would pin old
  installs to the weaker normalisation they never chose.
- ``method="rrf"``: weighted reciprocal-rank fusion over the two lists (rank-only; kept for
  comparison in ``searchain bench retrieval``).

With a second embedding model (``second``, a ``DenseRetriever`` over the corpus's second index)
the dense side is the mean of the two models' normalised cosines: the candidates still come
from the first model and BM25, and the second model only re-scores them. Two models that err
differently average out part of each one's mistakes (measured in docs/retrieval.md).
"""

from __future__ import annotations

from ..types import Hit, Passage
from .bm25.fts5 import BM25Retriever
from .bm25.query import title_match, tokenize
from .dense import DenseRetriever

NAME = "hybrid"
METHODS = ("zscore", "minmax", "rrf")
_ALIASES = {"score": "zscore"}
RRF_K = 60


class HybridRetriever:
    name = NAME

    def __init__(self, dense: DenseRetriever, bm25: BM25Retriever, *, dense_weight: float = 0.5,
                 depth: int = 50, method: str = "zscore", title_boost: float = 0.0,
                 second: DenseRetriever | None = None):
        method = _ALIASES.get(method, method)
        if not 0.0 <= dense_weight <= 1.0:
            raise ValueError(f"dense_weight must be between 0 and 1, got {dense_weight}")
        if method not in METHODS:
            raise ValueError(f"fusion method must be one of {METHODS}, got {method!r}")
        self.dense = dense
        self.bm25 = bm25
        self.dense_weight = dense_weight
        self.depth = max(1, depth)
        self.method = method
        self.title_boost = title_boost
        self.second = second
        self.source = bm25.source

    def fused_scores(self, query: str, k: int, query_vec=None) -> list[tuple[int, float, Passage]]:
        """``[(passage id, fused score, passage)]`` best first; ``query_vec``: the query already
        embedded by this model (``mixed`` embeds it once for every corpus)."""
        depth = max(self.depth, k)
        qv = self.dense.embed_query(query) if query_vec is None else query_vec
        dense_ranked = self.dense.scores(qv, depth)
        bm25_ranked = self.bm25.scores(query, depth)
        if self.method == "rrf":
            dense_lists = [dense_ranked]
            if self.second is not None:
                dense_lists.append(self.second.scores(self.second.embed_query(query), depth))
            fused = _weighted_rrf(dense_lists, bm25_ranked, self.dense_weight)
        else:
            cands = list(dict.fromkeys([i for i, _ in dense_ranked] + [i for i, _ in bm25_ranked]))
            dense_s = dict(dense_ranked)
            missing = [i for i in cands if i not in dense_s]
            dense_s.update(self.dense.similarities(qv, missing))
            dense_sides = [dense_s]
            if self.second is not None:
                dense_sides.append(self.second.similarities(self.second.embed_query(query), cands))
            bm25_s = dict(bm25_ranked)
            missing = [i for i in cands if i not in bm25_s]
            if missing:
                bm25_s.update(self.bm25.scores(query, len(missing), restrict_to=missing))
            fused = _score_fusion(cands, dense_sides, bm25_s, self.dense_weight, self.method)
        # Passages deleted since the last build drop out here.
        passages = self.source.fetch(list(fused))
        if self.title_boost:
            q_tokens = tokenize(query)
            for i, p in passages.items():
                fused[i] += self.title_boost * title_match(p.title, q_tokens)
        ranked = sorted((kv for kv in fused.items() if kv[0] in passages), key=lambda kv: -kv[1])
        return [(i, s, passages[i]) for i, s in ranked[:k]]

    def search(self, query: str, k: int = 5) -> list[Hit]:
        if not query.strip() or k <= 0:
            return []
        return [Hit(p, s, NAME) for _, s, p in self.fused_scores(query, k)]


def _minmax(scores: dict[int, float], ids: list[int], missing: float) -> dict[int, float]:
    """Scale to [0, 1] over ``ids``; an id without a score gets ``missing`` (before scaling)."""
    values = [scores.get(i, missing) for i in ids]
    lo, hi = min(values), max(values)
    span = hi - lo
    return {i: ((v - lo) / span if span > 0 else 1.0) for i, v in zip(ids, values)}


def _zscore(scores: dict[int, float], ids: list[int], missing: float) -> dict[int, float]:
    """Standard scores over ``ids``; an id without a score gets ``missing`` first."""
    values = [scores.get(i, missing) for i in ids]
    mean = sum(values) / len(values)
    std = (sum((v - mean) ** 2 for v in values) / len(values)) ** 0.5
    return {i: ((v - mean) / std if std > 0 else 0.0) for i, v in zip(ids, values)}


def _score_fusion(cands: list[int], dense_sides: list[dict[int, float]], bm25_s: dict[int, float],
                  w: float, method: str) -> dict[int, float]:
    """``w`` times the mean normalised cosine over the embedding models, plus ``1 - w`` times the
    normalised BM25 score."""
    if not cands:
        return {}
    # No keyword match means a BM25 score of 0; a passage missing from a graph (stale index)
    # gets the lowest cosine seen.
    norm = _zscore if method == "zscore" else _minmax
    ds = [norm(side, cands, min(side.values(), default=0.0)) for side in dense_sides]
    b = norm(bm25_s, cands, 0.0)
    return {i: w * sum(d[i] for d in ds) / len(ds) + (1.0 - w) * b[i] for i in cands}


def _weighted_rrf(dense_lists, bm25_ranked, w: float) -> dict[int, float]:
    weighted = [(w / len(dense_lists), ranked) for ranked in dense_lists] + [(1.0 - w, bm25_ranked)]
    return rrf([[i for i, _ in ranked] for _, ranked in weighted], [weight for weight, _ in weighted])


def rrf(ranked_lists, weights=None) -> dict:
    """Weighted reciprocal-rank fusion: each key gets the sum over the lists it is in of
    ``weight / (RRF_K + rank)`` (rank 1-based). Rank-only, so it fuses lists whose scores are
    not comparable (dense and BM25 here; separate corpora in ``mixed``). Keys keep the order of
    first appearance, so a stable sort breaks ties by list order."""
    weights = [1.0] * len(ranked_lists) if weights is None else list(weights)
    fused: dict = {}
    for weight, ranked in zip(weights, ranked_lists):
        for rank, key in enumerate(ranked):
            fused[key] = fused.get(key, 0.0) + weight / (RRF_K + rank + 1)
    return fused
