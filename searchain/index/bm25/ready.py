"""Keyword search made answerable: what a large ingest left to build, built before a search.

A large ingest may leave the store's FTS5 index unbuilt (``corpus.fts_build``): killed mid-way,
or on purpose in a corpus large enough for tantivy (``fts_build.TANTIVY_SERVES_FROM``), whose
keyword search tantivy serves. ``make_ready`` builds what the next search will use:

- tantivy (``tantivy_index.ensure_current``: every core, or an extension of the index it has)
  where it serves the corpus: large enough, and a whole-number title weight;
- else the rest of FTS5 (``fts_build.finish_left_build``).

Either runs under the corpus's write lock (tantivy also under its build lock: an index build
builds the same folder), with a ``Progress`` of ``FINISH_STAGE`` that says first how many
passages and about how long (the app and ``ask`` show it as a slow first step).
"""

from __future__ import annotations

from ...corpus import fts_build
from ...events import CancelToken, EventCallback, Progress, check, emit
from . import tantivy_index
from .tantivy_schema import build_seconds


def serves(title_weight: float, text_weight: float = 1.0) -> bool:
    """Whether tantivy can score as FTS5 does with these weights (the title is repeated a whole
    number of times in the one field it indexes; ``tantivy_index``)."""
    return text_weight == 1.0 and float(title_weight).is_integer()


def make_ready(store, title_weight: float | None, *, on_event: EventCallback | None = None,
               cancel: CancelToken | None = None, locked: bool = False) -> bool:
    """Build what keyword search of ``store`` needs before it answers (nothing, usually: one
    meta read). False (nothing done) while an ingest of the corpus holds its write lock, or, for
    tantivy, an index build its build lock: they build the index themselves. ``locked``: the
    caller holds the write lock (or the store is not in its corpus folder yet, as an import's)."""
    if fts_build.indexed_to(store.conn) is None:
        return True
    # FTS5 answers this search: one that uses it whatever the size (None), a title weight tantivy
    # cannot express, or a corpus too small for tantivy (or not deferred on purpose)
    tantivy_may_serve = title_weight is not None and serves(title_weight)
    passages = store.count() if tantivy_may_serve else 0  # a scan at Wikipedia size: once, if it decides
    if not tantivy_may_serve or not fts_build.left_to_tantivy(store.conn, passages):
        if locked:
            store.finish_fts(check=lambda: check(cancel))
            return True
        return fts_build.finish_left_build(store, on_event=on_event, cancel=cancel)
    path = tantivy_index.index_dir(store.path)
    if tantivy_index.is_current(path, store.conn, title_weight):
        return True
    from ...corpus.lock import BUILD_LOCK_NAME, LOCK_NAME, CorpusLock

    # The write lock keeps ingests and updates out; the build lock, an index build, whose first
    # step builds this same index (two builds would write the same folder).
    names = ([] if locked else [LOCK_NAME]) + [BUILD_LOCK_NAME]
    taken = []
    try:
        for name in names:
            lock = CorpusLock(store.path.parent, name)
            try:
                if not lock.try_acquire():
                    return False
            except OSError:  # no lock file can be made there (a read-only folder): the build fails too
                continue
            taken.append(lock)
        _build(store, title_weight, passages, on_event, cancel)
    finally:
        for lock in reversed(taken):
            lock.release()
    return True


def _build(store, title_weight: float, passages: int, on_event, cancel) -> None:
    from ...units import duration

    name = getattr(store, "corpus", store.path.parent.name)
    note = (f"building the keyword index (tantivy) of '{name}' before its first search: "
            f"{passages:,} passages, about {duration(build_seconds(passages))}")
    first = Progress(fts_build.FINISH_STAGE, 0, passages, note)
    emit(on_event, first)

    def relay(event) -> None:  # the build's own progress, under the stage the caller shows
        if isinstance(event, Progress) and event.stage == tantivy_index.STAGE:
            if event.total:
                emit(on_event, Progress(fts_build.FINISH_STAGE, event.done, event.total, note,
                                        started_at=first.started_at))
            return
        emit(on_event, event)
    tantivy_index.ensure_current(store, title_weight, on_event=relay, cancel=cancel, min_passages=0)

