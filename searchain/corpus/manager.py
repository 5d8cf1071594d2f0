"""Corpora on disk: add, list, inspect, remove, rebuild, and which one is active.

Each corpus is a folder ``<data>/corpora/<name>/`` holding ``passages.db`` (see ``store``) and,
once indexed, ``index/`` (owned by ``searchain.index``). The store's ``meta`` table records::

    name, created       set once
    state               "ingesting" while passages are being written, "ready" after
    sources             [{path, format, status ("ingesting"|"done"), added, duplicates,
                          skipped, ignored, at}] so ``rebuild`` can re-read them; ``added``
                        counts what the source added over all its runs (a resumed or repeated
                        add included), the other counts are the last run's
    added_by_source     {"<format>:<path>": passages added}, kept in each batch's transaction

A process killed mid-ingest leaves ``state = "ingesting"`` and no lock holder: ``list``/``info``
then say ``incomplete``, and adding the same source again continues (stored pids are skipped).
A store that cannot be read is ``damaged`` only when SQLite says so (not a database, malformed);
a full disk, an I/O error, a permission or a lock make it ``unreadable``, whose hint never advises
removing it: the file is most likely intact, and the next look after the cause is gone sees it.
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..config import AppPaths, Settings
from ..errors import TRANSIENT_IO_HINT, CorpusError, is_transient_io
from ..events import CancelToken, EventCallback
from ..units import timestamp
from .ingest import IngestReport, ingest_source
from .lock import BUILD_LOCK_NAME, CorpusLock, is_locked
from .sources import FORMATS, SourceOptions
from .sources.detect import check_text_source, detect_format
from .store import ADDED_BY_SOURCE, DB_NAME, PassageStore

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
READY, INGESTING, INCOMPLETE, DAMAGED, UNREADABLE = (
    "ready", "ingesting", "incomplete", "damaged", "unreadable")
NOT_MADE = "not made"  # the demo corpus before its first use (listed by the CLI, made on use)
SQLITE_HEADER = b"SQLite format 3\0"


@dataclass
class CorpusInfo:
    name: str
    path: str
    passages: int | None  # None when the store could not be read (damaged or unreadable)
    sources: list[str]
    formats: list[str]
    size_bytes: int
    created: str
    # ready | ingesting (another process is writing) | incomplete | damaged | unreadable (for now)
    # | not made (the demo, before its first use)
    state: str
    active: bool
    embedder: str | None = None  # from index/meta.json, when an index exists
    indexed: int | None = None
    problem: str = ""  # why a damaged or unreadable corpus could not be read
    hint: str = ""  # what to do about it
    source_details: list[dict] = field(default_factory=list)
    # the last ``corpus update``: {status: running|done, from, at, ...}; "running" with no lock
    # held means it was stopped and the next update continues it
    last_update: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


class CorpusManager:
    def __init__(self, paths: AppPaths, settings: Settings):
        self.paths = paths
        self.settings = settings

    # -- where things are ------------------------------------------------------------------

    def corpus_dir(self, name: str) -> Path:
        _check_name(name)
        return self.paths.corpora_dir / name

    def exists(self, name: str) -> bool:
        return (self.corpus_dir(name) / DB_NAME).exists()

    def open_store(self, name: str) -> PassageStore:
        if not self.exists(name):
            raise CorpusError(f"There is no corpus named {name!r}.",
                              hint=_known_hint(self.names()))
        return PassageStore.open(self.corpus_dir(name) / DB_NAME, corpus=name)

    def build_lock(self, name: str) -> CorpusLock:
        """Take the lock an index build of ``name`` holds (``lock.py``): a second build refuses,
        an add does not wait for it."""
        if not self.exists(name):
            raise CorpusError(f"There is no corpus named {name!r}.", hint=_known_hint(self.names()))
        return CorpusLock(self.corpus_dir(name), BUILD_LOCK_NAME).acquire(name)

    def names(self) -> list[str]:
        root = self.paths.corpora_dir
        if not root.is_dir():
            return []
        return sorted(p.name for p in root.iterdir()
                      if p.is_dir() and _NAME.match(p.name) and (p / DB_NAME).exists())

    # -- looking ---------------------------------------------------------------------------

    def list(self) -> list[CorpusInfo]:
        return [self.info(name) for name in self.names()]

    def info(self, name: str) -> CorpusInfo:
        folder = self.corpus_dir(name)
        if not (folder / DB_NAME).exists():
            raise CorpusError(f"There is no corpus named {name!r}.", hint=_known_hint(self.names()))
        embedder, indexed = _index_facts(folder / "index" / "meta.json")
        base = dict(name=name, path=str(folder), size_bytes=_folder_size(folder),
                    active=name == self.active, embedder=embedder, indexed=indexed)
        try:
            with PassageStore.open(folder / DB_NAME, corpus=name) as store:
                sources = store.meta_get("sources", [])
                state = store.meta_get("state", INCOMPLETE)
                count = store.count()
                created = store.meta_get("created", "")
                last_update = store.meta_get("update", {})
        except Exception as exc:  # a damaged file must not break listing the others
            if _transient(folder / DB_NAME, exc):
                return CorpusInfo(passages=None, sources=[], formats=[], created="", state=UNREADABLE,
                                  problem=getattr(exc, "message", str(exc)), hint=TRANSIENT_IO_HINT,
                                  **base)
            return CorpusInfo(passages=None, sources=[], formats=[], created="", state=DAMAGED,
                              problem=getattr(exc, "message", str(exc)),
                              hint=f"Run `searchain corpus rebuild {name}` (it re-reads the recorded "
                              "sources), or remove the corpus and add it again.", **base)
        if state == INGESTING and not is_locked(folder):
            state = INCOMPLETE
        return CorpusInfo(passages=count, sources=[s["path"] for s in sources],
                          formats=sorted({s["format"] for s in sources}), created=created,
                          state=state, source_details=sources, last_update=last_update, **base)

    # -- active corpus ---------------------------------------------------------------------

    @property
    def active(self) -> str:
        return self.settings.active_corpus

    def set_active(self, name: str) -> None:
        if not self.exists(name):
            raise CorpusError(f"There is no corpus named {name!r}.", hint=_known_hint(self.names()))
        self.settings.active_corpus = name
        self.settings.save(self.paths)

    # -- changing --------------------------------------------------------------------------

    def source_options(self) -> SourceOptions:
        """How sources read under the current settings (``corpus.max_file_mb``)."""
        return SourceOptions(max_file_bytes=self.settings.corpus.max_file_bytes)

    def add(self, name: str, source: str | Path, format: str | None = None, *,
            on_event: EventCallback | None = None, cancel: CancelToken | None = None,
            workers: int | None = None) -> IngestReport:
        """Ingest ``source`` into corpus ``name`` (created if new; appended to otherwise).

        Adding a source that was interrupted before continues it: stored pids are skipped.
        ``workers``: parsing processes (None: the ``corpus.ingest_workers`` setting; 0 = auto).
        """
        folder = self.corpus_dir(name)  # checks the name before anything else
        path, fmt = _resolve_source(source, format)
        is_new = not (folder / DB_NAME).exists()
        try:
            with CorpusLock(folder).acquire(name), \
                    PassageStore.open(folder / DB_NAME, create=True, corpus=name) as store:
                return _ingest_into(store, name, path, fmt, is_new, self.source_options(),
                                    on_event, cancel,
                                    self.settings.corpus.ingest_workers if workers is None else workers)
        except CorpusError:
            if is_new and _store_is_empty(folder / DB_NAME):
                shutil.rmtree(folder, ignore_errors=True)  # leave no empty corpus behind a failure
            raise

    def remove(self, name: str) -> None:
        """Delete the corpus folder (passages and index). The active corpus moves to another."""
        folder = self.corpus_dir(name)
        if not folder.exists():
            raise CorpusError(f"There is no corpus named {name!r}.", hint=_known_hint(self.names()))
        with CorpusLock(folder).acquire(name):
            # Rename first so a crash halfway through deleting leaves no half corpus under its name.
            trash = Path(tempfile.mkdtemp(prefix=f".{name}.removing-", dir=self.paths.corpora_dir))
            folder.rename(trash / name)
        shutil.rmtree(trash, ignore_errors=True)
        if self.active == name:
            remaining = self.names()
            self.settings.active_corpus = remaining[0] if remaining else "demo"
            self.settings.save(self.paths)

    def rebuild(self, name: str, *, on_event: EventCallback | None = None,
                cancel: CancelToken | None = None) -> IngestReport:
        """Re-read every recorded source into a fresh store, then swap it in atomically.

        Passages keep their integer ids (the vector index's labels); new ones get new ids.
        Until the swap, the old store is untouched, so a failure or kill loses nothing.
        """
        folder = self.corpus_dir(name)
        with CorpusLock(folder).acquire(name):
            with self.open_store(name) as old:
                sources = old.meta_get("sources", [])
                created = old.meta_get("created", timestamp())
            if not sources:
                raise CorpusError(f"Corpus {name!r} has no recorded sources to rebuild from.")
            for s in sources:
                if not Path(s["path"]).exists():
                    raise CorpusError(f"Cannot rebuild {name!r}: its source {s['path']} is gone.",
                                      hint="Restore the file, or remove the corpus and add it again.")
            _clean_stale_rebuilds(folder)
            work = Path(tempfile.mkdtemp(prefix=".rebuild-", dir=folder))
            report = IngestReport()
            try:
                with PassageStore.open(work / DB_NAME, create=True, corpus=name) as fresh, \
                        PassageStore.open(folder / DB_NAME, corpus=name) as old:
                    fresh.meta_set("name", name)
                    fresh.meta_set("created", created)
                    fresh.meta_set("state", INGESTING)
                    for s in sources:
                        part = ingest_source(fresh, Path(s["path"]), s["format"], ids_from=old,
                                             options=self.source_options(), on_event=on_event,
                                             cancel=cancel,
                                             workers=self.settings.corpus.ingest_workers)
                        _record_source(fresh, Path(s["path"]), s["format"], status="done", report=part)
                        report.merge(part)
                    fresh.meta_set("state", READY)
                    fresh.meta_set("rebuilt", timestamp())
                    fresh.checkpoint_and_detach_wal()
                    old.checkpoint_and_detach_wal()  # no stale -wal file may outlive the swap
                (work / DB_NAME).replace(folder / DB_NAME)
            finally:
                shutil.rmtree(work, ignore_errors=True)
        return report


def _ingest_into(store: PassageStore, name: str, path: Path, fmt: str, is_new: bool,
                 options: SourceOptions, on_event: EventCallback | None,
                 cancel: CancelToken | None, workers: int = 0) -> IngestReport:
    if is_new:
        store.meta_set("name", name)
        store.meta_set("created", timestamp())
    before = store.count()
    # Stopped before (killed, cancelled, disk full): a dump may skip what it already stored.
    resume = any((s["path"], s["format"], s["status"]) == (str(path), fmt, INGESTING)
                 for s in store.meta_get("sources", []))
    key = _source_key(path, fmt)
    counts = store.meta_get(ADDED_BY_SOURCE, {})
    if key not in counts:  # a source recorded before counts were kept starts from its record
        counts[key] = next((s.get("added", 0) for s in store.meta_get("sources", [])
                            if (s["path"], s["format"]) == (str(path), fmt)), 0)
        store.meta_set(ADDED_BY_SOURCE, counts)
    _record_source(store, path, fmt, status=INGESTING)
    store.meta_set("state", INGESTING)
    try:
        report = ingest_source(store, path, fmt, resume=resume, options=options,
                               count_as=key, on_event=on_event, cancel=cancel, workers=workers)
    except CorpusError:
        if store.count() == before:  # nothing of this source was stored: forget it
            _forget_source(store, path, fmt)
            if all(s["status"] == "done" for s in store.meta_get("sources", [])):
                store.meta_set("state", READY)
        raise
    total = store.meta_get(ADDED_BY_SOURCE, {}).get(key, report.added)
    _record_source(store, path, fmt, status="done", report=report, added=total)
    if all(s["status"] == "done" for s in store.meta_get("sources", [])):
        store.meta_set("state", READY)
    return report


def _transient(db: Path, exc: BaseException) -> bool:
    """The read failed for a reason outside ``db`` and its header still says SQLite (a header
    that cannot be read right now counts as intact: the same cause is in the way)."""
    if not is_transient_io(exc):
        return False
    try:
        with open(db, "rb") as fh:
            return fh.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return True


def _store_is_empty(db: Path) -> bool:
    try:
        with PassageStore.open(db) as store:
            return store.count() == 0
    except CorpusError:
        return True


def _resolve_source(source: str | Path, fmt: str | None) -> tuple[Path, str]:
    path = Path(source).expanduser()
    if not path.exists():
        raise CorpusError(f"Source {path} does not exist.", hint="Check the path.")
    path = path.resolve()
    if fmt is None:
        fmt = detect_format(path)
    elif fmt not in FORMATS:
        raise CorpusError(f"Unknown corpus format {fmt!r}.", hint=f"Use one of: {', '.join(FORMATS)}.")
    else:
        check_text_source(path, fmt)  # detect_format refused a binary file already
    if path.is_file() and path.stat().st_size == 0:
        raise CorpusError(f"Source {path} is empty.", hint="Pass a file with passages in it.")
    if fmt != "parquet" and (fmt == "folder") != path.is_dir():  # parquet: a file or its shards
        raise CorpusError(f"Format {fmt!r} does not fit {path} "
                          f"({'a folder' if path.is_dir() else 'a file'}).",
                          hint="Use --format folder for folders, a file format (or document) for files.")
    return path, fmt


def _source_key(path: Path, fmt: str) -> str:
    return f"{fmt}:{path}"


def _record_source(store: PassageStore, path: Path, fmt: str, *, status: str,
                   report: IngestReport | None = None, added: int | None = None) -> None:
    """Add or update the meta entry of source (path, fmt), keeping the sources' order;
    ``added`` (what it added over all its runs) stands for the report's share of this run."""
    entry = {"path": str(path), "format": fmt, "status": status, "at": timestamp()}
    if report is not None:
        entry.update(added=report.added if added is None else added, duplicates=report.duplicates,
                     skipped=report.skipped, ignored=report.ignored)
    sources = store.meta_get("sources", [])
    keys = [(s["path"], s["format"]) for s in sources]
    if (str(path), fmt) in keys:
        sources[keys.index((str(path), fmt))] = entry
    else:
        sources.append(entry)
    store.meta_set("sources", sources)


def _forget_source(store: PassageStore, path: Path, fmt: str) -> None:
    store.meta_set("sources", [s for s in store.meta_get("sources", [])
                               if (s["path"], s["format"]) != (str(path), fmt)])
    counts = store.meta_get(ADDED_BY_SOURCE, {})
    if counts.pop(_source_key(path, fmt), None) is not None:
        store.meta_set(ADDED_BY_SOURCE, counts)


def _clean_stale_rebuilds(folder: Path) -> None:
    """Remove work folders of rebuilds that were killed before their swap."""
    for stale in folder.glob(".rebuild-*"):
        shutil.rmtree(stale, ignore_errors=True)


def _index_facts(meta_file: Path) -> tuple[str | None, int | None]:
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None, None
    if not isinstance(meta, dict):
        return None, None
    embedder = meta.get("embedder") or meta.get("model")
    indexed = next((meta[k] for k in ("indexed", "count", "n_items") if isinstance(meta.get(k), int)), None)
    return (str(embedder) if embedder else None), indexed


def _folder_size(folder: Path) -> int:
    total = 0
    for p in folder.rglob("*"):
        try:
            if p.is_file():
                total += p.stat().st_size
        except OSError:
            pass
    return total


def _check_name(name: str) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        raise CorpusError(f"Invalid corpus name {name!r}.",
                          hint="Use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit.")


def _known_hint(names: list[str]) -> str:
    if not names:
        return "No corpora yet: add one with `searchain corpus add NAME SOURCE`."
    return f"Known corpora: {', '.join(names)}."
