"""JobRunner: work runs on a pool thread, events and outcomes come back on the UI thread."""

import threading

import pytest

from desktop.workers import JobRunner
from searchain.errors import Cancelled, CorpusError


def test_events_and_result_arrive_on_ui_thread(qtbot):
    runner = JobRunner()
    main = threading.get_ident()
    seen = []

    def work(on_event, cancel):
        for i in range(3):
            on_event(i)
        return threading.get_ident()

    results = []
    job = runner.start("t", work, on_event=lambda e: seen.append((e, threading.get_ident())),
                       on_done=results.append)
    qtbot.waitUntil(lambda: bool(results), timeout=5000)
    assert [e for e, _ in seen] == [0, 1, 2]
    assert all(thread == main for _, thread in seen)
    assert results[0] != main and job.worker_thread_id == results[0]
    assert runner.active == []


def test_errors_are_delivered_not_raised(qtbot):
    runner = JobRunner()
    errors = []

    def boom(on_event, cancel):
        raise CorpusError("Folder /x is empty.", hint="Pick a folder with .txt files.")

    runner.start("t", boom, on_error=errors.append)
    qtbot.waitUntil(lambda: bool(errors), timeout=5000)
    assert isinstance(errors[0], CorpusError)

    def crash(on_event, cancel):
        return 1 / 0

    runner.start("t", crash, on_error=errors.append)
    qtbot.waitUntil(lambda: len(errors) == 2, timeout=5000)
    assert isinstance(errors[1], ZeroDivisionError)


def test_cancel_reaches_the_worker(qtbot):
    runner = JobRunner()
    started = threading.Event()
    cancelled = []

    def wait_for_cancel(on_event, cancel):
        started.set()
        while True:
            cancel.raise_if_cancelled()
            threading.Event().wait(0.01)

    job = runner.start("t", wait_for_cancel, on_cancelled=lambda: cancelled.append(True))
    assert started.wait(5)
    job.cancel()
    qtbot.waitUntil(lambda: bool(cancelled), timeout=5000)
    assert runner.wait(5000)


def test_cancelled_is_not_an_error():
    with pytest.raises(Cancelled):
        raise Cancelled()
