"""BM25 at Wikipedia scale: a tantivy index beside the passage store (issue #18).

SQLite FTS5 ranks every row an OR query matches, so a query holding a common term costs
seconds once the corpus has millions of passages (BENCHMARKS.md, issue #18). tantivy (a Rust
engine in the Lucene mould) answers the same top-k with block-max WAND: it skips the posting
blocks whose best possible score cannot enter the top k, so a common term costs little.

The scoring is FTS5's (``fts5.py``), measured equal in recall on the eval queries:

- title weight: FTS5 scores a row as one document whose term frequency is
  ``title_weight * tf_title + tf_text``. Here each passage is indexed as one field, ``body``, that
  holds the title ``title_repeat`` times (the title weight, rounded) and then the text: the same
  term frequency, the same document frequency, a length longer by the extra title copies. The
  repeat count is a property of the build (recorded in its stamp); a different weight in the
  settings makes the index not current until it is rebuilt;
- rare-term emphasis: each term's clause is boosted by ``idf_t ** idf_power`` (FTS5's IDF
  formula over the term's document frequency), so ``score = sum_t idf_t**p * bm25_t`` is one
  top-k query, with no candidate pruning.

The index lives in ``bm25.tantivy/`` beside ``passages.db``, with ``searchain.json`` recording
which passages it holds. A build writes a fresh folder and renames it into place, so a killed
build leaves the old index (or none), never a half one.

After the corpus changes (``corpus update``), ``ensure_current`` *extends* the index instead
(``tantivy_update.extend``): passage ids only grow and a changed passage gets a new id, so the passages to add
are those above the stamp's ``max_id`` and the ones to delete are the ids up to it that the store
no longer has; both go in one commit, which tantivy makes atomic. Deleted documents still count
in tantivy's term statistics until its merges drop them, so scores drift slightly from a fresh
build's; once the documents deleted since the last full build pass ``REBUILD_DELETED_SHARE`` of
the index, or the index is missing, damaged, of another format or title weight, or holds a count
the store does not match, it is rebuilt.
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
from pathlib import Path

from ...corpus.fts_build import TANTIVY_SERVES_FROM
from ...errors import IndexError_
from .tantivy_schema import (FORMAT, STAMP, WRITER_HEAP, _analyzer, _open_index, _tantivy,
                             read_stamp, store_stamp, writer_threads)

log = logging.getLogger(__name__)
STAGE = "keyword index"

INDEX_DIR = "bm25.tantivy"
BUILD_BATCH = 5000  # passages read from the store per step
# Corpora from this size get the index (``ensure_current``): where FTS5 starts pruning its
# candidate query (bm25.PRUNE_FROM_PASSAGES). Below it FTS5 is fast and exact, and the eval
# pools keep the results they were measured with. A large ingest leaves FTS5 unbuilt at this
# size (``corpus.fts_build``, whose constant this is; ``ready.py`` builds this index instead).
TANTIVY_FROM_PASSAGES = TANTIVY_SERVES_FROM
TITLE_REPEAT = int(os.environ.get("SEARCHAIN_TV_REPEAT", "2"))
MODE = os.environ.get("SEARCHAIN_TV_MODE", "body")  # passages read from the store per step


def index_dir(store_path: str | Path) -> Path:
    """Where the tantivy index of the store at ``store_path`` lives."""
    return Path(store_path).parent / INDEX_DIR


def is_current(path: Path, conn, title_weight: float) -> bool:
    """Whether the index at ``path`` holds exactly the store's passages, built for this weight."""
    stamp = read_stamp(path)
    want = store_stamp(conn, title_weight)
    return bool(stamp) and {k: stamp.get(k) for k in want} == want


