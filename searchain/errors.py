"""Error types the engine raises on purpose.

Every error carries a message a user can act on: what went wrong, with which file or value,
and what to do about it. The CLI prints ``str(error)``; the app shows it in a dialog.
"""

import errno


class SearchainError(Exception):
    """Base class for expected, user-facing failures (bad input, missing files, ...)."""

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  hint: {self.hint}" if self.hint else self.message


class ConfigError(SearchainError):
    """Settings file unreadable or holding a value of the wrong type."""


class CorpusError(SearchainError):
    """A corpus source is missing, empty, unreadable or malformed; or a corpus name is unknown."""


class IndexError_(SearchainError):
    """An index is missing, damaged, or was built with another embedding model."""


class ModelError(SearchainError):
    """An LLM or reader model is missing, corrupt, or cannot be loaded."""


class StoreError(SearchainError):
    """The conversation database is locked, damaged, or cannot be written."""


class Cancelled(Exception):
    """Raised inside a long job when its CancelToken was triggered. Not an error for the user."""


def is_disk_full(exc: BaseException) -> bool:
    """True for the OS's ENOSPC and SQLite's SQLITE_FULL ("database or disk is full")."""
    if getattr(exc, "errno", None) == errno.ENOSPC:
        return True
    text = str(exc).lower()
    return "disk is full" in text or "no space left" in text


# Failures outside the file: the disk is full or failing, a permission or a lock is in the way,
# memory or file handles ran out. The file is most likely intact; trying again later works.
_TRANSIENT_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EAGAIN, errno.EINTR,
                               errno.EACCES, errno.EPERM, errno.EBUSY, errno.EROFS, errno.ENOMEM,
                               errno.EMFILE, errno.ENFILE, errno.ETIMEDOUT})
_TRANSIENT_SQLITE = ("SQLITE_FULL", "SQLITE_IOERR", "SQLITE_CANTOPEN", "SQLITE_BUSY", "SQLITE_LOCKED",
                     "SQLITE_PERM", "SQLITE_READONLY", "SQLITE_NOMEM", "SQLITE_PROTOCOL")
_DAMAGE_SQLITE = ("SQLITE_CORRUPT", "SQLITE_NOTADB")
_TRANSIENT_TEXT = ("disk i/o error", "database or disk is full", "unable to open database file",
                   "database is locked", "database table is locked", "readonly database",
                   "no space left", "out of memory")


# What to do about one: never "remove it", which would delete a healthy corpus or index.
TRANSIENT_IO_HINT = ("The file is most likely intact: free some disk space, check the folder's "
                     "permissions or close the program holding it, then try again.")


def is_transient_io(exc: BaseException | None) -> bool:
    """True when a read or write failed for a reason outside the file (full disk, I/O error,
    permission, lock), looking through the chain of causes (a ``CorpusError`` raised from a
    ``sqlite3.OperationalError``). Such a file must be reported as unreadable for now, never as
    damaged: advice to remove it would delete a healthy corpus. SQLite's own verdict
    ("file is not a database", "malformed") is damage."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _TRANSIENT_ERRNOS:
            return True
        name = getattr(exc, "sqlite_errorname", None) or ""
        if name.startswith(_DAMAGE_SQLITE):
            return False
        if name.startswith(_TRANSIENT_SQLITE) or is_disk_full(exc):
            return True
        text = str(exc).lower()
        if type(exc).__module__ == "sqlite3" and any(t in text for t in _TRANSIENT_TEXT):
            return True
        exc = exc.__cause__ or exc.__context__
    return False
