"""Per-term BM25 of a few candidate passages, computed exactly as FTS5 would, at any corpus size.

Rare-term emphasis (``fts5.py``) needs each query term's own BM25 for ~100 candidates. Asking
FTS5 (``MATCH term AND rowid IN (...)``) costs time in proportion to the term's posting list:
FTS5's ``bm25()`` counts the rows holding each phrase anew for every statement, and a common term
at 5M passages holds ~500,000. Here FTS5's formula (``fts5_aux.c``, ``fts5Bm25Function``) is
evaluated directly::

    idf   = max(ln((N - n + 0.5) / (n + 0.5)), 1e-6)        n: passages holding the term
    f     = sum over columns of weight(column) x occurrences in that column
    score = idf x f x (k1 + 1) / (f + k1 x (1 - b + b x D / avgdl)),  k1 = 1.2, b = 0.75

with every input taken from FTS5 itself: ``N`` and the column totals (so ``avgdl``) from the
index's averages record, ``D`` from the ``_docsize`` table, ``n`` from the cached document
frequency, and the occurrences from FTS5's own tokenizer, run over just the candidates in a
private in-memory FTS5 table (``fts5vocab`` lists each token instance with its column). The cost
no longer depends on the corpus size; the numbers are FTS5's (tested to 1e-9).
"""

from __future__ import annotations

import math
import sqlite3

K1, B = 1.2, 0.75
AVERAGES_ROWID = 1  # FTS5_AVERAGES_ROWID: varint row count, then one varint total per column


def read_varints(blob: bytes) -> list[int]:
    """SQLite's varints (big-endian 7-bit groups; a 9th byte carries 8 bits), as FTS5 writes them."""
    out, i = [], 0
    while i < len(blob):
        value = 0
        for n in range(9):
            byte = blob[i]
            i += 1
            if n == 8:
                value = (value << 8) | byte
                break
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                break
        out.append(value)
    return out


class TermScorer:
    """Exact single-term FTS5 BM25 over candidate passages (see the module docstring)."""

    def __init__(self, tokenizer: str, weights: tuple[float, float]):
        self.weights = weights  # (title, text)
        self._mem = sqlite3.connect(":memory:", check_same_thread=False)
        self._mem.executescript(
            f"CREATE VIRTUAL TABLE c USING fts5(title, text, tokenize='{tokenizer}');"
            "CREATE VIRTUAL TABLE v USING fts5vocab(c, 'instance');")
        self._stems: dict[str, str | None] = {}

    def stem(self, term: str) -> str | None:
        """The token FTS5's tokenizer makes of ``term``; None when it makes more or fewer than one."""
        if term not in self._stems:
            with self._mem:
                self._mem.execute("DELETE FROM c")
                self._mem.execute("INSERT INTO c(rowid, title, text) VALUES (1, '', ?)", (term,))
                tokens = [t for (t,) in self._mem.execute("SELECT term FROM v ORDER BY offset")]
            self._stems[term] = tokens[0] if len(tokens) == 1 else None
        return self._stems[term]

    @staticmethod
    def totals(conn) -> tuple[int, float]:
        """``(N, avgdl)``: FTS5's row count and mean tokens per row (all columns)."""
        row = conn.execute("SELECT block FROM passages_fts_data WHERE id = ?", (AVERAGES_ROWID,)).fetchone()
        values = read_varints(row[0]) if row and row[0] else [0]
        n = values[0]
        return n, (sum(values[1:]) / n if n else 0.0)

    def scores(self, conn, terms: dict[str, float], ids: list[int], totals: tuple[int, float]
               ) -> dict[str, dict[int, float]]:
        """``{term: {id: bm25}}`` for the ``terms`` (term -> its document frequency) in ``ids``;
        a passage without the term is absent. Terms that do not tokenize to one token are left
        out (the caller asks FTS5 for those)."""
        n_rows, avgdl = totals
        stems = {t: self.stem(t) for t in terms}
        wanted = {s: t for t, s in stems.items() if s is not None}
        if not ids or not wanted or not avgdl:
            return {}
        rows, sizes = [], {}
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            marks = ",".join("?" * len(chunk))
            rows += conn.execute(f"SELECT id, title, text FROM passages WHERE id IN ({marks})", chunk).fetchall()
            sizes.update((d, sum(read_varints(sz))) for d, sz in conn.execute(
                f"SELECT id, sz FROM passages_fts_docsize WHERE id IN ({marks})", chunk))
        freq: dict[tuple[str, int], float] = {}
        with self._mem:
            self._mem.execute("DELETE FROM c")
            self._mem.executemany("INSERT INTO c(rowid, title, text) VALUES (?, ?, ?)", rows)
            marks = ",".join("?" * len(wanted))
            for token, doc, col in self._mem.execute(
                    f"SELECT term, doc, col FROM v WHERE term IN ({marks})", list(wanted)):
                key = (wanted[token], doc)
                freq[key] = freq.get(key, 0.0) + self.weights[0 if col == "title" else 1]
        out: dict[str, dict[int, float]] = {t: {} for t in wanted.values()}
        for (term, doc), f in freq.items():
            n = terms[term]
            idf = max(math.log((n_rows - n + 0.5) / (n + 0.5)), 1e-6)
            length = sizes.get(doc, 0)
            out[term][doc] = idf * (f * (K1 + 1)) / (f + K1 * (1 - B + B * length / avgdl))
        return out
