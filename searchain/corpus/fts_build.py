"""The store's FTS5 keyword index: indexed batch by batch, or built once after a large ingest.

A small ingest (and every update) indexes each batch of passages in the batch's own
transaction. An ingest whose workers parse faster than such a writer can keep up with
(``worth_deferring``, or ``WriterWatch`` on the writer's pace measured mid-ingest) would spend
~75 % of its one writer's CPU on that, and the writer, not the parsers, would bound it; so it
stores the passages alone (from then on) and builds the index at its end,
in id ranges of ``CHUNK`` passages, one transaction each (measured in BENCHMARKS.md, "The
writer without per-batch FTS": the writer stores ~4x more passages per CPU second, and the
whole ingest costs less CPU, since FTS5 merges far less when it indexes 200,000 passages a
transaction than 500).

The state is in ``meta['fts']`` (absent means complete, as in every store made before)::

    {"state": "complete"}                       passages_fts holds every passage
    {"state": "deferred", "indexed_to": X}      it holds exactly the passages with id <= X

Each build step indexes ``(X, X + CHUNK]`` and moves X in the same transaction, so a kill at
any point leaves a true state, and the next ``build`` goes on from X. New passages of a
deferred store get ids above X (AUTOINCREMENT; a rebuild's fresh store starts deferred when
empty, at X = 0), and ``PassageStore`` indexes at once any it stores at or below X. The
triggers that follow deletes and updates act only on passages at or below X (FTS5's
external-content 'delete' of a row it never indexed would damage it; ``store_schema``), so a
deferred store can be updated as it is, and only an FTS5 search needs the index complete: the
keyword retriever finishes it (or says why it cannot) before it answers. A store large enough
for tantivy (``TANTIVY_SERVES_FROM``) stays deferred for good: tantivy answers its searches.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, Callable

from ..events import CancelToken, EventCallback, Progress, check, emit

META_KEY = "fts"
COMPLETE, DEFERRED = "complete", "deferred"
# Passages a build transaction. Each transaction's terms become one new segment when its pending
# terms fit HASH_BYTES, so fewer, larger transactions merge less: at 2 M passages 200,000 with
# 128 MiB built in 20 % less CPU than 50,000 with 32 MiB (500,000 with 256 MiB: no better),
# for ~70 MB more peak memory (an ingest's peak 191 MB at 400k passages, 194 MB at 2 M: it does
# not grow with the corpus) and a WAL of one transaction's index pages (~100 MB).
CHUNK = 200_000
# FTS5 settings a build leaves in the index's config (they persist; measured equal query times):
AUTOMERGE = 16  # segments of a level before they merge (FTS5's default 4 merges far more)
HASH_BYTES = 128 << 20  # pending terms kept in memory before a segment is written (default 1 MiB)


# Defer when the workers together parse at least this many passages/s (``parse_passages_per_core_s``
# of the source, measured, times the workers): with a free core each, a writer indexing per batch
# stores ~20,000/s, one that defers 80,000/s and then builds 59,000/s, so deferring is faster
# once 1/20,000 > 1/P + 1/59,000, i.e. P > ~30,000 (parquet from 2 workers, a multistream dump
# from 8 since session 30's faster stripper). Slower parsing leaves the per-batch writer idle part
# of the time, the indexing fits in it, and deferring would only add the build after the parse
# (a third slower at P = 20,000).
DEFER_FROM_PASSAGES_PER_S = 30_000
# The build, per CPU second (BENCHMARKS.md, "The writer without per-batch FTS", at ce68b3f):
# 59,200 over 2 M passages, 64,700 over 400k; the rate a plan or a progress line quotes.
BUILD_PASSAGES_PER_S = 59_200
# The Progress stage of finishing, before a search, what a stopped ingest left unbuilt.
FINISH_STAGE = "finish keyword index"
# From this many passages the index layer's tantivy index serves keyword search
# (``index/bm25/tantivy_index.TANTIVY_FROM_PASSAGES`` is this constant), and FTS5 would answer only
# until it is built. So an ingest of a corpus this large that deferred FTS5 leaves it unbuilt
# (``left_to_tantivy``): tantivy is built on every core by the index stage, first, or at the
# latest before the first search (``index/bm25/ready.py``), in a fraction of FTS5's serial build,
# and the store is 370-540 bytes a passage smaller (BENCHMARKS.md, "Large corpora without FTS5").
TANTIVY_SERVES_FROM = 200_000


def worth_deferring(source, workers: int, capacity: float | None = None) -> bool:
    """Whether an ingest of ``source`` with ``workers`` processes should build its index at the end.
    ``capacity``: the cores' worth of work the machine does at once (``machine.cpu_capacity``;
    read when None): workers beyond it share cores and parse no faster together."""
    rate = getattr(source, "parse_passages_per_core_s", 0)
    return workers > 1 and parsing_cores(workers, capacity) * rate >= DEFER_FROM_PASSAGES_PER_S


def parsing_cores(workers: int, capacity: float | None = None) -> float:
    """The cores' worth of parsing ``workers`` processes get: all of them up to the machine's
    capacity, no more (8 workers on 4 cores with 2 threads each parse at ~4.6 cores' rate)."""
    if capacity is None:
        from ..machine import cpu_capacity

        capacity = cpu_capacity()
    return min(float(workers), max(1.0, capacity))


# Mid-ingest (``WriterWatch``): the build indexes ~2.9-3.0x as many passages a second as per-batch
# indexing on both machines measured (dev VM 59,000 / 20,000; 16 vCPUs 46,300 / 13,900), so with a
# per-batch rate R deferring pays once the workers parse P > R / (1 - 1/BUILD_OVER_BATCH) ~ 1.5 R.
BUILD_OVER_BATCH = 2.9
WATCH_SKIP_BATCHES = 2  # the first batches wait for the workers to start: not the writer's pace
WATCH_PASSAGES = 10_000  # passages timed before deciding (~20 batches, ~1 s of writing)
WATCH_BUSY = 0.75  # the writer's share of the time: below it, it waits for passages and keeps up


class WriterWatch:
    """Times a per-batch writer and says once, after ``WATCH_PASSAGES``, whether to defer the rest.

    ``worth_deferring`` decides before the ingest from a constant measured on one machine; where
    the writer is slower against the workers than there (16 vCPUs: 8 workers bound by a per-batch
    writer, BENCHMARKS.md "Ingest on 16 vCPUs") the writer's own pace, measured here, decides:
    busy most of the time, and the workers' declared rate (``parse_rate`` times the cores' worth
    they get, ``parsing_cores``) above ~1.5x the passages it stores a second."""

    def __init__(self, workers: int, parse_rate: float, capacity: float | None = None):
        self.parse = parsing_cores(workers, capacity) * parse_rate if workers > 1 else 0.0
        self.batches = self.passages = 0
        self.writing = self.waiting = 0.0
        self.decided = workers < 2 or parse_rate <= 0

    def observe(self, passages: int, waited: float, wrote: float) -> bool:
        """Record one batch (seconds waiting for it, seconds storing it); True once: defer now."""
        if self.decided:
            return False
        self.batches += 1
        if self.batches <= WATCH_SKIP_BATCHES:
            return False
        self.passages += passages
        self.waiting += waited
        self.writing += wrote
        if self.passages < WATCH_PASSAGES:
            return False
        self.decided = True
        return self.verdict()

    def verdict(self) -> bool:
        if self.writing <= 0 or self.writing / (self.writing + self.waiting) < WATCH_BUSY:
            return False
        per_batch_rate = self.passages / self.writing
        return self.parse > per_batch_rate / (1 - 1 / BUILD_OVER_BATCH)


def indexed_to(conn: sqlite3.Connection) -> int | None:
    """X when the index is deferred (it holds exactly the passages with id <= X), else None."""
    row = conn.execute("SELECT value FROM meta WHERE key=?", (META_KEY,)).fetchone()
    if row is None:
        return None
    state = json.loads(row[0])
    return int(state["indexed_to"]) if state.get("state") == DEFERRED else None


def pending(conn: sqlite3.Connection) -> int:
    """Passages stored but not yet in the keyword index (0 when it is complete)."""
    x = indexed_to(conn)
    if x is None:
        return 0
    return conn.execute("SELECT count(*) FROM passages WHERE id > ?", (x,)).fetchone()[0]


def left_to_tantivy(conn: sqlite3.Connection, passages: int | None = None) -> bool:
    """Whether the FTS5 index is deferred in a store large enough for tantivy to serve it
    (``passages``: the store's count, when the caller has it; counting takes a scan)."""
    if indexed_to(conn) is None:
        return False
    if passages is None:
        passages = conn.execute("SELECT count(*) FROM passages").fetchone()[0]
    return passages >= TANTIVY_SERVES_FROM


def index_new(conn: sqlite3.Connection, *, above: int | None = None,
              ids: list[int] | None = None) -> None:
    """Index the passages just stored (``above`` an id, or these ``ids``), in the caller's
    transaction: all of them (one statement, measured 3x cheaper than an insert trigger per
    row), or while deferred only those at or below X (none, unless ids were handed down)."""
    x = indexed_to(conn)
    if above is not None:
        if x is None:
            conn.execute("INSERT INTO passages_fts(rowid, title, text) "
                         "SELECT id, title, text FROM passages WHERE id > ?", (above,))
        return
    ids = [i for i in ids or [] if x is None or i <= x]
    for k in range(0, len(ids), 500):  # SQLite's bound-variable limit
        chunk = ids[k:k + 500]
        conn.execute("INSERT INTO passages_fts(rowid, title, text) SELECT id, title, text "
                     f"FROM passages WHERE id IN ({','.join('?' * len(chunk))})", chunk)


def defer(conn: sqlite3.Connection) -> None:
    """From now on, passages are stored without indexing them until ``build`` (idempotent: a
    store deferred already keeps its X). Call it with the index complete."""
    if indexed_to(conn) is not None:
        return
    with conn:
        if conn.execute("SELECT 1 FROM passages LIMIT 1").fetchone() is None:
            x = 0  # empty: nothing is indexed, and every id to come is above 0
        else:
            seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name='passages'").fetchone()
            top = conn.execute("SELECT max(id) FROM passages").fetchone()[0] or 0
            x = max(top, seq[0] if seq else 0)
        _set(conn, {"state": DEFERRED, "indexed_to": x})


def build(conn: sqlite3.Connection, *, progress: Callable[[int, int], None] | None = None,
          check: Callable[[], None] | None = None) -> int:
    """Index every passage above X, a range of ``CHUNK`` ids a transaction; returns how many
    ids it went over. ``check()`` runs before each range (it raises to cancel: what was indexed
    stays, the state says so). ``progress(done, total)`` counts ids."""
    x = indexed_to(conn)
    if x is None:
        return 0
    start = x
    top = conn.execute("SELECT coalesce(max(id), 0) FROM passages").fetchone()[0]
    for option, value in (("automerge", AUTOMERGE), ("hashsize", HASH_BYTES)):
        try:
            with conn:
                conn.execute("INSERT INTO passages_fts(passages_fts, rank) VALUES (?, ?)", (option, value))
        except sqlite3.OperationalError:  # an SQLite without the option: its default stays
            pass
    while True:
        if check is not None:
            check()
        with conn:
            hi = x + CHUNK
            conn.execute("INSERT INTO passages_fts(rowid, title, text) SELECT id, title, text "
                         "FROM passages WHERE id > ? AND id <= ?", (x, hi))
            # read under this transaction's write lock: no passage can arrive in between
            now_top = conn.execute("SELECT coalesce(max(id), 0) FROM passages").fetchone()[0]
            done = now_top <= hi
            _set(conn, {"state": COMPLETE} if done else {"state": DEFERRED, "indexed_to": hi})
        x = hi
        if progress is not None:
            top = max(top, now_top)
            progress(min(x, top) - start, top - start)
        if done:
            return min(x, top) - start


def integrity_ok(conn: sqlite3.Connection) -> bool:
    """FTS5's 'integrity-check' against the passages; False while deferred (it lacks some)."""
    if indexed_to(conn) is not None:
        return False
    try:
        conn.execute("INSERT INTO passages_fts(passages_fts, rank) VALUES ('integrity-check', 1)")
        return True
    except sqlite3.DatabaseError:
        return False


def _set(conn: sqlite3.Connection, state: dict) -> None:
    conn.execute("INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)", (META_KEY, json.dumps(state)))


class KeywordIndexMixin:
    """``PassageStore``'s keyword-index methods; rely on its ``conn``, ``_write_error`` and
    ``_require_current``."""

    def defer_fts(self) -> None:
        self._fts(defer, self.conn)

    def finish_fts(self, *, progress=None, check=None) -> int:
        """Index what a deferred ingest left (nothing when complete); see ``build``."""
        if indexed_to(self.conn) is None:
            return 0
        self._require_current()
        return self._fts(build, self.conn, progress=progress, check=check)

    def _fts(self, fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except sqlite3.DatabaseError as exc:
            raise self._write_error(exc) from exc

    def fts_integrity_ok(self) -> bool:
        """True when the FTS index matches the passages table (FTS5 'integrity-check'); False
        while it is deferred (it lacks the passages not built yet)."""
        return integrity_ok(self.conn)


def finish_left_build(store: Any, *, on_event: EventCallback | None = None,
                      cancel: CancelToken | None = None) -> bool:
    """Build what a stopped large ingest left of ``store``'s keyword index, holding the corpus's
    write lock meanwhile; False (nothing done) while an ingest of the corpus holds that lock (it
    builds the index itself at its end). A ``Progress`` of ``FINISH_STAGE`` says first how many
    passages are left and about how long they take, then how far the build is; ``cancel`` stops
    it between ranges of ``CHUNK`` passages, and what was indexed stays (the next call goes on)."""
    if indexed_to(store.conn) is None:
        return True
    from ..units import duration
    from .lock import CorpusLock

    lock = CorpusLock(store.path.parent)
    try:
        free = lock.try_acquire()
    except OSError:  # no lock file can be made there (a read-only folder): the build fails too
        free = True
    if not free:
        return False
    try:
        x = indexed_to(store.conn)  # again, under the lock: another process may have finished it
        if x is None:
            return True
        # Ids, as the build's own progress counts them (a range read, not a count of rows).
        left = max(0, store.conn.execute("SELECT coalesce(max(id), 0) FROM passages").fetchone()[0] - x)
        name = getattr(store, "corpus", store.path.parent.name)
        note = (f"finishing the keyword index a stopped ingest of '{name}' left: {left:,} passages, "
                f"about {duration(left / BUILD_PASSAGES_PER_S)}")
        first = Progress(FINISH_STAGE, 0, left, note)
        if left:
            emit(on_event, first)
        store.finish_fts(check=lambda: check(cancel), progress=lambda done, total: emit(
            on_event, Progress(FINISH_STAGE, done, total, note, started_at=first.started_at)))
    finally:
        lock.release()
    return True
