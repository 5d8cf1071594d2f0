"""Parse a source in worker processes; the caller (one writer) stores passages in source order.

A source that can be split offers two methods (``MediaWikiSource``, ``ZimSource``,
``ParquetSource``):

- ``work_items()``, run in the parent: yields ``(item, bytes_done)`` in the source's own order.
  An item is small and picklable (a batch of raw pages, a byte range of a multistream dump, a
  range of ZIM entry ids, a parquet row group's number); ``bytes_done`` is the progress once it
  is stored. Resuming (``resume_after``) and errors about the file as a whole happen here.
- ``parse_item(item)``, run in a worker on its own instance of the source (made by
  ``open_source`` with the same path, format, corpus and options): the item's passages, in
  order. Records it leaves out add to ``ignored``; malformed ones go to ``problems`` naming the
  record, and the others go on. A ``CorpusError`` (a damaged stream) stops the ingest.
  ``DocumentRecord``s it appends to ``documents`` (a folder's files) travel back with the
  passages and are noted after them.

A worker process that dies (killed, out of memory, a crash inside a parsing library) stops the
ingest with a CorpusError, unless the source offers ``split_item(item, done)`` and
``item_died(item, detail)`` (a folder of documents): then the items that were in flight are run
again one at a time in a fresh pool, an item of several files that dies again is split into
one-file items, and a one-file item that dies alone is handed to ``item_died`` (its problem
line) while the rest go on.

An error reading the file in the parent (a truncated dump) is raised after the passages of the
items read before it, as a serial read would. ``parallel_passages`` keeps at most ``workers * WINDOW`` items in flight and yields their
passages in submission order, so the passages, their pids and the ids the store gives them are
the same for any number of workers, memory does not grow with the source, and what is stored at
a kill is a prefix of the source (which is what resuming relies on).

Workers are forks of a fork server (``processes``: never a fork of this process, which may hold
Qt or SQLite threads), ignore Ctrl-C (the parent cancels), and exit when the parent dies (a
kill -9 leaves no workers). With ``head_start`` (a small folder, ``worker_plan``), the caller
parses items itself until the pool has started, then hands the rest to it, in order.
"""

from __future__ import annotations

import os
import signal
import threading
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Iterator

from ..errors import CorpusError
from ..types import Passage
from .processes import worker_context
from .store import passage_row

WINDOW = 3  # items in flight per worker: enough to keep each busy, few enough to stay small
MAX_AUTO_WORKERS = 16
AUTO_MIN_BYTES = 8_000_000  # auto: from here a source gets a worker per core, every item in one
HEAD_START_MIN_BYTES = 500_000  # auto, a folder of documents: from here it gets workers too, ...
HEAD_START_MAX_WORKERS = 4  # ... at most this many, while the ingest reads the first files itself

_worker_source = None  # the worker's own instance of the source


def supports_workers(source) -> bool:
    return hasattr(source, "work_items") and hasattr(source, "parse_item")


