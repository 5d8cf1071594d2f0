"""Run one source into a passage store: batched commits, progress events, cancellation."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from itertools import islice
from typing import Iterator

from ..events import CancelToken, EventCallback, Progress, check, emit
from ..errors import Cancelled, CorpusError
from . import fts_build
from .parallel import parallel_passages, worker_plan
from .problems import Problem, ProblemLog
from .sources import SourceOptions, open_source
from .store import DEFAULT_BATCH, PassageStore, passage_row

STAGE = "ingest"
FTS_STAGE = "keyword index"
LEFT_TO_TANTIVY = ("keyword index: left to tantivy (at this size FTS5 would answer only until it "
                   "is built), built on every core by the index stage or before the first search")


@dataclass
class IngestReport:
    """What one ``add`` or ``rebuild`` did. ``problems`` describe (up to 1000) skipped records."""

    added: int = 0
    duplicates: int = 0  # already stored (or repeated in the source): not stored twice
    skipped: int = 0  # malformed records, each described in problems (up to the cap)
    problems: list[Problem] = field(default_factory=list)
    seconds: float = 0.0
    ignored: int = 0  # left out on purpose: redirects, other namespaces, non-text files
    files: int = 0  # files of a folder that gave passages (the others are in problems)

    def merge(self, other: "IngestReport") -> None:
        self.added += other.added
        self.duplicates += other.duplicates
        self.skipped += other.skipped
        self.ignored += other.ignored
        self.files += other.files
        self.problems += other.problems
        self.seconds += other.seconds

    def to_dict(self) -> dict:
        return {"added": self.added, "duplicates": self.duplicates, "skipped": self.skipped,
                "ignored": self.ignored, "files": self.files, "seconds": round(self.seconds, 3),
                "problems": [list(p) for p in self.problems]}


def ingest_source(store: PassageStore, path, fmt: str, *, batch_size: int = DEFAULT_BATCH,
                  ids_from: PassageStore | None = None, resume: bool = False,
                  options: SourceOptions | None = None, count_as: str | None = None,
                  on_event: EventCallback | None = None,
                  cancel: CancelToken | None = None, workers: int = 1) -> IngestReport:
    """Read ``path`` as ``fmt`` into ``store``, committing every ``batch_size`` passages.

    Cancellation is checked between batches, so what was read before it is committed. The
    files a folder source met are recorded after the batch holding their last passage.
    ``count_as`` keeps a count of what this source added across runs (``PassageStore.add``).
    A source that yields nothing at all (empty, or every record malformed) is a CorpusError.
    ``workers``: processes that parse a source that can be split (``parallel``; 0 = auto, by
    the cores and the file's size); the passages, their order and ids do not depend on it.
    With workers that parse faster than a per-batch writer stores (``fts_build.worth_deferring``
    before the start, else ``fts_build.WriterWatch`` on the writer's measured pace after its first
    ~10,000 passages), the FTS5 keyword index is built once at the end (from there on), and after
    a failure for what was stored; a cancel leaves it to the next add (or the first search). An
    index a killed ingest left unbuilt is built at the end of any ingest, except in a corpus large
    enough for tantivy (``fts_build.TANTIVY_SERVES_FROM``), where it stays unbuilt.
    """
    started = time.monotonic()
    problems = ProblemLog()
    source = open_source(path, fmt, store.corpus, problems, options)
    if resume and ids_from is None and hasattr(source, "resume_after"):
        source.resume_after = _last_document_of(store, source)
    report = IngestReport()
    processes, head_start = worker_plan(source, workers) if workers != 1 else (1, False)
    stream: Iterator[tuple] = (parallel_passages(source, processes, head_start, rows=True)
                               if processes > 1 else _rows(iter(source.passages())))
    watch = None
    if fts_build.worth_deferring(source, processes) and (ids_from is None or store.count() == 0):
        store.defer_fts()  # (with ids_from, only into an empty store: else ids may fall below X)
    elif processes > 1 and ids_from is None and fts_build.indexed_to(store.conn) is None:
        # the writer's own pace decides, once it has stored a few batches
        watch = fts_build.WriterWatch(processes, getattr(source, "parse_passages_per_core_s", 0))
    emit(on_event, Progress(STAGE, 0, None, f"reading {path}" + (
        f" (continuing after page {source.resume_after})" if getattr(source, "resume_after", None)
        else "") + (f" with {processes} worker processes" if processes > 1 else ""), started))
    try:
        _store_all(store, source, stream, report, batch_size=batch_size, ids_from=ids_from,
                   count_as=count_as, on_event=on_event, cancel=cancel, started=started, watch=watch)
    except Cancelled:
        raise  # prompt: the index is built by the next add, or before the first search
    except CorpusError:  # a damaged file, a full disk: what was stored becomes searchable if it can
        try:
            build_fts(store, on_event=on_event, cancel=cancel)
        except CorpusError:
            pass  # stays deferred (its state says so): the next add builds it
        raise
    finally:
        getattr(stream, "close", lambda: None)()  # stops the worker processes, if any
    build_fts(store, on_event=on_event, cancel=cancel)
    report.skipped, report.problems, report.ignored = problems.skipped, problems.problems, source.ignored
    report.seconds = time.monotonic() - started
    if report.added + report.duplicates == 0:
        detail = "".join(f"\n  {p}" for p in report.problems[:5])
        error = CorpusError(
            f"No passages found in {path} (format {fmt}); {report.skipped} records were malformed, "
            f"{report.ignored} left out.{detail}",
            hint="Check the file and the --format; see the lines above for what was wrong.")
        error.report = report  # every problem, for callers that list them (corpus add --json)
        raise error
    emit(on_event, Progress(STAGE, source.bytes_total or 1, source.bytes_total or 1,
                            f"{report.added:,} passages added", started))
    return report


def build_fts(store: PassageStore, *, on_event: EventCallback | None = None,
              cancel: CancelToken | None = None) -> int:
    """Build the part of the keyword index a deferred ingest left (nothing when complete),
    with progress in passage ids; a cancel keeps what was built."""
    if not fts_build.pending(store.conn):
        return store.finish_fts()  # complete (or nothing stored above X): marks it complete
    started = time.monotonic()
    if fts_build.left_to_tantivy(store.conn):
        emit(on_event, Progress(FTS_STAGE, 1, 1, LEFT_TO_TANTIVY, started))
        return 0
    emit(on_event, Progress(FTS_STAGE, 0, None, "building the keyword index", started))

    def progress(done: int, total: int) -> None:
        emit(on_event, Progress(FTS_STAGE, done, total or None,
                                f"keyword index: {done:,} of {total:,} passages", started))
    return store.finish_fts(progress=progress, check=lambda: check(cancel))


def _store_all(store: PassageStore, source, stream: Iterator[tuple], report: IngestReport, *,
               batch_size: int, ids_from, count_as, on_event, cancel, started: float,
               watch: fts_build.WriterWatch | None = None) -> None:
    """Store ``stream`` batch by batch, checking ``cancel`` between batches; ``watch`` times the
    writer and may defer the keyword index for the rest (the index is complete between batches)."""
    def put(batch: list[tuple]) -> None:  # passages as ``passage_row`` tuples
        result = store.add_rows(batch, batch_size=batch_size, ids_from=ids_from, count_as=count_as)
        report.added += result.added
        report.duplicates += result.duplicates

    while True:
        check(cancel)
        batch: list[tuple] = []
        asked = time.monotonic()
        try:
            batch.extend(islice(stream, batch_size))
        except CorpusError:  # the file breaks off: what was read before it is stored, as promised
            if batch:
                put(batch)
            raise
        if batch:
            got = time.monotonic()
            put(batch)
            if watch is not None and watch.observe(len(batch), got - asked, time.monotonic() - got):
                store.defer_fts()
        report.files += sum(1 for d in source.documents if d.passages)
        store.put_documents(source.documents)
        source.documents.clear()
        if not batch:
            break
        emit(on_event, Progress(STAGE, source.bytes_done, source.bytes_total or None,
                                f"{report.added:,} passages added", started))


def _rows(passages) -> Iterator[tuple]:
    """A serial read's passages as the store's rows; closing this closes the read (its file)."""
    try:
        for p in passages:
            yield passage_row(p)
    finally:
        getattr(passages, "close", lambda: None)()


def _last_document_of(store: PassageStore, source) -> str | None:
    """The document id of the newest passage when it came from this source's file (a stopped
    ingest of it): the source may skip ahead to it instead of parsing everything again."""
    row = store.conn.execute("SELECT doc_id, source FROM passages ORDER BY id DESC LIMIT 1").fetchone()
    if row and row[1].startswith(f"{source.path.name}#") and row[0]:
        return row[0]
    return None
