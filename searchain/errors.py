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
