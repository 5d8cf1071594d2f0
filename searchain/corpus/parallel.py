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

Workers are started with ``spawn`` (no fork of a process that may hold Qt or SQLite threads),
ignore Ctrl-C (the parent cancels), and exit when the parent dies (a kill -9 leaves no workers).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Iterator

from ..errors import CorpusError
from ..types import Passage

WINDOW = 3  # items in flight per worker: enough to keep each busy, few enough to stay small
MAX_AUTO_WORKERS = 16
AUTO_MIN_BYTES = 8_000_000  # smaller sources are read in the caller's process when workers is auto

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
    """How many workers ``source`` gets under ``corpus.ingest_workers`` = ``setting``: the
    setting itself when set (N > 0); with auto (0), all cores for a large splittable source and
    1 (no worker processes) for a small one, where starting them costs more than they save."""
    if not supports_workers(source):
        return 1
    if setting > 0:
        return setting
    if hasattr(source, "work_bytes"):  # a folder: its supported files (or parquet shards) together
        size = source.work_bytes()
    else:
        size = source.path.stat().st_size if source.path.is_file() else 0
    return auto_workers() if size >= AUTO_MIN_BYTES else 1


def parallel_passages(source, workers: int) -> Iterator[Passage]:
    """``source``'s passages, parsed by ``workers`` processes, in the source's order.

    Closing the generator (a cancel, an error in the writer) stops the workers.
    """
    import multiprocessing

    spec = (str(source.path), source.format, source.corpus, source.options)

    def new_pool() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_start_worker, initargs=(spec, os.getpid()))

    pool = new_pool()
    pending: deque = deque()
    retry: deque = deque()  # (item, done) to run one at a time, after a worker died
    recovers = hasattr(source, "item_died") and hasattr(source, "split_item")
    items = iter(source.work_items())
    stopped: BaseException | None = None  # the file failed to read at some point (truncated...)
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
                pending.append((item, done, pool.submit(_parse, item)))
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


def _take(source, result, done: int) -> Iterator[Passage]:
    """An item's result, in the parent: its passages, then its counts, problems and records."""
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

def _start_worker(spec, parent: int) -> None:
    global _worker_source
    from .problems import ProblemLog
    from .sources import open_source

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    path, fmt, corpus, options = spec
    _worker_source = open_source(path, fmt, corpus, ProblemLog(), options)
    threading.Thread(target=_exit_with, args=(parent,), daemon=True).start()


def _exit_with(parent: int) -> None:
    """Leave as soon as the parent is gone (killed): no orphan keeps parsing a 20 GB dump."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def _ping() -> bool:
    return True


def _parse(item):
    """``(passages, ignored, problems, documents, error)`` of one item; ``error`` is
    ``(message, hint)`` for a CorpusError (sent as text: exceptions with keyword arguments do
    not unpickle)."""
    source = _worker_source
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
    return passages, source.ignored - ignored, problems[:new] if new else [], documents, None