def auto_workers() -> int:
    """The worker count when the setting is 0 (auto): the cores this process may use, capped."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_AUTO_WORKERS))


def workers_for(source, setting: int) -> int:
    """How many workers ``source`` gets under ``corpus.ingest_workers`` = ``setting``."""
    return worker_plan(source, setting)[0]


def worker_plan(source, setting: int) -> tuple[int, bool]:
    """``(workers, head_start)`` for ``source`` under ``corpus.ingest_workers`` = ``setting``.

    Set (N > 0): N workers, every item read in one. Auto (0): a source of 8 MB or more gets a
    worker per core, every item read in one; a folder of documents from 500 KB gets up to 4,
    started while the ingest reads the first files itself (``parallel_passages``' head start:
    the fork server's start is not waited for); a smaller source, or one core, none (the ingest
    reads it in its own process, where starting processes would cost more than they save).
    Measured in BENCHMARKS.md (#34)."""
    if not supports_workers(source):
        return 1, False
    if setting > 0:
        return setting, False
    if hasattr(source, "work_bytes"):  # a folder: its supported files (or parquet shards) together
        size = source.work_bytes()
    else:
        size = source.path.stat().st_size if source.path.is_file() else 0
    cores = auto_workers()
    if size >= AUTO_MIN_BYTES:
        return cores, False
    if size >= HEAD_START_MIN_BYTES and cores > 1 and hasattr(source, "split_item"):
        return min(cores, HEAD_START_MAX_WORKERS), True
    return 1, False


def parallel_passages(source, workers: int, head_start: bool = False, *,
                      rows: bool = False) -> Iterator[Passage] | Iterator[tuple]:
    """``source``'s passages, parsed by ``workers`` processes, in the source's order.

    ``head_start``: while the worker processes start, the caller parses the first items itself
    (as a worker does, on its own instance of the source), so that a small source does not wait
    for them; such items have no process of their own to crash in. Closing the generator (a
    cancel, an error in the writer) stops the workers.

    The workers send each passage as a tuple of the store's columns (``store.passage_row``):
    unpickling a ``Passage`` object costs the one writer ~4 us, a tuple ~1 (a third of the
    writer's CPU at ~80,000 passages a second: BENCHMARKS.md, "The writer receives rows").
    ``rows``: yield those tuples, for a caller that stores them as they are (the ingest); else
    ``Passage`` objects of ``source.corpus``.
    """
    inner = _parallel_rows(source, workers, head_start)
    try:
        if rows:
            yield from inner
        else:
            corpus = source.corpus
            for row in inner:
                yield Passage(corpus, *row)
    finally:
        inner.close()


def _parallel_rows(source, workers: int, head_start: bool) -> Iterator[tuple]:
    spec = (str(source.path), source.format, source.corpus, source.options)

    def new_pool() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(workers, mp_context=worker_context(),
                                   initializer=_start_worker, initargs=(spec,))

    items = iter(source.work_items())
    stopped: BaseException | None = None  # the file failed to read at some point (truncated...)
    started: list = []  # the pool, once the starter thread has it (or why it could not start)
    pool = None
    try:
        if head_start:
            starter = threading.Thread(target=_start_pool, args=(new_pool, workers, started),
                                       name="searchain-workers-start", daemon=True)
            starter.start()
            local = None
            try:
                while starter.is_alive():
                    try:
                        nxt = next(items, None)
                    except Exception as exc:  # noqa: BLE001 - raised after the items before it
                        stopped = exc
                        break
                    if nxt is None:
                        break
                    local = local or _open_local(spec)
                    yield from _take(source, _parse_with(local, nxt[0]), nxt[1])
            finally:
                starter.join()
                pool = started[0] if started and not isinstance(started[0], BaseException) else None
            if pool is None:
                raise started[0]
        else:
            pool = new_pool()
        yield from _pooled(source, workers, pool, new_pool, items, stopped)
    finally:
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _start_pool(new_pool, workers: int, out: list) -> None:
    """Start a pool and all its processes (in a thread: the first start waits for the fork
    server to load); ``out`` gets the pool, or the exception."""
    try:
        pool = new_pool()
        out.append(pool)
        for _ in range(workers):  # each submit while none is idle starts a process
            pool.submit(_ping)
    except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
        if out:
            out[0].shutdown(wait=False, cancel_futures=True)
            out.clear()
        out.append(exc)


def _pooled(source, workers: int, pool: ProcessPoolExecutor, new_pool, items,
            stopped: BaseException | None) -> Iterator[tuple]:
    """The rest of ``items`` through ``pool`` (replaced by ``new_pool()`` after a death)."""
    pending: deque = deque()
    retry: deque = deque()  # (item, done) to run one at a time, after a worker died
    recovers = hasattr(source, "item_died") and hasattr(source, "split_item")
    try:
        while True:
            if retry:  # one at a time, so that a death names its item
                item, done = retry.popleft()
                try:
                    result = pool.submit(_parse, item).result()
                except BrokenProcessPool:
                    pool.shutdown(wait=True, cancel_futures=True)
                    pool = new_pool()
                    parts = source.split_item(item, done)
                    if parts:
                        retry.extendleft(reversed(parts))
                    else:
                        _check_workers_start(pool, source)  # the file, not every worker, is to blame
                        source.item_died(item, "its process died")
                        source.bytes_done = done
                    continue
                yield from _take(source, result, done)
                continue
            while stopped is None and len(pending) < workers * WINDOW:
                try:
                    nxt = next(items, None)
                except Exception as exc:  # noqa: BLE001 - raised once the items before it are stored
                    stopped = exc
                    break
                if nxt is None:
                    break
                item, done = nxt
                pending.append((item, done, _submit(pool, item)))
            if not pending:
                if stopped is not None:
                    raise stopped
                return
            item, done, future = pending.popleft()
            try:
                result = future.result()
            except BrokenProcessPool as exc:
                if not recovers:
                    raise CorpusError(
                        f"{source.path}: a worker process died while reading {_describe(item)} "
                        f"(out of memory, or killed); what was read before it was added.",
                        hint="Run the same command again to continue, with fewer workers "
                        "(--workers, or settings corpus.ingest_workers) if memory is short.") from exc
                retry.append((item, done))  # this one and all in flight: again, one at a time
                retry.extend((i, d) for i, d, _ in pending)
                pending.clear()
                pool.shutdown(wait=True, cancel_futures=True)
                pool = new_pool()
                continue
            yield from _take(source, result, done)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _submit(pool: ProcessPoolExecutor, item) -> Future:
    """``item`` parsed in ``pool``; where a worker died just before (the pool refuses new work),
    a future holding that error, so that it is met in order, like any death, and recovered from."""
    try:
        return pool.submit(_parse, item)
    except BrokenProcessPool as exc:
        future: Future = Future()
        future.set_exception(exc)
        return future


def _check_workers_start(pool: ProcessPoolExecutor, source) -> None:
    """A CorpusError when a fresh worker dies before doing anything (its start fails)."""
    try:
        pool.submit(_ping).result()
    except BrokenProcessPool as exc:
        raise CorpusError(
            f"{source.path}: worker processes die as they start, so no file can be read in them; "
            f"what was read before was added.",
            hint="Run the same command again with --workers 1 (or settings corpus.ingest_workers 1) "
            "to read in the ingest's own process, and report this.") from exc


def _take(source, result, done: int) -> Iterator[tuple]:
    """An item's result, in the parent: its passages (rows), then its counts, problems and records."""
    passages, ignored, problems, documents, error = result
    if error is not None:
        raise CorpusError(error[0], hint=error[1])
    source.ignored += ignored
    for where, line, reason in problems:
        source.problems.skip(where, line, reason)
    yield from passages
    source.documents.extend(documents)  # after their passages, as a serial read does
    source.bytes_done = done


def _describe(item) -> str:
    kind, payload = item if isinstance(item, tuple) and len(item) == 2 else ("", item)
    if kind == "pages":
        return f"pages {payload[0][0]} to {payload[-1][0]}"
    if kind == "stream":
        return f"the stream at byte {payload[0]:,}"
    if kind == "row_group":
        return f"row group {payload[1] + 1} of {payload[0]}"
    if kind == "entries":
        return f"entries {payload[0]} to {payload[-1]}" if payload else "an empty range"
    if kind == "files" and payload:
        return f"{payload[0][1]}" + (f" to {payload[-1][1]}" if len(payload) > 1 else "")
    return repr(item)[:80]


# -- in the worker ---------------------------------------------------------------------------

def _start_worker(spec) -> None:
    global _worker_source
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    _worker_source = _open_local(spec)
    threading.Thread(target=_exit_with_parent, daemon=True).start()


def _exit_with_parent() -> None:
    """Leave as soon as the parent is gone (killed): no orphan keeps parsing a 20 GB dump. The
    parent is the process that asked for this worker (with forkserver, not the OS parent): its
    end of the pipe it sent this process's start on closes when it dies."""
    import multiprocessing

    multiprocessing.parent_process().join()
    os._exit(0)


def _ping() -> bool:
    return True


def _open_local(spec):
    """The caller's own instance of the source, for the items it parses itself."""
    from .problems import ProblemLog
    from .sources import open_source

    path, fmt, corpus, options = spec
    return open_source(path, fmt, corpus, ProblemLog(), options)


def _parse(item):
    return _parse_with(_worker_source, item)


def _parse_with(source, item):
    """``(rows, ignored, problems, documents, error)`` of one item (``rows``: its passages as
    ``store.passage_row`` tuples); ``error`` is ``(message, hint)`` for a CorpusError (sent as
    text: exceptions with keyword arguments do not unpickle)."""
    ignored, logged = source.ignored, source.problems.skipped
    source.documents.clear()
    try:
        passages = source.parse_item(item)
    except CorpusError as exc:
        return [], 0, [], [], (exc.message, exc.hint)
    except Exception as exc:  # noqa: BLE001 - reported with the item, not as a bare traceback
        return [], 0, [], [], (f"{source.path}: reading {_describe(item)} failed: "
                               f"{type(exc).__name__}: {exc}. What was read before it was added.",
                               "This looks like a bug or a damaged file: report it with the file's name.")
    problems = [tuple(p) for p in source.problems.problems]
    new = source.problems.skipped - logged
    source.problems.problems.clear()  # each item's problems travel once
    documents = list(source.documents)
    source.documents.clear()
    rows = [passage_row(p) for p in passages]
    return rows, source.ignored - ignored, problems[:new] if new else [], documents, None
