"""Keyword retrieval: SQLite FTS5's BM25 over the corpus's ``passages_fts(title, text)``.

Fielded: the title column gets its own weight (``retrieval.bm25_title_weight``), because in an
encyclopedic corpus a query naming an entity is best answered by that entity's article. The
query is cleaned first (``query.keywords``): no user text reaches MATCH raw.

Rare-term emphasis (``retrieval.bm25_idf_power``, default 1): each query term's BM25
contribution is weighted once more by its IDF, ``score = sum_t idf_t**p * bm25_t``. A
sub-question such as "Outagamie County shares border with" is mostly generic relation words;
plain BM25 lets "county", "border" and "shares" outvote the one name that matters and ranks
some other county first. FTS5 cannot weight query terms, so the plain OR query proposes the
candidates and each term's own BM25 over them gives the weighted score (``bm25_terms.py``
computes FTS5's formula from FTS5's own counts, at a cost that does not grow with the corpus). Measured in ``docs/retrieval.md``: +3 points top-1 on MuSiQue steps,
neutral to slightly positive on HotpotQA.

Large corpora (from ``tantivy_index.TANTIVY_FROM_PASSAGES``) get a tantivy index beside the
store, built by ``searchain corpus index``; while it holds exactly the store's passages (and the
weights are ones it can express: an integer title weight, text weight 1) it answers instead of
FTS5, with the same formula in one top-k query (``tantivy_index.py``). Otherwise FTS5 answers,
once it holds the whole corpus: an index a large ingest deferred and did not finish (killed,
cancelled; ``corpus.fts_build``) is built first, or, while that ingest still runs, the search
says so; it never answers from part of the corpus. A corpus large enough for tantivy whose
ingest left FTS5 unbuilt on purpose gets its tantivy index first instead (``ready.py``).
"""

from __future__ import annotations

import math
import sqlite3

from ...corpus import fts_build
from ...corpus.store import FTS_TOKENIZER
from ...errors import CorpusError, IndexError_
from ...types import Hit
from ..passages import PassageSource
from . import tantivy_index as bm25_tantivy
from .ready import make_ready, serves
from .query import keywords, quoted_or
from .terms import TermScorer

NAME = "bm25"
RESCORE_DEPTH = 100  # candidates the plain query proposes for rare-term rescoring
# Scale (docs/retrieval.md, "Scale"): in corpora this large the candidate query reads at most
# CANDIDATE_POSTINGS postings, rarest terms first (measured at 1M passages: p50 1.4 s -> 0.13 s,
# recall@10 of the gold passage 0.933 -> 0.908, recall@1 unchanged). Smaller corpora, the eval
# pools among them, are never pruned, so their results are exactly as before.
PRUNE_FROM_PASSAGES = 200_000
CANDIDATE_POSTINGS = 20_000
_CHUNK = 500  # SQLite's bound-variable limit, with room for the other parameters


