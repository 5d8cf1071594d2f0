"""A small rotating log file per program, so a problem can be looked at after the fact.

The desktop app has no console: without a file, a traceback from an unexpected error is lost.
``start_file_log`` is called once by a program's entry point (never by engine code) and sends
the ``searchain`` and ``desktop`` loggers to ``<cache>/logs/<program>.log``, rotated at 1 MB with
three old files kept, so the log can never fill a disk.

Engine modules log through ``logging.getLogger(__name__)`` as usual; without a handler (tests,
library use) those records go nowhere.
"""

from __future__ import annotations

import logging
import logging.handlers
from pathlib import Path

from .config import AppPaths

LOGGERS = ("searchain", "desktop")
MAX_BYTES = 1_000_000
BACKUPS = 3
FORMAT = "%(asctime)s %(levelname)-7s %(threadName)s %(name)s: %(message)s"


def log_file(paths: AppPaths, program: str) -> Path:
    """Where ``program``'s log is written (it may not exist yet)."""
    return paths.log_dir / f"{program}.log"


def start_file_log(paths: AppPaths, program: str, level: int = logging.INFO) -> Path | None:
    """Send our loggers' records at ``level`` and above to ``program``'s log file.

    Calling it again for the same file adds nothing. Returns the file, or None when the log
    folder cannot be written (a read-only home must not stop the app from starting).
    """
    path = log_file(paths, program)
    for name in LOGGERS:
        logger = logging.getLogger(name)
        logger.setLevel(min(level, logger.level or level))
        if any(_writes_to(handler, path) for handler in logger.handlers):
            continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            handler = logging.handlers.RotatingFileHandler(
                path, maxBytes=MAX_BYTES, backupCount=BACKUPS, encoding="utf-8", delay=True)
        except OSError:
            return None
        handler.setFormatter(logging.Formatter(FORMAT))
        handler.setLevel(level)
        logger.addHandler(handler)
    return path


def stop_file_log(paths: AppPaths, program: str) -> None:
    """Remove and close the handlers ``start_file_log`` added for ``program`` (tests, shutdown)."""
    path = log_file(paths, program)
    for name in LOGGERS:
        logger = logging.getLogger(name)
        for handler in [h for h in logger.handlers if _writes_to(h, path)]:
            logger.removeHandler(handler)
            handler.close()


def recent_lines(path: Path, limit: int = 200) -> list[str]:
    """The last ``limit`` lines of a log file ([] when there is none), for a problem report."""
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            size = f.tell()
            f.seek(max(0, size - 256 * limit))
            tail = f.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    lines = tail.splitlines()
    if size > 256 * limit and lines:
        lines = lines[1:]  # the first one is probably cut
    return lines[-limit:]


def _writes_to(handler: logging.Handler, path: Path) -> bool:
    return Path(getattr(handler, "baseFilename", "")) == path.resolve()
