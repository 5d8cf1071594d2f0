"""When something goes wrong: the app's log file, errors nobody caught, and Help > Check set-up.

- ``start_logging`` opens ``<cache>/logs/desktop.log`` (rotating) at start-up; job failures
  (``workers``) and uncaught exceptions end up there with their tracebacks, which the message
  bar never shows.
- ``ErrorHooks`` catches exceptions that escape a slot (PySide6 hands them to ``sys.excepthook``)
  or a Python thread: logged, then shown in the message bar with "Open log folder", and the app
  carries on instead of printing to a console the user never sees.
- ``SetupCheck`` runs ``searchain.doctor.run_checks`` on a worker and shows it in ``DoctorDialog``.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Qt, QUrl, Signal, Slot
from PySide6.QtGui import QDesktopServices

from searchain.config import AppPaths

from .views.message_bar import UNEXPECTED_ACTIONS

log = logging.getLogger("desktop")
SHOW_INTERVAL_S = 1.0  # a burst of failures is logged in full but shown at most once a second


def start_logging(paths: AppPaths) -> Path | None:
    """Send the app's log to its file; returns the file (None when it cannot be written)."""
    import platform

    from searchain import __version__
    from searchain.logs import start_file_log

    path = start_file_log(paths, "desktop")
    log.info("SearChain Desktop %s starting; Python %s on %s; data in %s", __version__,
             platform.python_version(), platform.platform(), paths.data_dir)
    return path


def open_log_folder(window) -> str:
    """Open the log folder in the desktop's file manager; returns the URL handed over."""
    folder = window.ctx.paths.log_dir
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        window.message_bar.show_error(exc, "The log folder cannot be created")
        return ""
    url = QUrl.fromLocalFile(str(folder))
    if not QDesktopServices.openUrl(url):
        window.message_bar.show_message(f"No file manager could open {folder}.", kind="error")
    return url.toString()


class ErrorHooks(QObject):
    """Installs ``sys.excepthook`` and ``threading.excepthook``; ``uninstall`` puts the old ones back."""

    _caught = Signal(object)

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self.shown: list[BaseException] = []
        self._last_shown = 0.0
        self._previous: tuple[Any, Any] | None = None
        # Queued: a worker thread's exception is shown by the UI thread.
        self._caught.connect(self._show, Qt.ConnectionType.QueuedConnection)

    def install(self) -> "ErrorHooks":
        if self._previous is None:
            self._previous = (sys.excepthook, threading.excepthook)
            sys.excepthook = self._on_exception
            threading.excepthook = self._on_thread_exception
        return self

    def uninstall(self) -> None:
        if self._previous is not None:
            if sys.excepthook == self._on_exception:
                sys.excepthook = self._previous[0]
            if threading.excepthook == self._on_thread_exception:
                threading.excepthook = self._previous[1]
            self._previous = None

    def _on_exception(self, exc_type, exc, tb) -> None:
        if issubclass(exc_type, (KeyboardInterrupt, SystemExit)) and self._previous:
            self._previous[0](exc_type, exc, tb)
            return
        log.error("Uncaught %s", exc_type.__name__, exc_info=(exc_type, exc, tb))
        self._caught.emit(exc)

    def _on_thread_exception(self, args) -> None:
        if args.exc_type is SystemExit:
            return
        log.error("Uncaught %s in thread %s", args.exc_type.__name__,
                  getattr(args.thread, "name", "?"), exc_info=(args.exc_type, args.exc_value, args.exc_traceback))
        self._caught.emit(args.exc_value)

    @Slot(object)
    def _show(self, exc: BaseException) -> None:
        now = time.monotonic()
        if now - self._last_shown < SHOW_INTERVAL_S:
            return
        self._last_shown = now
        self.shown.append(exc)
        self.window.message_bar.show_message(
            f"Unexpected error: {type(exc).__name__}: {exc}",
            "The app is still usable. The full details are in the log (Help > Open log folder); "
            "Help > Check set-up looks for a cause and makes a report to send.",
            kind="error", actions=list(UNEXPECTED_ACTIONS))


class SetupCheck(QObject):
    """Help > Check set-up: the dialog, and the checks run on a worker each time it asks."""

    def __init__(self, window):
        super().__init__(window)
        from .views.doctor_dialog import DoctorDialog

        self.window = window
        self.dialog = DoctorDialog(window)
        self.dialog.recheck_requested.connect(self.run)
        self.dialog.check_data_requested.connect(lambda: self.run(data=True))
        self.dialog.open_logs_requested.connect(lambda: open_log_folder(window))
        self.dialog.fix_requested.connect(self.open_fix)
        self.job = None

    def open_fix(self, area: str) -> None:
        """The place in the app where a finding of ``area`` is fixed."""
        window = self.window
        {"model": window.open_model_catalogue, "corpus": window.open_corpus_manager}.get(
            area, window.open_settings)()

    def run(self, data: bool = False):
        """Run the checks on a worker; ``data``: also *Check data* (every database and index read
        through, ``searchain doctor --check-data``)."""
        ctx = self.window.ctx
        self.dialog.show_running()

        def work(_on_event, _cancel):
            from searchain.doctor import check_data, report_markdown, run_checks, system_info
            from searchain.logs import log_file, recent_lines

            checks = run_checks(ctx.paths, ctx.settings) + (check_data(ctx.paths) if data else [])
            report = report_markdown(checks, system_info(ctx.paths),
                                     recent_lines(log_file(ctx.paths, "desktop"), 40))
            return checks, report

        def failed(exc) -> None:
            from .render import describe_error

            self.dialog.show_failure(describe_error(exc)[0])

        self.job = self.window.runner.start("setup-check", work, on_done=lambda r: self.dialog.show_checks(*r),
                                            on_error=failed)
        return self.job