def index_problem(store_path: Path, passages: int, max_id: int, *, fts_left: bool = False) -> str | None:
    """Why keyword search of a corpus this large is not on its fast index (for ``index status``),
    or None when it is (or when the corpus is small enough for FTS5). ``fts_left``: its ingest
    left FTS5 unbuilt (``corpus.fts_build.left_to_tantivy``), so this index is built before the
    first search instead."""
    if passages < TANTIVY_FROM_PASSAGES:
        return None
    try:
        stamp = read_stamp(index_dir(store_path))
    except IndexError_ as exc:
        return exc.message
    meanwhile = "FTS5 answers meanwhile, slowly at this size"
    if stamp is None:
        return ("keyword search has no tantivy index yet (" +
                ("it is built before the first search" if fts_left else meanwhile) + ")")
    if (stamp.get("format"), stamp.get("passages"), stamp.get("max_id")) != (FORMAT, passages, max_id):
        return ("the keyword index is behind the corpus (" +
                ("it is brought up to date before the next search" if fts_left else meanwhile) + ")")
    return None


def build(conn, path: Path, *, title_weight: float = 2.0, progress=None, cancel=None,
          heap: int = WRITER_HEAP, threads: int | None = None) -> dict:
    """Index every passage of the store (``conn``) into a fresh index at ``path``.

    Written into ``path.tmp`` first and renamed into place at the end: a kill at any point
    leaves the previous index (or, for the instant between the two renames, none) and a
    leftover temporary folder the next build removes. ``progress(done, total)`` is called
    after each batch; ``threads`` indexing threads (default ``writer_threads()``: every core).
    Returns the build record."""
    tmp = path.with_name(path.name + ".tmp")
    old = path.with_name(path.name + ".old")
    for leftover in (tmp, old):
        shutil.rmtree(leftover, ignore_errors=True)
    tmp.mkdir(parents=True)
    stamp = store_stamp(conn, title_weight)
    repeat = stamp["title_repeat"]
    index = _open_index(tmp)
    writer = index.writer(heap, threads or writer_threads())
    t = _tantivy()
    done, last = 0, 0
    while True:
        rows = conn.execute("SELECT id, title, text FROM passages WHERE id > ? ORDER BY id LIMIT ?",
                            (last, BUILD_BATCH)).fetchall()
        if not rows:
            break
        for pid, title, text in rows:
            doc = t.Document(body=" ".join([title or ""] * repeat + [text or ""]))
            doc.add_unsigned("id", int(pid))  # a plain int would be read as i64
            writer.add_document(doc)
        last = rows[-1][0]
        done += len(rows)
        if progress:
            progress(done, stamp["passages"])
        if cancel is not None:  # cancelling is a kill: the old index stays
            from ...events import check

            check(cancel)
    writer.commit()
    writer.wait_merging_threads()
    (tmp / STAMP).write_text(json.dumps(stamp), encoding="utf-8")
    _fsync_dir(tmp)
    if path.exists():
        os.replace(path, old)
    os.replace(tmp, path)
    shutil.rmtree(old, ignore_errors=True)
    return stamp


def ensure_current(store, title_weight: float, *, on_event=None, cancel=None,
                   min_passages: int | None = None) -> dict | None:
    """Build (or rebuild) the index of ``store`` when the corpus has ``min_passages`` or more
    and the index there is missing, stale, built for another title weight, or unreadable.
    Returns the new build record, or None when nothing was built."""
    path = index_dir(store.path)
    conn = store.conn
    if store.count() < (TANTIVY_FROM_PASSAGES if min_passages is None else min_passages):
        return None
    if is_current(path, conn, title_weight):
        try:
            TantivySearcher(path, store.corpus)
            return None
        except IndexError_ as exc:
            log.warning("keyword index of '%s' is rebuilt: %s", store.corpus, exc.message)
    from ...events import Progress, emit

    def progress(done, total):
        emit(on_event, Progress(STAGE, done, total))

    from .tantivy_update import extend, extendable

    old = extendable(path, conn, title_weight)
    if old is not None:
        for leftover in (path.with_name(path.name + ".tmp"), path.with_name(path.name + ".old")):
            shutil.rmtree(leftover, ignore_errors=True)  # of a build killed earlier
        emit(on_event, Progress(STAGE, 0, None, "bringing the keyword index (tantivy) up to date"))
        try:
            return extend(conn, path, old, title_weight=title_weight, progress=progress, cancel=cancel)
        except IndexError_ as exc:
            log.warning("keyword index of '%s' is rebuilt: %s", store.corpus, exc.message)
    emit(on_event, Progress(STAGE, 0, store.count(), "building the keyword index (tantivy)"))
    return build(conn, path, title_weight=title_weight, progress=progress, cancel=cancel)


