"""A corpus read from one source (a MediaWiki dump, a ZIM file, TSV or JSON lines) brought to a
newer version of it: every article of the new source is compared with the stored one of the same
``doc_id`` (a page id, a ZIM path, a record id), and articles the new source no longer has are
removed at the end (``apply.DocumentUpdater``).

The source is read once, in its own order; a document's passages are contiguous there, so one
document at a time is handed on. Removal waits until the whole source was read: a source that
stops early (truncated, cancelled, killed) removes nothing.

A source that can be split (a dump, a ZIM or parquet file: ``corpus.parallel``) is parsed by
worker processes; they hand the passages back in the source's order, so each article's passages
still arrive together and the update is the same for any number of workers.
"""

from __future__ import annotations

import time
from pathlib import Path

from ...errors import CorpusError
from ...events import CancelToken, EventCallback, Progress, check, emit
from ...types import Passage
from ..parallel import parallel_passages, workers_for
from ..problems import ProblemLog
from ..sources import SourceOptions, open_source
from ..store import DEFAULT_BATCH, PassageStore
from .apply import ADDED, CHANGED, DocumentUpdater
from .report import UpdateReport

STAGE = "update"
_PROGRESS_EVERY = 1000  # documents between progress events


def update_from_source(store: PassageStore, path: Path, fmt: str, *,
                       options: SourceOptions | None = None, batch_size: int = DEFAULT_BATCH,
                       on_event: EventCallback | None = None,
                       cancel: CancelToken | None = None, workers: int = 1) -> UpdateReport:
    """Bring ``store`` to the documents of ``path`` (format ``fmt``); counts are in articles.
    ``workers``: processes parsing a source that can be split (0 = auto, as for ``corpus add``)."""
    started = time.monotonic()
    report = UpdateReport(store.corpus, "articles", source=str(path))

    def on_document(doc_id: str, kind: str, _record, title: str) -> None:
        if kind in (CHANGED, ADDED):
            report.note(kind, title or doc_id)
        elif kind != "empty":
            report.unchanged += 1

    problems = ProblemLog()
    source = open_source(path, fmt, store.corpus, problems, options)
    updater = DocumentUpdater(store, batch_size=batch_size, track_seen=True, cancel=cancel,
                              on_document=on_document)
    processes = workers_for(source, workers) if workers != 1 else 1
    emit(on_event, Progress(STAGE, 0, None, f"comparing {path.name} with the stored articles" + (
        f" ({processes} worker processes reading)" if processes > 1 else ""), started))
    stream = parallel_passages(source, processes) if processes > 1 else source.passages()
    current: str | None = None
    passages: list[Passage] = []
    done = 0
    try:
        for passage in stream:
            if passage.doc_id != current:
                if current is not None:
                    updater.put(current, passages)
                    done += 1
                    if done % _PROGRESS_EVERY == 0:
                        check(cancel)
                        emit(on_event, Progress(STAGE, source.bytes_done, source.bytes_total or None,
                                                f"{done:,} articles compared, {report.changed:,} "
                                                f"changed, {report.added:,} new", started))
                current, passages = passage.doc_id, []
            passages.append(passage)
    finally:
        stream.close()  # stops the worker processes, if any
    if current is not None:
        updater.put(current, passages)
    updater.flush()
    if updater.documents_seen == 0:
        raise CorpusError(f"No articles found in {path} (format {fmt}); the corpus is unchanged.",
                          hint="Check that this is the newer snapshot of the same source.")
    gone = updater.unseen()
    for _, title in gone:
        report.note("removed", title)
    updater.remove(doc_id for doc_id, _ in gone)
    report.passages_added, report.passages_removed = updater.passages_added, updater.passages_removed
    report.passages_kept = store.count() - report.passages_added  # their ids and vectors stay
    report.problems = problems.problems
    report.seconds = time.monotonic() - started
    emit(on_event, Progress(STAGE, 1, 1, report.summary(), started))
    return report
