"""A folder corpus brought back in step with its folders (issue #34, *Folders kept in sync*).

Each recorded folder (or single document) is walked, and each supported file compared with its
``DocumentRecord`` (``documents.py``):

- same size and modification time: **unchanged**, not opened;
- otherwise its bytes are hashed: the same SHA-256 is **unchanged** too (the record takes the
  new time, so the next sync does not hash it again);
- another hash, or no record: the file is read (``FolderSource`` over just these files) and its
  passages handed to ``apply.DocumentUpdater``: **changed** or **added**. A changed file whose
  text came out the same keeps its passages and vectors all the same;
- a record whose file is gone: **removed**, with its passages.

Counts are in files. A file that could not be read keeps its reason and is tried again once it
changes. ``scan`` is the same comparison without hashing or reading: the plan's estimate.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from ...errors import CorpusError
from ...events import CancelToken, EventCallback, Progress, check, emit
from ...types import Passage
from ..documents import DocumentRecord
from ..problems import ProblemLog
from ..sources import SourceOptions
from ..sources.documents import Unreadable, format_of
from ..sources.documents.files import FileEntry, read, walk
from ..sources.folder import FolderSource
from ..store import DEFAULT_BATCH, PassageStore
from .apply import ADDED, CHANGED, UNCHANGED, DocumentUpdater
from .report import UpdateReport

STAGE = "update"
FOLDER_FORMATS = ("folder", "document")


@dataclass
class FolderScan:
    """One recorded folder (or document) compared by size and time only."""

    path: Path
    prefix: str  # doc_id prefix: "<folder name>/", "" for a single document
    same: list[FileEntry] = field(default_factory=list)
    touched: list[tuple[FileEntry, DocumentRecord]] = field(default_factory=list)  # time or size differ
    new: list[FileEntry] = field(default_factory=list)
    gone: list[DocumentRecord] = field(default_factory=list)
    walk_problems: list = field(default_factory=list)

    @property
    def bytes_to_read(self) -> int:
        return sum(e.size for e in self.new) + sum(e.size for e, _ in self.touched)


def folder_sources(store: PassageStore) -> list[Path]:
    """The folders (and single documents) a corpus was made from, as recorded in its meta."""
    return [Path(s["path"]) for s in store.meta_get("sources", []) if s.get("format") in FOLDER_FORMATS]


def scan(store: PassageStore, folders: list[Path]) -> list[FolderScan]:
    """Each folder's files sorted by what a sync would do with them (no file is opened)."""
    for folder in folders:
        if not folder.exists():
            raise CorpusError(f"Cannot update corpus {store.corpus!r}: its folder {folder} is gone.",
                              hint="Reconnect or restore it, or remove the corpus and add the "
                                   "folder's new place.")
    records = store.documents()
    scans = []
    for folder in folders:
        if folder.is_file():
            info = folder.stat()
            entries, problems, prefix = [FileEntry(folder, folder.name, info.st_size, info.st_mtime_ns)], [], ""
            mine = {r.doc_id: r for r in records if r.source == str(folder)}
        else:
            entries, problems = walk(folder)
            prefix = f"{folder.name}/"
            inside = str(folder).rstrip(os.sep) + os.sep
            mine = {r.doc_id: r for r in records if r.source.startswith(inside)}
        result = FolderScan(folder, prefix, walk_problems=problems)
        for entry in entries:
            if format_of(entry.path.suffix) is None:
                continue
            record = mine.pop(f"{prefix}{entry.relative}", None)
            if record is None:
                result.new.append(entry)
            elif (record.size, record.mtime_ns) == (entry.size, entry.mtime_ns):
                result.same.append(entry)
            else:
                result.touched.append((entry, record))
        result.gone = sorted(mine.values(), key=lambda r: r.doc_id)
        scans.append(result)
    return scans


