"""Shared progress and cancellation primitives for long engine jobs.

Long jobs (ingesting, embedding, downloading, generating) accept an optional ``on_event``
callback and an optional ``CancelToken``. Each subsystem defines its own event dataclasses
next to its code; ``Progress`` is the one they all share so that the CLI can draw one kind
of progress bar and the app one kind of progress dialog.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from .errors import Cancelled

EventCallback = Callable[[Any], None]


@dataclass(frozen=True)
class Progress:
    """``done`` of ``total`` units of ``stage`` are finished (``total`` None when unknown)."""

    stage: str
    done: int
    total: int | None = None
    message: str = ""
    started_at: float = field(default_factory=time.monotonic)

    @property
    def fraction(self) -> float | None:
        if not self.total:
            return None
        return min(1.0, self.done / self.total)


class CancelToken:
    """Thread-safe cancellation flag: the UI thread cancels, the worker checks."""

    def __init__(self) -> None:
        self._event = threading.Event()

    def cancel(self) -> None:
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def raise_if_cancelled(self) -> None:
        if self._event.is_set():
            raise Cancelled()


def emit(on_event: EventCallback | None, event: Any) -> None:
    """Deliver ``event`` if a callback was given (keeps call sites one line)."""
    if on_event is not None:
        on_event(event)


def check(cancel: CancelToken | None) -> None:
    """Raise ``Cancelled`` if ``cancel`` was triggered; no-op for None."""
    if cancel is not None:
        cancel.raise_if_cancelled()
