"""Folder corpora kept in sync while the app runs (setting ``corpus.sync_folders``, off by default).

When on, every folder corpus is updated once at start (``Workspace.update_corpus``: only files
new, changed or gone are read and embedded), and a file watcher (watchdog) then notices changes
in their folders: a little after the last change (``DEBOUNCE_MS``, so a copy of many files is one
update) the corpus is updated again. Updates run one at a time on the job runner; each ending
says what changed through ``synced`` (the main window's status bar shows it) or why it could not
run through ``failed`` (a corpus busy with another job is simply tried at the next change).
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal

from .context import AppContext
from .workers import Job, JobRunner

log = logging.getLogger("searchain.desktop")
DEBOUNCE_MS = 5000
FOLDER_FORMATS = ("folder", "document")


class FolderSync(QObject):
    synced = Signal(str, object)  # corpus, its UpdateReport
    failed = Signal(str, str)  # corpus, why
    _changed = Signal(str)  # emitted on watchdog's thread; delivered on this object's thread

    def __init__(self, ctx: AppContext, runner: JobRunner, parent: QObject | None = None, *,
                 delay_ms: int = DEBOUNCE_MS):
        super().__init__(parent)
        self.ctx, self.runner, self.delay_ms = ctx, runner, delay_ms
        self.watched: dict[str, list[Path]] = {}
        self.watching = False  # whether the file watcher runs (watchdog importable and started)
        self._queue: list[str] = []
        self._job: Job | None = None
        self._timers: dict[str, QTimer] = {}
        self._observer = None
        self._changed.connect(self._schedule)

    def start(self) -> bool:
        """Begin (when the setting is on): find the folder corpora on the worker, then update each
        and watch their folders. Returns whether it began."""
        if not self.ctx.settings.corpus.sync_folders:
            return False
        self.runner.start("folder-sync-list", lambda _ev, _cancel: folder_corpora(self.ctx),
                          on_done=self._begin, on_error=lambda exc: self.failed.emit("", str(exc)))
        return True

    def stop(self) -> None:
        for timer in self._timers.values():
            timer.stop()
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=5)
            self._observer = None
        self.watching = False
        self._queue.clear()
        if self._job is not None:
            self._job.cancel()

    # -- inside ------------------------------------------------------------------------------
    def _begin(self, corpora: dict[str, list[Path]]) -> None:
        self.watched = corpora
        for name in corpora:
            self._enqueue(name)
        self._watch(corpora)

    def _watch(self, corpora: dict[str, list[Path]]) -> None:
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:
            log.warning("folder corpora are updated at start only: watchdog is not installed")
            return
        sync = self

        class Handler(FileSystemEventHandler):
            def __init__(self, name: str, only: Path | None):
                self.name, self.only = name, only

            def on_any_event(self, event):
                if event.event_type in ("opened", "closed_no_write") or \
                        (event.is_directory and event.event_type == "modified"):
                    return
                paths = [Path(p) for p in (event.src_path, getattr(event, "dest_path", "")) if p]
                if self.only is not None and self.only not in paths:
                    return
                if all(p.name.startswith(".") for p in paths):
                    return  # hidden files (editors' swap files) are not read by a sync either
                sync._changed.emit(self.name)

        observer = Observer()
        for name, paths in corpora.items():
            for path in paths:
                if path.is_dir():
                    observer.schedule(Handler(name, None), str(path), recursive=True)
                elif path.parent.is_dir():
                    observer.schedule(Handler(name, path), str(path.parent), recursive=False)
        observer.daemon = True
        observer.start()
        self._observer, self.watching = observer, True

    def _schedule(self, name: str) -> None:
        timer = self._timers.get(name)
        if timer is None:
            timer = self._timers[name] = QTimer(self)
            timer.setSingleShot(True)
            timer.timeout.connect(lambda name=name: self._enqueue(name))
        timer.start(self.delay_ms)  # restarted by each change: one update after the last

    def _enqueue(self, name: str) -> None:
        if name not in self._queue:
            self._queue.append(name)
        self._next()

    def _next(self) -> None:
        if self._job is not None or not self._queue:
            return
        name = self._queue.pop(0)
        ctx = self.ctx

        def work(on_event, cancel):
            return ctx.workspace().update_corpus(name, on_event=on_event, cancel=cancel)

        self._job = self.runner.start("folder-sync", work,
                                      on_done=lambda report: self._ended(name, report, None),
                                      on_error=lambda exc: self._ended(name, None, exc),
                                      on_cancelled=lambda: self._ended(name, None, None))

    def _ended(self, name: str, report, exc: BaseException | None) -> None:
        self._job = None
        if report is not None:
            self.synced.emit(name, report)
        elif exc is not None:
            self.failed.emit(name, getattr(exc, "message", str(exc)))
        self._next()


def folder_corpora(ctx: AppContext) -> dict[str, list[Path]]:
    """``{corpus: [its folders and single documents]}`` for the corpora made from folders."""
    out = {}
    for info in ctx.workspace().corpora.list():
        paths = [Path(s["path"]) for s in info.source_details if s.get("format") in FOLDER_FORMATS]
        if paths:
            out[info.name] = paths
    return out


def sync_message(name: str, report) -> str:
    """The status bar's line after a sync ("" when nothing changed)."""
    if not (report.changed or report.added or report.removed):
        return ""
    return (f"'{name}' updated from its folders: {report.changed:,} changed, {report.added:,} added, "
            f"{report.removed:,} removed")
