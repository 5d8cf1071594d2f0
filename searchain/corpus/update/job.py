"""``update_corpus``: which update a corpus gets, under its ingest lock, recorded in its meta.

- A corpus made from folders (or single documents) re-syncs them (``folders.sync_folders``).
- ``source`` given: a corpus made from one source (a dump, a ZIM, TSV or JSON lines) is brought
  to that newer version of it (``snapshot.update_from_source``), which then becomes its recorded
  source (``corpus rebuild`` re-reads that one).
- Neither: a corpus made from one file re-reads that file, changed in place.

``meta["update"]`` says ``running`` from the start to the end; an update killed or cancelled
leaves it so, and the next ``update_corpus`` (with or without ``source``) continues with the
same source: documents already brought up to date compare unchanged, so nothing is stored or
embedded twice.
"""

from __future__ import annotations

from pathlib import Path

from ...errors import CorpusError
from ...events import CancelToken, EventCallback
from ...units import timestamp
from ..lock import CorpusLock
from ..manager import CorpusManager
from ..sources import FORMATS
from ..sources.detect import detect_format
from ..store import ADDED_BY_SOURCE, DEFAULT_BATCH, PassageStore
from .folders import FOLDER_FORMATS, folder_sources, sync_folders
from .report import UpdateReport
from .snapshot import update_from_source

UPDATE_KEY = "update"  # meta: {status: running|done, from, format, at, report}
RUNNING, DONE = "running", "done"
LISTED_IN_META = 200  # names of changed/added/removed units kept with the last update


def update_corpus(manager: CorpusManager, name: str, source: str | Path | None = None,
                  fmt: str | None = None, *, batch_size: int = DEFAULT_BATCH,
                  on_event: EventCallback | None = None,
                  cancel: CancelToken | None = None, workers: int | None = None) -> UpdateReport:
    """Update corpus ``name`` (see the module docstring); raises CorpusError on bad input
    before anything is written. ``workers``: processes parsing a snapshot that can be split
    (None: the ``corpus.ingest_workers`` setting; 0 = auto)."""
    folder = manager.corpus_dir(name)
    with manager.open_store(name):  # the manager's own error for an unknown name
        pass
    with CorpusLock(folder).acquire(name), manager.open_store(name) as store:
        target = what_to_update(store, source, fmt)
        store.meta_set(UPDATE_KEY, {"status": RUNNING, "from": str(target[0]) if target else "",
                                    "format": target[1] if target else "folder", "at": timestamp()})
        options = manager.source_options()
        if target is None:
            report = sync_folders(store, folder_sources(store), options=options,
                                  batch_size=batch_size, on_event=on_event, cancel=cancel)
        else:
            report = update_from_source(store, target[0], target[1], options=options,
                                        batch_size=batch_size, on_event=on_event, cancel=cancel,
                                        workers=manager.settings.corpus.ingest_workers
                                        if workers is None else workers)
            _replace_source(store, target[0], target[1])
        report.passages_kept = store.count() - report.passages_added  # their ids and vectors stay
        store.meta_set(UPDATE_KEY, {"status": DONE, "from": report.source, "at": timestamp(),
                                    "report": _kept(report)})
    return report


def what_to_update(store: PassageStore, source: str | Path | None,
                   fmt: str | None) -> tuple[Path, str] | None:
    """``(path, format)`` of the snapshot to update from, or None for a folder re-sync."""
    sources = store.meta_get("sources", [])
    pending = store.meta_get(UPDATE_KEY, {})
    if source is None and pending.get("status") == RUNNING and pending.get("from"):
        source, fmt = pending["from"], pending.get("format")  # a stopped update continues
    folders = [s for s in sources if s.get("format") in FOLDER_FORMATS]
    if source is None:
        if folders:
            return None
        if len(sources) != 1:
            raise CorpusError(f"Corpus {store.corpus!r} has {len(sources)} recorded sources; an "
                              "update without --from re-reads one source or the corpus's folders.",
                              hint="Name the newer version: searchain corpus update NAME --from FILE")
        return _checked(Path(sources[0]["path"]), sources[0]["format"], store.corpus)
    if folders:
        raise CorpusError(f"Corpus {store.corpus!r} is made from folders; they are updated from "
                          "where they are, not from another source.",
                          hint=f"Run `searchain corpus update {store.corpus}` without --from, or add "
                               "the new source with `searchain corpus add`.")
    if len(sources) != 1:
        raise CorpusError(f"Corpus {store.corpus!r} has {len(sources)} recorded sources; --from "
                          "replaces the one source of a corpus made from one.",
                          hint="Add the newer source as a corpus of its own.")
    path = Path(source).expanduser()
    if not path.exists():
        raise CorpusError(f"Source {path} does not exist.", hint="Check the path.")
    path = path.resolve()
    fmt = fmt or detect_format(path)
    if fmt not in FORMATS:
        raise CorpusError(f"Unknown corpus format {fmt!r}.", hint=f"Use one of: {', '.join(FORMATS)}.")
    had = sources[0]["format"]
    if fmt != had:
        raise CorpusError(f"Corpus {store.corpus!r} was read from a {had} source and {path.name} is "
                          f"{fmt}: their article ids differ, so every article would count as new.",
                          hint="Update from a newer snapshot of the same kind, or add this one as a "
                               "corpus of its own.")
    return _checked(path, fmt, store.corpus)


def _checked(path: Path, fmt: str, corpus: str) -> tuple[Path, str]:
    if not path.exists():
        raise CorpusError(f"Cannot update corpus {corpus!r}: its source {path} is gone.",
                          hint="Restore the file, or name the newer one with --from FILE.")
    if path.is_file() and path.stat().st_size == 0:
        raise CorpusError(f"Source {path} is empty; the corpus is unchanged.",
                          hint="Check the download: a snapshot holds the articles.")
    return path, fmt


def _replace_source(store: PassageStore, path: Path, fmt: str) -> None:
    """Record ``path`` as the corpus's one source (a later rebuild re-reads it)."""
    sources = store.meta_get("sources", [])
    old = sources[0] if sources else {}
    total = store.count()
    sources = [{**old, "path": str(path), "format": fmt, "status": "done", "added": total,
                "at": timestamp()}]
    store.meta_set("sources", sources)
    store.meta_set(ADDED_BY_SOURCE, {f"{fmt}:{path}": total})


def _kept(report: UpdateReport) -> dict:
    data = report.to_dict()
    for key in ("changed_names", "added_names", "removed_names", "problems"):
        data[key] = data[key][:LISTED_IN_META]
    return data


def last_update(store: PassageStore) -> dict:
    """The corpus's last update as recorded (``{}`` when it never had one)."""
    return store.meta_get(UPDATE_KEY, {})
