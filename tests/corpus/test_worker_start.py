"""How folder workers start (#34): forks of a fork server, never of the ingest's process; a
small folder's head start (the ingest reads the first files while the workers start) stores
what one process stores; auto picks what docs/corpus.md says."""

import multiprocessing
import os
import sys
import threading

import pytest

from searchain.config import Settings
from searchain.corpus import parallel, processes
from searchain.corpus.manager import CorpusManager
from searchain.corpus.problems import ProblemLog
from searchain.corpus.sources import open_source
from searchain.events import CancelToken, Cancelled, Progress
from tests.corpus.test_bad_files import mixed  # noqa: F401 (the fixture)
from tests.corpus.test_folder_workers import records, rows
from tests.fixtures.documents import page_texts, write_pdf


def _parent_of_worker() -> int:
    return os.getppid()


def _burn() -> None:
    import time

    end = time.process_time() + 0.05
    while time.process_time() < end:
        pass


@pytest.mark.skipif(sys.platform != "linux", reason="the fork server is the POSIX start method")
def test_workers_are_forks_of_the_fork_server_not_of_this_process():
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import forkserver

    assert processes.START_METHOD == "forkserver"
    threading.Thread(target=threading.Event().wait, args=(5,), daemon=True).start()  # as Qt's
    before = processes.workers_cpu_seconds()
    with ProcessPoolExecutor(1, mp_context=processes.worker_context()) as pool:
        parent = pool.submit(_parent_of_worker).result()
        pool.submit(_burn).result()
    assert parent != os.getpid() and parent == forkserver._forkserver._forkserver_pid
    assert processes.workers_cpu_seconds() - before >= 0.04  # a worker's CPU, via the server


def _heavy_modules() -> list[str]:
    return sorted(m for m in ("numpy", "torch", "sentence_transformers", "faiss", "PySide6", "pyarrow")
                  if m in sys.modules)


def test_a_pdf_worker_loads_no_heavy_module(tmp_path):
    from concurrent.futures import ProcessPoolExecutor

    root = _folder(tmp_path / "papers", 2)
    source = open_source(root, "folder", "c", ProblemLog())
    item = next(iter(source.work_items()))[0]
    spec = (str(root), "folder", "c", source.options)
    with ProcessPoolExecutor(1, mp_context=processes.worker_context(), initializer=parallel._start_worker,
                             initargs=(spec,)) as pool:
        passages = pool.submit(parallel._parse, item).result()[0]
        assert passages and pool.submit(_heavy_modules).result() == []


def _folder(root, files, pages=2):
    root.mkdir()
    for i in range(files):
        write_pdf(root / f"p{i:02d}.pdf", page_texts(pages, seed=i))
    return root


def test_auto_picks_in_process_a_head_start_or_a_worker_per_core_by_size(tmp_path, monkeypatch):
    monkeypatch.setattr(parallel, "auto_workers", lambda: 8)
    root = tmp_path / "docs"
    root.mkdir()
    small = root / "a.md"
    small.write_text("w " * 1000, encoding="utf-8")

    def plan(setting=0):
        return parallel.worker_plan(open_source(root, "folder", "c", ProblemLog()), setting)
    assert plan() == (1, False)  # under 500 KB: read in the ingest's own process
    assert plan(3) == (3, False)  # a count that is set: every file in a worker
    small.write_text("w " * 255_000, encoding="utf-8")  # 510 KB
    assert plan() == (parallel.HEAD_START_MAX_WORKERS, True) == (4, True)
    monkeypatch.setattr(parallel, "auto_workers", lambda: 1)
    assert plan() == (1, False)  # one core: no workers
    monkeypatch.setattr(parallel, "auto_workers", lambda: 8)
    with open(small, "r+b") as f:  # 8 MB: a worker per core, every file read in one
        f.truncate(parallel.AUTO_MIN_BYTES)
    assert plan() == (8, False)
    assert (parallel.HEAD_START_MIN_BYTES, parallel.AUTO_MIN_BYTES) == (500_000, 8_000_000)


def _delayed_start(monkeypatch, local_items: int) -> tuple[list, threading.Event]:
    """The pool starts only once the caller has parsed ``local_items`` items itself, or the
    event returned is set; the list returned holds the items it parsed."""
    parsed: list = []
    go, started = threading.Event(), threading.Event()
    real_parse, real_start = parallel._parse_with, parallel._start_pool

    def parse_with(source, item):
        if len(parsed) >= local_items:
            go.set()
            started.wait(60)  # then the pool takes the rest (one more may still come here)
        parsed.append(item)
        return real_parse(source, item)

    def start_pool(new_pool, workers, out):
        go.wait(60)
        real_start(new_pool, workers, out)
        started.set()
    monkeypatch.setattr(parallel, "_parse_with", parse_with)  # in this process only
    monkeypatch.setattr(parallel, "_start_pool", start_pool)
    return parsed, go


def test_a_head_start_stores_what_one_process_stores(home, mixed, monkeypatch):  # noqa: F811
    monkeypatch.setattr(parallel, "HEAD_START_MIN_BYTES", 1)
    monkeypatch.setattr(parallel, "auto_workers", lambda: 2)
    parsed, _ = _delayed_start(monkeypatch, 3)
    manager = CorpusManager(home, Settings())
    messages = []
    auto = manager.add("auto", mixed, workers=0,
                       on_event=lambda e: isinstance(e, Progress) and messages.append(e.message))
    assert any("with 2 worker processes" in m for m in messages)
    items = list(open_source(mixed, "folder", "c", ProblemLog()).work_items())
    assert 3 <= len(parsed) <= 4 < len(items)  # the first ones here, the rest in the workers
    one = manager.add("one", mixed, workers=1)
    assert rows(manager, "auto") == rows(manager, "one")
    assert records(manager, "auto") == records(manager, "one")
    assert auto.problems == one.problems and len(one.problems) == 11
    assert (auto.files, auto.ignored, auto.skipped) == (one.files, one.ignored, one.skipped)


def test_a_cancel_during_the_head_start_stops_the_starting_workers(tmp_path, monkeypatch):
    from searchain.corpus.ingest import ingest_source
    from searchain.corpus.store import PassageStore

    root = _folder(tmp_path / "papers", 40, pages=3)
    monkeypatch.setattr(parallel, "HEAD_START_MIN_BYTES", 1)
    monkeypatch.setattr(parallel, "auto_workers", lambda: 2)
    parsed, go = _delayed_start(monkeypatch, 10**6)  # the pool starts once the cancel came
    cancel = CancelToken()

    def on_event(e):
        if isinstance(e, Progress) and "passages added" in e.message and not e.message.startswith("0 "):
            cancel.cancel()
            go.set()
    with PassageStore.open(tmp_path / "p.db", create=True, corpus="c") as store:
        with pytest.raises(Cancelled):
            ingest_source(store, root, "folder", workers=0, batch_size=20, on_event=on_event,
                          cancel=cancel)
        stored = store.conn.execute("SELECT pid, text FROM passages ORDER BY id").fetchall()
    assert 0 < len(parsed) < 40
    assert not multiprocessing.active_children()  # the pool that started late was shut down
    with PassageStore.open(tmp_path / "whole.db", create=True, corpus="c") as store:
        ingest_source(store, root, "folder", workers=1)
        whole = store.conn.execute("SELECT pid, text FROM passages ORDER BY id").fetchall()
    assert 0 < len(stored) < len(whole) and stored == whole[:len(stored)]
