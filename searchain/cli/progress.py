"""A progress bar on stderr for ``searchain.events.Progress`` events (reusable by any command).

Usage::

    with ProgressPrinter() as show:
        build(..., on_event=show)

Other event types are ignored. On a terminal the bar redraws in place (at most every
``min_interval`` seconds); otherwise it prints a line per stage and every ``log_interval``.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Callable, TextIO

from ..events import Progress
from ..units import clock, count

BAR_WIDTH = 24


class ProgressPrinter:
    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None,
                 min_interval: float = 0.1, log_interval: float = 5.0,
                 clock: Callable[[], float] = time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.min_interval = min_interval if self.tty else log_interval
        self.clock = clock
        self._stage: str | None = None
        self._last_draw = float("-inf")
        self._open_line = False
        self._last_key: tuple | None = None

    def __call__(self, event: Any) -> None:
        if not isinstance(event, Progress):
            return
        key = (event.stage, event.done, event.total, event.message)
        if key == self._last_key:
            return  # the same state again (e.g. a job's closing event): nothing new to show
        now = self.clock()
        new_stage = event.stage != self._stage
        finished = event.total is not None and event.done >= event.total
        if not (new_stage or finished or now - self._last_draw >= self.min_interval):
            return
        if new_stage and self._open_line:
            self._newline()
        self._stage = event.stage
        self._last_draw = now
        self._last_key = key
        line = render(event, now)
        if self.tty:
            self.stream.write("\r" + line + "\x1b[K")
            self._open_line = True
            if finished:
                self._newline()
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self._open_line:
            self._newline()

    def _newline(self) -> None:
        self.stream.write("\n")
        self.stream.flush()
        self._open_line = False

    def __enter__(self) -> "ProgressPrinter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def render(event: Progress, now: float) -> str:
    """One line: stage, bar and percentage (when the total is known), counts, rate, ETA, message."""
    elapsed = max(now - event.started_at, 1e-9)
    rate = event.done / elapsed
    parts = [f"{event.stage:<10}"]
    fraction = event.fraction
    if fraction is not None:
        filled = int(round(fraction * BAR_WIDTH))
        parts.append(f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}] {fraction * 100:5.1f}%")
        parts.append(f"{count(event.done)}/{count(event.total)}")
    else:
        parts.append(count(event.done))
    if event.done and elapsed > 0.05:
        parts.append(f"{count(rate)}/s")
        if fraction is not None and fraction < 1 and rate > 0:
            parts.append(f"ETA {clock((event.total - event.done) / rate)}")
    if event.message:
        parts.append(event.message)
    return "  ".join(parts)


class cancel_on_interrupt:
    """Context manager: the first Ctrl+C cancels the returned CancelToken (the job stops
    cleanly at its next check), a second one interrupts at once. Main thread only."""

    def __init__(self, stream: TextIO | None = None):
        from ..events import CancelToken

        self.token = CancelToken()
        self.stream = stream if stream is not None else sys.stderr
        self._previous: Any = None

    def __enter__(self):
        import signal
        import threading

        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._handle)
        return self.token

    def __exit__(self, *exc) -> None:
        import signal

        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def _handle(self, signum, frame) -> None:
        if self.token.cancelled:
            raise KeyboardInterrupt
        self.token.cancel()
        self.stream.write("\nstopping after the current batch (Ctrl+C again to abort)...\n")
        self.stream.flush()
