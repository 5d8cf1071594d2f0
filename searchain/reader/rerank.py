"""Optional re-ranking: read the top-k retrieved passages and let the reader pick the best one.

With k = 1 (the paper's setting) the order cannot change; with k > 1 the reader's confidence
(DPR: the passage relevance logit) orders the passages, ties keeping the retriever's order.
"""

from __future__ import annotations

from dataclasses import replace

from ..types import Hit
from .base import Reader, ReaderResult


def rerank_with_results(reader: Reader, question: str, hits: list[Hit], k: int) -> list[tuple[Hit, ReaderResult]]:
    """The first ``k`` hits, each with its reader result, best reader confidence first.

    Returned hits keep the passage; ``score`` becomes the reader's confidence and ``retriever``
    gains a ``+rerank`` suffix so that a trace shows who chose the passage. Callers that go on to
    use the top passage's span can take it from here instead of reading it again.
    """
    if k < 1:
        raise ValueError(f"rerank k must be >= 1, got {k}")
    top = list(hits[:k])
    if not top:
        return []
    results = reader.read_many(question, [(h.passage.title, h.passage.text) for h in top])
    # sorted() is stable: equal confidences keep the retriever's order.
    order = sorted(range(len(top)), key=lambda i: -results[i].confidence)
    return [
        (replace(top[i], score=float(results[i].confidence), retriever=f"{top[i].retriever}+rerank"), results[i])
        for i in order
    ]


def rerank(reader: Reader, question: str, hits: list[Hit], k: int) -> list[Hit]:
    """The first ``k`` hits ordered by the reader's confidence (see ``rerank_with_results``)."""
    return [hit for hit, _ in rerank_with_results(reader, question, hits, k)]