def _fsync_dir(path: Path) -> None:
    for p in path.iterdir():
        if p.is_file():
            with open(p, "rb") as fh:
                os.fsync(fh.fileno())


class TantivySearcher:
    """Top-k BM25 with rare-term emphasis over a built index (its title weight is built in)."""

    def __init__(self, path: Path, corpus: str = "<corpus>"):
        fix = f"rebuild it: searchain corpus index {corpus}"
        stamp = read_stamp(path, fix)
        if stamp is None:
            raise IndexError_(f"No keyword index at {path}",
                              hint=fix)
        if stamp.get("format") != FORMAT:
            raise IndexError_(f"The keyword index {path} has format {stamp.get('format')}, "
                              f"this version reads {FORMAT}",
                              hint=fix)
        try:
            self._index = _open_index(path)
            self._searcher = self._index.searcher()
        except (OSError, ValueError) as exc:
            raise IndexError_(f"The keyword index {path} is damaged ({exc})",
                              hint=fix) from exc
        self.path = path
        self._fix = fix
        self.stamp = stamp
        self._schema = self._index.schema
        self._analyze = _analyzer().analyze
        self._total = self._searcher.num_docs
        self._df: dict[str, int] = {}

    def tokens(self, terms: list[str]) -> list[str]:
        """The index's tokens for the query's keywords, each once."""
        return list(dict.fromkeys(tok for term in terms for tok in self._analyze(term)))

    def idf(self, token: str) -> float:
        """FTS5's IDF formula (floored like FTS5's) over the token's document frequency."""
        df = self._df.get(token)
        if df is None:
            df = self._df[token] = self._live_df(token)
        n = self._total
        df = min(df, n)
        return max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)

    def _live_df(self, token: str) -> int:
        """The token's document frequency. tantivy's counts deleted documents until its merges
        drop them; in an index extended after an update (``tantivy_update``) the live documents
        holding it are counted instead (a count query, once per token), since near df = n/2 the
        formula is steep and a few deleted documents would move the weight far."""
        if not self.stamp.get("deleted"):
            return self._searcher.doc_freq("body", token)
        query = _tantivy().Query.term_query(self._schema, "body", token)
        return int(self._searcher.search(query, 1, count=True).count)

    def scores(self, terms: list[str], k: int, *, idf_power: float,
               restrict_to=None) -> list[tuple[int, float]]:
        """``[(passage id, score)]`` best first for the query's keywords ``terms``; with
        ``restrict_to``, only those ids are scored (ids the query does not match are absent)."""
        t = _tantivy()
        tokens = self.tokens(terms)
        if not tokens:
            return []
        clauses = []
        for token in tokens:
            q = t.Query.term_query(self._schema, "body", token)
            weight = self.idf(token) ** idf_power if idf_power else 1.0
            clauses.append((t.Occur.Should, t.Query.boost_query(q, weight)))
        if not clauses:
            return []
        query = t.Query.boolean_query(clauses)
        limit = k
        if restrict_to is not None:
            ids = [int(i) for i in restrict_to]
            only = t.Query.const_score_query(t.Query.term_set_query(self._schema, "id", ids), 0.0)
            query = t.Query.boolean_query([(t.Occur.Must, query), (t.Occur.Must, only)])
            limit = min(k, len(ids))
        # Equal scores in id order. tantivy orders them by segment, and which segment a
        # passage lands in depends on which indexing thread took it; which of the passages
        # tied at the k-th score make the cut still does (lengths are stored coarsely, so ties
        # are common: making the cut exact fetched 2.5-4 times per query and cost 3-5x at p90).
        try:
            hits = self._searcher.search(query, limit, count=False).hits
            ids = self._searcher.fast_field_values("id", [addr for _, addr in hits])
        except ValueError as exc:
            raise IndexError_(f"Keyword search in {self.path} failed: {exc}", hint=self._fix) from exc
        return sorted(((int(i), float(s)) for (s, _), i in zip(hits, ids) if i is not None),
                      key=lambda hit: (-hit[1], hit[0]))