class _SomeFiles(FolderSource):
    """A folder source reading only the files given (a sync's changed and new ones)."""

    def __init__(self, path: Path, corpus: str, problems: ProblemLog, options, files: list[FileEntry]):
        super().__init__(path, corpus, problems, options)
        self._files = files

    def _walk(self):
        return self._files, []


def sync_folders(store: PassageStore, folders: list[Path], *, options: SourceOptions | None = None,
                 batch_size: int = DEFAULT_BATCH, on_event: EventCallback | None = None,
                 cancel: CancelToken | None = None) -> UpdateReport:
    """Re-sync ``store`` with ``folders`` (see the module docstring); counts are in files."""
    started = time.monotonic()
    options = options or SourceOptions()
    report = UpdateReport(store.corpus, "files")
    scans = scan(store, folders)
    problems = ProblemLog()
    reading: dict[str, str] = {}  # doc_id -> "changed" | "added" (the file's own kind)

    def on_document(doc_id: str, kind: str, record: DocumentRecord | None, _title: str) -> None:
        name = record.source if record is not None else doc_id
        as_file = reading.pop(doc_id, ADDED)
        if as_file == ADDED and kind in (UNCHANGED, CHANGED):  # passages stored without a record
            as_file = kind  # (a store from before records were kept): what they say counts
        if as_file == UNCHANGED:
            report.unchanged += 1
        else:
            report.note(as_file, name)

    updater = DocumentUpdater(store, batch_size=batch_size, cancel=cancel, on_document=on_document)
    total = sum(s.bytes_to_read for s in scans)
    done = 0
    for s in scans:
        for problem in s.walk_problems:
            problems.skip(problem.path, None, problem.reason)
        report.unchanged += len(s.same)
        to_read: list[FileEntry] = list(s.new)
        reading.update({f"{s.prefix}{e.relative}": ADDED for e in s.new})
        refreshed: list[DocumentRecord] = []
        for entry, record in s.touched:  # size or time differ: the content hash decides
            check(cancel)
            digest = _sha256(entry, options.max_file_bytes)
            done += entry.size
            if digest and digest == record.sha256:
                report.unchanged += 1
                refreshed.append(replace(record, size=entry.size, mtime_ns=entry.mtime_ns))
            else:
                to_read.append(entry)
                reading[record.doc_id] = CHANGED
        store.put_documents(refreshed)
        if to_read:
            to_read.sort(key=lambda e: e.relative)  # the walk's order (doc_id order)
            source = _SomeFiles(s.path, store.corpus, problems, options, to_read)
            passages: list[Passage] = []
            for passage in source.passages():
                _hand_on(source, passages, updater)
                passages.append(passage)
                if len(passages) % 256 == 0:
                    emit(on_event, Progress(STAGE, done + source.bytes_done, total or None,
                                            f"reading {passage.source}", started))
            _hand_on(source, passages, updater)
            done += source.bytes_done
        updater.flush()
        if s.gone:
            for record in s.gone:
                report.note("removed", record.source)
            updater.remove(r.doc_id for r in s.gone)
    report.passages_added, report.passages_removed = updater.passages_added, updater.passages_removed
    report.passages_kept = store.count() - report.passages_added  # their ids and vectors stay
    report.problems = problems.problems
    report.seconds = time.monotonic() - started
    emit(on_event, Progress(STAGE, done, total or None, report.summary(), started))
    return report


def _hand_on(source: FolderSource, passages: list[Passage], updater: DocumentUpdater) -> None:
    """Files the source has finished (their records follow their passages): hand each on."""
    for record in source.documents:
        mine = [p for p in passages if p.doc_id == record.doc_id]
        updater.put(record.doc_id, mine, record)
        passages[:] = [p for p in passages if p.doc_id != record.doc_id]
    source.documents.clear()


def _sha256(entry: FileEntry, limit: int | None) -> str:
    """The file's hash, or "" when it cannot be read now (it is then read as changed, and the
    reader reports why)."""
    try:
        return hashlib.sha256(read(entry, limit)).hexdigest()
    except (Unreadable, OSError):
        return ""