class BM25Retriever:
    name = NAME

    def __init__(self, source: PassageSource, *, title_weight: float = 2.0, text_weight: float = 1.0,
                 idf_power: float = 1.0, use_tantivy: bool = True):
        if title_weight < 0 or text_weight < 0:
            raise ValueError("BM25 column weights must not be negative")
        if idf_power < 0:
            raise ValueError(f"idf_power must not be negative, got {idf_power}")
        self.source = source
        self.title_weight = float(title_weight)
        self.text_weight = float(text_weight)
        self.idf_power = float(idf_power)
        self._doc_freq: dict[str, int] = {}
        self._total = 0
        self._totals = (0, 0.0)  # FTS5's (rows, mean tokens per row), for TermScorer
        self._data_version = None
        self._term_scorer = TermScorer(FTS_TOKENIZER, (self.title_weight, self.text_weight))
        self.use_tantivy = use_tantivy  # False: FTS5 always (benchmarks compare the two)
        self._tantivy_version = None  # the data_version the choice below was made for
        self._tantivy: bm25_tantivy.TantivySearcher | None = None

    def scores(self, query: str, k: int, *, restrict_to: list[int] | None = None) -> list[tuple[int, float]]:
        """``[(passage id, score)]`` best first; higher is better (SQLite's bm25 negated).

        ``restrict_to`` scores only those ids (used by hybrid fusion to score the dense
        candidates); ids the query does not match are absent from the result.
        """
        terms = keywords(query)
        if not terms or k <= 0 or (restrict_to is not None and not restrict_to):
            return []
        try:
            return self.source.run(lambda store: self._dispatch(store, terms, k, restrict_to))
        except sqlite3.OperationalError as exc:
            raise IndexError_(f"Keyword search in corpus '{self.source.corpus}' failed: {exc}",
                              hint=f"The text index may be damaged: searchain corpus rebuild "
                              f"{self.source.corpus}") from exc

    def search(self, query: str, k: int = 5) -> list[Hit]:
        ranked = self.scores(query, k)
        passages = self.source.fetch([i for i, _ in ranked])
        return [Hit(passages[i], s, NAME) for i, s in ranked if i in passages]

    # -- internals (run under the source's lock) --------------------------------------------

    def _dispatch(self, store, terms, k, restrict_to) -> list[tuple[int, float]]:
        tantivy = self._tantivy_index(store)
        if tantivy is None and fts_build.indexed_to(store.conn) is not None:
            # a large ingest left FTS5 unbuilt: build what this search uses (``ready.py``)
            _require_ready(store, self.title_weight if self._tantivy_serves() else None)
            tantivy = self._tantivy_index(store)
            if tantivy is None:  # FTS5 answers, then: never from part of the corpus
                _require_ready(store, None)
        if tantivy is not None:
            return tantivy.scores(terms, k, idf_power=self.idf_power, restrict_to=restrict_to)
        return self._scores(store.conn, terms, k, restrict_to)

    def _tantivy_serves(self) -> bool:
        return self.use_tantivy and serves(self.title_weight, self.text_weight)

    def _tantivy_index(self, store) -> "bm25_tantivy.TantivySearcher | None":
        """The tantivy index beside the store when it is current, else None; decided again
        whenever the corpus changes (``PRAGMA data_version``) or the index's stamp is written.
        A current index that cannot be read raises ``IndexError_`` with the fix, rather than
        turning silently slow."""
        if not self._tantivy_serves():
            return None
        path = bm25_tantivy.index_dir(store.path)
        try:  # a build that finishes while the corpus stays as it is (``corpus index``) counts too
            stamp = (path / bm25_tantivy.STAMP).stat().st_mtime_ns
        except OSError:
            stamp = None
        version = (store.conn.execute("PRAGMA data_version").fetchone()[0], stamp)
        if version != self._tantivy_version:
            self._tantivy = None
            if stamp is not None and bm25_tantivy.is_current(path, store.conn, self.title_weight):
                self._tantivy = bm25_tantivy.TantivySearcher(path, store.corpus)
            self._tantivy_version = version
        return self._tantivy

    def _scores(self, conn, terms: list[str], k: int, restrict_to) -> list[tuple[int, float]]:
        if self.idf_power == 0 or len(terms) == 1:  # one term: weighting cannot change the order
            return self._plain(conn, quoted_or(terms), k, restrict_to)
        self._check_corpus_version(conn)
        if restrict_to is None:
            restrict_to = [i for i, _ in self._plain(conn, quoted_or(self._candidate_terms(conn, terms)),
                                                     max(k, RESCORE_DEPTH), None)]
            if not restrict_to:
                return []
        dfs = {term: self._df(conn, term) for term in terms}
        per_term = self._term_scorer.scores(conn, dfs, list(restrict_to), self._totals)
        total: dict[int, float] = {}
        for term in terms:
            weight = self._idf(conn, term) ** self.idf_power
            scored = per_term.get(term)
            if scored is None:  # not a single token to FTS5's tokenizer: let FTS5 score it
                scored = dict(self._plain(conn, quoted_or([term]), len(restrict_to), restrict_to))
            for i, s in scored.items():
                total[i] = total.get(i, 0.0) + weight * s
        return sorted(total.items(), key=lambda kv: -kv[1])[:k]

    def _candidate_terms(self, conn, terms: list[str]) -> list[str]:
        """The terms the candidate query ORs: all of them unless their posting lists together
        pass ``CANDIDATE_POSTINGS``; then the rarest that fit (at least one). FTS5 ranks every
        row an OR query matches, so one term in a tenth of a 5M-passage corpus costs seconds,
        while a passage that holds only such terms scores too little to be a candidate anyway
        (its IDF is small, and weighted once more by it). Every term still scores the candidates."""
        if self._total < PRUNE_FROM_PASSAGES:
            return terms
        by_rarity = sorted(terms, key=lambda t: self._df(conn, t))
        kept, postings = [], 0
        for term in by_rarity:
            postings += self._doc_freq[term]
            if kept and postings > CANDIDATE_POSTINGS:
                break
            kept.append(term)
        return kept

    def _plain(self, conn, expr: str, k: int, restrict_to) -> list[tuple[int, float]]:
        """FTS5's own BM25 for ``expr``, best first, over all rows or only ``restrict_to``."""
        head = "SELECT rowid, -bm25(passages_fts, ?, ?) AS s FROM passages_fts WHERE passages_fts MATCH ?"
        base = [self.title_weight, self.text_weight, expr]
        if restrict_to is None:
            rows = conn.execute(head + " ORDER BY s DESC LIMIT ?", base + [int(k)]).fetchall()
        else:
            ids = [int(i) for i in restrict_to]
            rows = []
            for n in range(0, len(ids), _CHUNK):
                chunk = ids[n:n + _CHUNK]
                rows += conn.execute(head + f" AND rowid IN ({','.join('?' * len(chunk))})",
                                     base + chunk).fetchall()
            rows.sort(key=lambda r: -r[1])
            rows = rows[:k]
        return [(int(i), float(s)) for i, s in rows]

    def _check_corpus_version(self, conn) -> None:
        """Drop cached document frequencies when the corpus changed (``PRAGMA data_version``
        moves when another connection commits)."""
        version = conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version or not self._total:
            self._doc_freq.clear()
            self._total = conn.execute("SELECT count(*) FROM passages").fetchone()[0]
            self._totals = TermScorer.totals(conn)
            self._data_version = version

    def _df(self, conn, term: str) -> int:
        """How many passages hold ``term``, cached per corpus version."""
        df = self._doc_freq.get(term)
        if df is None:
            df = conn.execute("SELECT count(*) FROM passages_fts WHERE passages_fts MATCH ?",
                              (quoted_or([term]),)).fetchone()[0]
            self._doc_freq[term] = df
        return df

    def _idf(self, conn, term: str) -> float:
        """FTS5's IDF for ``term`` (its own formula, floored like FTS5's), cached per corpus version."""
        df = self._df(conn, term)
        n = self._total
        return max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)


def _require_ready(store, title_weight: float | None) -> None:
    """Build what a large ingest left of the keyword index this search uses (``ready.py``:
    tantivy where it serves the corpus, else the rest of FTS5; ``title_weight`` None: FTS5,
    whatever the corpus's size), or say why not. The workspace builds it, with progress, when
    it opens the retriever; this covers a store opened otherwise."""
    name = store.corpus
    try:
        ready = make_ready(store, title_weight)
    except CorpusError as exc:
        raise IndexError_(f"The keyword index of corpus '{name}' was left unfinished by a stopped "
                          f"ingest, and finishing it failed: {exc.message}",
                          hint=f"Run `searchain corpus add {name} SOURCE` again with the same "
                          "source: it continues and builds the index.") from exc
    if not ready:
        raise IndexError_(f"The keyword index of corpus '{name}' is being built (by its ingest, "
                          "or its index build).", hint="Search it once that has finished.")
