"""Keyword retrieval: SQLite FTS5's BM25 over the corpus's ``passages_fts(title, text)``.

Fielded: the title column gets its own weight (``retrieval.bm25_title_weight``), because in an
encyclopedic corpus a query naming an entity is best answered by that entity's article. The
query is cleaned first (``query.fts_match_expression``): no user text reaches MATCH raw.
"""

from __future__ import annotations

import sqlite3

from ..errors import IndexError_
from ..types import Hit
from .passages import PassageSource
from .query import fts_match_expression

NAME = "bm25"


class BM25Retriever:
    name = NAME

    def __init__(self, source: PassageSource, *, title_weight: float = 2.0, text_weight: float = 1.0):
        if title_weight < 0 or text_weight < 0:
            raise ValueError("BM25 column weights must not be negative")
        self.source = source
        self.title_weight = float(title_weight)
        self.text_weight = float(text_weight)

    def scores(self, query: str, k: int, *, restrict_to: list[int] | None = None) -> list[tuple[int, float]]:
        """``[(passage id, score)]`` best first; higher is better (SQLite's bm25 negated).

        ``restrict_to`` scores only those ids (used by hybrid fusion to score the dense
        candidates); ids the query does not match are absent from the result.
        """
        expr = fts_match_expression(query)
        if expr is None or k <= 0:
            return []
        sql = ("SELECT rowid, -bm25(passages_fts, ?, ?) AS s FROM passages_fts "
               "WHERE passages_fts MATCH ?")
        params: list = [self.title_weight, self.text_weight, expr]
        if restrict_to is not None:
            if not restrict_to:
                return []
            sql += f" AND rowid IN ({','.join('?' * len(restrict_to))})"
            params += [int(i) for i in restrict_to]
        sql += " ORDER BY s DESC LIMIT ?"
        params.append(int(k))
        try:
            rows = self.source.run(lambda store: store.conn.execute(sql, params).fetchall())
        except sqlite3.OperationalError as exc:
            raise IndexError_(f"Keyword search in corpus '{self.source.corpus}' failed: {exc}",
                              hint=f"The text index may be damaged: searchain corpus rebuild "
                              f"{self.source.corpus}") from exc
        return [(int(i), float(s)) for i, s in rows]

    def search(self, query: str, k: int = 5) -> list[Hit]:
        ranked = self.scores(query, k)
        passages = self.source.fetch([i for i, _ in ranked])
        return [Hit(passages[i], s, NAME) for i, s in ranked if i in passages]
