"""Throttled checkpoints of streaming answers.

The engine reports the partial text on every token; writing each one would cost a transaction per
token. ``CheckpointThrottle`` writes at most once per ``interval`` per message, and when a newer
text is held back it arms a timer that writes it when the interval is over, so a pause in the
token stream (the reader verifying a chain can take seconds) never leaves text unsaved for longer
than ``interval``. A crash therefore loses at most about ``interval`` of tokens.
"""

from __future__ import annotations

import threading
import time
from typing import Callable


class CheckpointThrottle:
    """Decides when to write; ``write(message_id, text)`` does it (under the caller's lock)."""

    def __init__(self, write: Callable[[int, str], None], lock: threading.RLock,
                 interval: float = 0.5):
        self._write = write
        self._lock = lock
        self._interval = interval
        self._last_write: dict[int, float] = {}
        self._pending: dict[int, str] = {}
        self._timers: dict[int, threading.Timer] = {}
        self._deferred_errors: dict[int, BaseException] = {}

    def started(self, message_id: int) -> None:
        """The message was just written (empty): the next write may wait a full interval."""
        self._last_write[message_id] = time.monotonic()

    def offer(self, message_id: int, text: str) -> bool:
        """Record ``text``; write it now if the interval has passed. Returns True if written."""
        with self._lock:
            self._raise_deferred(message_id)
            now = time.monotonic()
            last = self._last_write.get(message_id)
            due = now if last is None else last + self._interval
            if now >= due:
                self._pending.pop(message_id, None)
                self._write(message_id, text)
                self._last_write[message_id] = time.monotonic()
                return True
            self._pending[message_id] = text
            if message_id not in self._timers:
                timer = threading.Timer(due - now, self._flush_one, args=(message_id,))
                timer.daemon = True  # never keeps the app alive; close() flushes anyway
                self._timers[message_id] = timer
                timer.start()
            return False

    def forget(self, message_id: int) -> None:
        """The answer was finished, failed or cancelled: drop what is held back for it."""
        with self._lock:
            self._pending.pop(message_id, None)
            self._last_write.pop(message_id, None)
            self._deferred_errors.pop(message_id, None)
            timer = self._timers.pop(message_id, None)
        if timer is not None:
            timer.cancel()

    def pending_text(self, message_id: int) -> str | None:
        with self._lock:
            return self._pending.get(message_id)

    def flush_all(self) -> None:
        """Write everything held back (on close)."""
        with self._lock:
            timers = list(self._timers.values())
            self._timers.clear()
            for timer in timers:
                timer.cancel()
            pending, self._pending = self._pending, {}
            for message_id, text in pending.items():
                self._write(message_id, text)

    def _flush_one(self, message_id: int) -> None:
        with self._lock:
            if self._timers.pop(message_id, None) is None:
                return  # forgotten or flushed meanwhile
            text = self._pending.pop(message_id, None)
            if text is None:
                return
            try:
                self._write(message_id, text)
                self._last_write[message_id] = time.monotonic()
            except Exception as exc:  # a timer thread has nobody to tell: report it next call
                self._deferred_errors[message_id] = exc

    def _raise_deferred(self, message_id: int) -> None:
        exc = self._deferred_errors.pop(message_id, None)
        if exc is not None:
            raise exc
