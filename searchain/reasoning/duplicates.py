"""Duplicate-query detection: has the loop already processed (a query like) this one?

The authors scored query pairs with a cross-encoder (> 0.5); we use cosine similarity of the
retrieval embedder's normalised vectors (one ``encode`` call per new query, vectors cached).
Without an embedder, token-set Jaccard over SQuAD-normalised tokens stands in. A normalised exact
match is always a duplicate. A threshold above 1.0 switches detection off entirely.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..metrics import normalize_answer


class Embedder(Protocol):
    def encode(self, texts: list[str]) -> Any: ...  # rows of L2-normalised float vectors


class DuplicateDetector:
    """Remembers processed queries (the set M of Algorithm 1) and spots near-repeats."""

    def __init__(self, threshold: float, embedder: Embedder | None = None):
        self.threshold = threshold
        self.embedder = embedder
        self._texts: list[str] = []
        self._vectors: list[Any] = []
        self._pending: Any = None  # the last vector computed, and for which query
        self._pending_for: str | None = None

    @property
    def enabled(self) -> bool:
        return self.threshold <= 1.0

    def is_duplicate(self, query: str) -> bool:
        """Whether ``query`` repeats one already added."""
        if not self.enabled or not self._texts:
            return False
        norm = normalize_answer(query)
        if norm in self._texts:
            return True
        if self.embedder is not None:
            vec = self._vector(query)
            return any(float((vec * other).sum()) >= self.threshold for other in self._vectors)
        tokens = set(norm.split())
        return any(_jaccard(tokens, set(t.split())) >= self.threshold for t in self._texts)

    def add(self, query: str) -> None:
        self._texts.append(normalize_answer(query))
        if self.embedder is not None and self.enabled:
            self._vectors.append(self._pending if self._pending_for == query else self._vector(query))

    def _vector(self, query: str):
        import numpy as np

        vec = np.asarray(self.embedder.encode([query]), dtype="float32")[0]
        # Keep the last vector: is_duplicate() then add() of the same query encodes once.
        self._pending, self._pending_for = vec, query
        return vec


def _jaccard(a: set[str], b: set[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)
