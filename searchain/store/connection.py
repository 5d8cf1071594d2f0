"""Opening the conversation database safely, and turning SQLite failures into ``StoreError``s.

Opening checks the file before trusting it (``PRAGMA quick_check``); a damaged file is copied
aside so nothing is lost, and the user is told where the copy is and how to start fresh. Each
damaged state is copied once: opening the same damaged file again names the copy already kept. Writes
run in ``BEGIN IMMEDIATE`` transactions with a busy timeout and a bounded retry, so a second
program holding the database makes us wait a little, then fail with a clear message.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Callable, Iterator, TypeVar

from ..errors import StoreError
from ..files import file_sha256

T = TypeVar("T")

# SQLite primary result codes (the low byte of sqlite_errorcode).
_SQLITE_BUSY, _SQLITE_LOCKED = 5, 6
_SQLITE_READONLY, _SQLITE_IOERR, _SQLITE_CORRUPT = 8, 10, 11
_SQLITE_FULL, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 13, 14, 26


def _code(exc: sqlite3.Error) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None:
        # Older builds give no code: fall back on SQLite's fixed English messages.
        text = str(exc).lower()
        for fragment, value in (("locked", _SQLITE_BUSY), ("disk is full", _SQLITE_FULL),
                                ("not a database", _SQLITE_NOTADB),
                                ("malformed", _SQLITE_CORRUPT), ("readonly", _SQLITE_READONLY),
                                ("unable to open", _SQLITE_CANTOPEN), ("disk i/o", _SQLITE_IOERR)):
            if fragment in text:
                return value
        return None
    return code & 0xFF


def is_busy(exc: sqlite3.Error) -> bool:
    return _code(exc) in (_SQLITE_BUSY, _SQLITE_LOCKED)


def is_damage(exc: sqlite3.Error) -> bool:
    return _code(exc) in (_SQLITE_CORRUPT, _SQLITE_NOTADB)


def translate(exc: sqlite3.Error, path: Path) -> StoreError:
    """A ``StoreError`` a user can act on, for any SQLite failure while using ``path``."""
    code = _code(exc)
    if code in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return StoreError(
            f"The conversation database is locked by another program ({path}).",
            hint="Close other SearChain windows or commands using it, then try again.",
        )
    if code == _SQLITE_FULL:
        return StoreError(
            f"The disk holding the conversation database is full ({path}); the last change was "
            "not saved, everything saved before it is intact.",
            hint="Free some disk space, then try again.",
        )
    if code in (_SQLITE_CORRUPT, _SQLITE_NOTADB):
        return StoreError(
            f"The conversation database {path} is damaged ({exc}).",
            hint="Close SearChain and open it again: opening checks the file, keeps a copy and "
            "explains how to start fresh.",
        )
    if code in (_SQLITE_READONLY, _SQLITE_CANTOPEN, _SQLITE_IOERR):
        return StoreError(
            f"Cannot write the conversation database {path}: {exc}.",
            hint="Check that the folder exists, is writable and that the disk is attached.",
        )
    return StoreError(f"Conversation database error in {path}: {exc}.")


def connect(path: Path, busy_timeout: float) -> sqlite3.Connection:
    """An autocommit connection usable from any thread (the store serialises access itself)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return sqlite3.connect(str(path), timeout=busy_timeout, isolation_level=None,
                               check_same_thread=False)
    except OSError as exc:
        raise StoreError(f"Cannot create the folder for the conversation database {path}: {exc}",
                         hint="Choose a writable location (--home or SEARCHAIN_HOME).") from exc
    except sqlite3.Error as exc:
        raise translate(exc, path) from exc


def check_integrity(conn: sqlite3.Connection, path: Path) -> None:
    """Raise ``StoreError`` (after keeping a copy) if ``path`` is not a sound SQLite database."""
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        if not is_damage(exc):
            raise translate(exc, path) from exc
        problem = str(exc)
    else:
        if rows == [("ok",)]:
            return
        problem = "; ".join(str(r[0]) for r in rows[:3])
    conn.close()
    backup = keep_damaged_copy(path)
    raise StoreError(
        f"The conversation database {path} is damaged ({problem}). A copy of it was kept at "
        f"{backup}.",
        hint=f"To start with an empty history, delete {path} (or run `searchain chats reset`); "
        f"the copy stays. `sqlite3 {backup} .recover` may rescue part of the old chats.",
    )


