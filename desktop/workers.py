"""Run engine calls off the UI thread and bring their events back to it.

``JobRunner.start(fn, ...)`` runs ``fn(on_event, cancel)`` on a ``QThreadPool`` thread. Whatever
``fn`` passes to ``on_event``, returns, or raises is delivered to the callbacks given to ``start``
on the UI thread (queued signals), so views never touch widgets from a worker.

A ``Job`` lives on the UI thread; the runnable only emits its signals. Jobs are children of the
runner, so the C++ object outlives any Python reference a finishing worker thread still holds.
"""

from __future__ import annotations

import logging
import threading
import time
import traceback
from typing import Any, Callable

from PySide6.QtCore import QObject, QRunnable, Qt, QThreadPool, Signal, Slot

from searchain.errors import Cancelled, SearchainError
from searchain.events import CancelToken

JobFn = Callable[[Callable[[Any], None], CancelToken], Any]
log = logging.getLogger("desktop.jobs")


class Job(QObject):
    """One background call. Its signals and callbacks run on the UI thread.

    Outcomes travel as a 2-tuple inside one ``object`` signal: PySide6 (on Python 3.11) mis-counts
    references when a bare ``None`` crosses a queued ``object`` signal, which crashes later.
    """

    event = Signal(object)
    ended = Signal()  # after the outcome callback ran (finished, failed or cancelled)

    # Internal: emitted from the worker thread, queued to this object's (UI) thread.
    _event_from_worker = Signal(object)
    _outcome_from_worker = Signal(object)

    def __init__(self, name: str, parent: QObject | None = None):
        super().__init__(parent)
        self.name = name
        self.cancel_token = CancelToken()
        self.worker_thread_id: int | None = None
        self.running = True
        self.outcome = ""  # finished | failed | cancelled
        self.result: Any = None
        self.error: BaseException | None = None
        self.on_done: Callable[[Any], None] | None = None
        self.on_error: Callable[[BaseException], None] | None = None
        self.on_cancelled: Callable[[], None] | None = None
        self._event_from_worker.connect(self._deliver_event, Qt.ConnectionType.QueuedConnection)
        self._outcome_from_worker.connect(self._deliver_outcome, Qt.ConnectionType.QueuedConnection)

    def cancel(self) -> None:
        self.cancel_token.cancel()

    @Slot(object)
    def _deliver_event(self, event: Any) -> None:
        if self.running:
            self.event.emit(event)

    @Slot(object)
    def _deliver_outcome(self, outcome: tuple[str, Any]) -> None:
        kind, value = outcome
        self.running = False
        self.outcome = kind
        try:
            if kind == "finished":
                self.result = value[0]
                if self.on_done:
                    self.on_done(self.result)
            elif kind == "cancelled":
                if self.on_cancelled:
                    self.on_cancelled()
            else:
                self.error = value
                if self.on_error:
                    self.on_error(value)
        finally:
            self.ended.emit()


class _Runnable(QRunnable):
    def __init__(self, job: Job, fn: JobFn):
        super().__init__()
        self.setAutoDelete(True)
        self._job = job
        self._fn = fn

    def run(self) -> None:  # worker thread
        job = self._job
        job.worker_thread_id = threading.get_ident()
        started = time.perf_counter()
        try:
            result = self._fn(job._event_from_worker.emit, job.cancel_token)
        except Cancelled:
            log.info("job %s cancelled after %.1f s", job.name, time.perf_counter() - started)
            job._outcome_from_worker.emit(("cancelled", ()))
        except SearchainError as exc:
            # An explained failure (bad input, missing model): the message is the whole story.
            log.warning("job %s failed: %s%s", job.name, exc.message, f" ({exc.hint})" if exc.hint else "")
            job._outcome_from_worker.emit(("failed", exc))
        except BaseException as exc:  # noqa: BLE001 - shown to the user, never swallowed
            exc.formatted_traceback = traceback.format_exc()  # type: ignore[attr-defined]
            log.error("job %s failed unexpectedly", job.name, exc_info=exc)
            job._outcome_from_worker.emit(("failed", exc))
        else:
            seconds = time.perf_counter() - started
            if job.cancel_token.cancelled:
                log.info("job %s cancelled after %.1f s", job.name, seconds)
                job._outcome_from_worker.emit(("cancelled", ()))
            else:
                log.info("job %s finished in %.1f s", job.name, seconds)
                job._outcome_from_worker.emit(("finished", (result,)))


class JobRunner(QObject):
    """Starts jobs on a private thread pool and keeps them alive until they end."""

    def __init__(self, parent: QObject | None = None, max_threads: int = 4):
        super().__init__(parent)
        self._pool = QThreadPool(self)
        self._pool.setMaxThreadCount(max_threads)
        self._jobs: set[Job] = set()

    def start(
        self,
        name: str,
        fn: JobFn,
        *,
        on_event: Callable[[Any], None] | None = None,
        on_done: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException], None] | None = None,
        on_cancelled: Callable[[], None] | None = None,
    ) -> Job:
        job = Job(name, self)
        if on_event:
            job.event.connect(on_event)
        job.on_done, job.on_error, job.on_cancelled = on_done, on_error, on_cancelled
        job.ended.connect(lambda: self._forget(job))
        self._jobs.add(job)
        self._pool.start(_Runnable(job, fn))
        return job

    def _forget(self, job: Job) -> None:
        # No deleteLater(): the worker thread may still hold the job for a moment after its last
        # emit, and deleting the QObject under it crashes. The runner (its parent) frees it.
        self._jobs.discard(job)

    @property
    def active(self) -> list[Job]:
        return [job for job in self._jobs if job.running]

    def cancel_all(self) -> None:
        for job in list(self._jobs):
            job.cancel()

    def wait(self, msecs: int = -1) -> bool:
        """Block until every running job's thread is done (used at shutdown and in tests)."""
        return self._pool.waitForDone(msecs)