def keep_damaged_copy(path: Path) -> Path:
    """Copy ``path`` (and its WAL) to ``<name>.damaged-<timestamp>``; returns the copy's path.

    A copy of this very state (same bytes, same WAL) is not made twice: every command opens the
    database, and each used to add a full copy of the same damaged file."""
    try:
        kept = _same_copy(path)
    except OSError:
        kept = None  # cannot compare: copying again loses nothing
    if kept is not None:
        return kept
    backup = _free_sibling(path, "damaged")
    try:
        shutil.copy2(path, backup)
        wal = path.with_name(path.name + "-wal")
        if wal.exists():
            shutil.copy2(wal, backup.with_name(backup.name + "-wal"))
    except OSError as exc:
        raise StoreError(
            f"The conversation database {path} is damaged, and keeping a copy of it failed: {exc}",
            hint=f"Copy {path} somewhere safe by hand before deleting it.",
        ) from exc
    return backup


def _same_copy(path: Path) -> Path | None:
    """An earlier ``.damaged-*`` copy holding exactly ``path`` and its WAL, or None."""
    wal = path.with_name(path.name + "-wal")
    size, digest = path.stat().st_size, None
    for copy in sorted(path.parent.glob(_glob_escape(path.name) + ".damaged-*")):
        if copy.name.endswith("-wal") or copy.stat().st_size != size:
            continue
        digest = digest or file_sha256(path)
        copy_wal = copy.with_name(copy.name + "-wal")
        if file_sha256(copy) == digest and wal.exists() == copy_wal.exists() and (
                not wal.exists() or file_sha256(wal) == file_sha256(copy_wal)):
            return copy
    return None


def _glob_escape(name: str) -> str:
    """``name`` with glob's special characters taken literally."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _free_sibling(path: Path, tag: str) -> Path:
    """``<name>.<tag>-<timestamp>`` beside ``path``, numbered if that name is already taken."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    candidate = path.with_name(f"{path.name}.{tag}-{stamp}")
    n = 1
    while candidate.exists():
        n += 1
        candidate = path.with_name(f"{path.name}.{tag}-{stamp}-{n}")
    return candidate


def with_retry(fn: Callable[[], T], path: Path, retries: int, pause: float = 0.05) -> T:
    """Run ``fn``; on a busy database retry ``retries`` times, then raise the locked error.

    SQLite's busy timeout already waits inside each attempt; the retry covers the cases it does
    not (a deadlock it resolves by failing fast, a writer that keeps coming back).
    """
    for attempt in range(retries + 1):
        try:
            return fn()
        except sqlite3.Error as exc:
            if is_busy(exc) and attempt < retries:
                time.sleep(pause * (attempt + 1))
                continue
            raise translate(exc, path) from exc
    raise AssertionError("unreachable")


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` ... ``COMMIT``; any failure rolls back so nothing half-written stays."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass  # SQLite may already have rolled back (e.g. on SQLITE_FULL)
        raise


def set_aside(path: Path) -> Path:
    """Rename ``path`` (with its -wal/-shm files) to ``<name>.old-<timestamp>`` to start fresh.

    Nothing is deleted: the old file stays next to the new one for the user to recover from.
    Returns the new name of the old database.
    """
    target = _free_sibling(path, "old")
    try:
        for suffix in ("-wal", "-shm"):
            side = path.with_name(path.name + suffix)
            if side.exists():
                side.replace(target.with_name(target.name + suffix))
        path.replace(target)
    except OSError as exc:
        raise StoreError(f"Cannot move the conversation database {path} aside: {exc}",
                         hint="Close every SearChain window and command, then try again.") from exc
    return target
