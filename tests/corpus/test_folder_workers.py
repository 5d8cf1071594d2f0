"""A folder of documents parsed in worker processes (#34): the same rows, problems and file
records as in one process; a file whose reader kills its worker is that file's problem line and
the others are stored; a killed ingest resumes to the same corpus."""

import os
import signal
import sys

import pytest

from searchain.config import Settings
from searchain.corpus import parallel
from searchain.corpus.manager import CorpusManager
from searchain.corpus.problems import ProblemLog
from searchain.corpus.sources import folder as folder_module
from searchain.corpus.sources import open_source
from searchain.errors import CorpusError
from tests.corpus.test_bad_files import mixed  # noqa: F401 (the fixture)
from tests.corpus.test_parallel_ingest import KILL_CHILD, kill_ingest_after_first_commit
from tests.fixtures.documents import page_texts, write_pdf

CRASH_MARK = b"%CRASH-ME"


def rows(manager, name):
    with manager.open_store(name) as store:
        return store.conn.execute('SELECT id, pid, title, text, page, section, doc_id, start, "end" '
                                  "FROM passages ORDER BY id").fetchall()


def records(manager, name):
    with manager.open_store(name) as store:
        return store.documents()


def _crashing_start(spec):
    """A worker whose PDF reader dies (as a segfault in PDFium would) on a marked file."""
    from searchain.corpus.sources.documents import pdf

    parallel._start_worker(spec)
    real = pdf.read_pdf

    def read_pdf(data):
        if CRASH_MARK in data:
            os.kill(os.getpid(), signal.SIGKILL)
        return real(data)

    pdf.read_pdf = read_pdf


def test_one_and_three_workers_store_the_same_rows_problems_and_records(home, mixed, monkeypatch):  # noqa: F811
    monkeypatch.setattr(folder_module, "ITEM_FILES", 2)  # several items, spread over the workers
    manager = CorpusManager(home, Settings())
    one = manager.add("one", mixed, workers=1)
    three = manager.add("three", mixed, workers=3)
    assert rows(manager, "one") == rows(manager, "three") and len(rows(manager, "one")) > 7
    assert records(manager, "one") == records(manager, "three")
    assert len(records(manager, "one")) == 16  # every supported file, good or bad
    assert one.problems == three.problems and len(one.problems) == 11
    assert (one.files, one.ignored, one.skipped) == (three.files, three.ignored, three.skipped) == (7, 1, 11)


def test_a_file_that_kills_its_worker_is_reported_and_the_others_are_stored(home, tmp_path, monkeypatch):
    root = tmp_path / "papers"
    root.mkdir()
    for i in range(5):
        write_pdf(root / f"p{i}.pdf", page_texts(2, seed=i))
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nText of note {i}.\n", encoding="utf-8")
    crash = write_pdf(root / "n2x.pdf", page_texts(1, seed=9))  # in the middle of an item
    crash.write_bytes(crash.read_bytes() + CRASH_MARK + b"\n")
    monkeypatch.setattr(folder_module, "ITEM_FILES", 3)
    monkeypatch.setattr(parallel, "_start_worker", _crashing_start)
    manager = CorpusManager(home, Settings())
    report = manager.add("crashy", root, workers=2)
    assert [(os.path.basename(p.file), p.reason) for p in report.problems] == \
        [("n2x.pdf", folder_module.CRASHED + " (its process died)")]
    crashed = {r.doc_id: r for r in records(manager, "crashy")}["papers/n2x.pdf"]
    assert crashed.passages == 0 and crashed.problem.startswith("reading it made the reader process "
                                                                "crash") and len(crashed.sha256) == 64
    crash.unlink()
    manager.add("serial", root, workers=1)
    assert [r[1:] for r in rows(manager, "crashy")] == [r[1:] for r in rows(manager, "serial")]
    assert report.files == 10


def test_auto_workers_start_processes_only_for_a_large_folder(tmp_path, monkeypatch):
    root = tmp_path / "docs"
    root.mkdir()
    (root / "a.md").write_text("# A\n\nsome text\n", encoding="utf-8")
    (root / "b.png").write_bytes(b"\x89PNG" + bytes(5000))  # unsupported: does not count
    source = open_source(root, "folder", "c", ProblemLog())
    assert parallel.supports_workers(source) and source.work_bytes() == (root / "a.md").stat().st_size
    assert parallel.workers_for(source, 0) == 1 and parallel.workers_for(source, 3) == 3
    monkeypatch.setattr(parallel, "AUTO_MIN_BYTES", 10)
    assert parallel.workers_for(source, 0) == parallel.auto_workers()
    assert source.ignored == 1  # counted once, however often the size was asked


def test_items_keep_the_walk_order_and_group_small_files(tmp_path, monkeypatch):
    root = tmp_path / "docs"
    (root / "sub").mkdir(parents=True)
    for name in ("b.md", "a.md", "sub/c.txt", "z.md"):
        (root / name).write_text("words " * 50, encoding="utf-8")
    monkeypatch.setattr(folder_module, "ITEM_BYTES", 700)  # two 300-byte files an item
    monkeypatch.setattr(folder_module, "ITEMS_AT_LEAST", 1)
    source = open_source(root, "folder", "c", ProblemLog())
    items = list(source.work_items())
    assert [[f[5] for f in item[1]] for item, _ in items] == [["docs/a.md", "docs/b.md"],
                                                              ["docs/sub/c.txt", "docs/z.md"]]
    assert [done for _, done in items] == [600, 1200] and source.bytes_total == 1200
    parts = source.split_item(items[1][0], items[1][1])
    assert [(item[1][0][5], done) for item, done in parts] == [("docs/sub/c.txt", 900), ("docs/z.md", 1200)]


def test_a_small_folder_is_cut_into_about_32_items_so_workers_share_it(tmp_path):
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(64):
        (root / f"n{i:02d}.md").write_text("words " * 50, encoding="utf-8")  # 19 KB in all
    items = list(open_source(root, "folder", "c", ProblemLog()).work_items())
    assert [len(item[1]) for item, _ in items] == [2] * 32
    assert [f[5] for item, _ in items for f in item[1]] == [f"docs/n{i:02d}.md" for i in range(64)]


@pytest.mark.skipif(sys.platform != "linux", reason="reads worker processes from ps and /proc")
def test_a_killed_folder_ingest_with_workers_resumes_to_the_same_corpus(home, tmp_path, monkeypatch):
    root = tmp_path / "notes"
    root.mkdir()
    words = page_texts(60, seed=3, words=(900, 1100))
    for i, text in enumerate(words):  # ~600 passages: the first batch of 500 commits midway
        (root / f"note{i:02d}.md").write_text(f"# Note {i}\n\n{text}\n", encoding="utf-8")
    write_pdf(root / "paper.pdf", page_texts(3, seed=4))
    kill_ingest_after_first_commit(KILL_CHILD.replace('"wiki"', '"notes"'), home, root)
    manager = CorpusManager(home, Settings())
    stored = manager.info("notes").passages
    assert manager.info("notes").state == "incomplete" and 0 < stored
    report = manager.add("notes", root, workers=3)
    manager.add("whole", root, workers=1)
    assert [r[:3] for r in rows(manager, "notes")] == [r[:3] for r in rows(manager, "whole")]
    assert report.added == len(rows(manager, "whole")) - stored
    assert records(manager, "notes") == records(manager, "whole")
    assert manager.info("notes").state == "ready"


def _dying_start(spec):
    os.kill(os.getpid(), signal.SIGKILL)


def test_workers_that_die_as_they_start_stop_the_ingest_instead_of_blaming_each_file(tmp_path, monkeypatch):
    root = tmp_path / "docs"
    root.mkdir()
    for i in range(3):
        (root / f"n{i}.md").write_text(f"# Note {i}\n\nText {i}.\n", encoding="utf-8")
    monkeypatch.setattr(parallel, "_start_worker", _dying_start)
    source = open_source(root, "folder", "c", ProblemLog())
    with pytest.raises(CorpusError, match="worker processes die as they start") as caught:
        list(parallel.parallel_passages(source, 2))
    assert "--workers 1" in caught.value.hint and source.documents == []


def _die():
    import os

    os._exit(1)


def test_work_for_a_pool_a_worker_just_broke_is_met_in_order_not_raised_at_submit():
    # A worker may die between two submits: the pool then refuses new work at once. That error
    # must reach the reader in order, like any death, so that the items in flight are read again.
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    pool = ProcessPoolExecutor(1)
    try:
        with pytest.raises(BrokenProcessPool):
            pool.submit(_die).result()
        future = parallel._submit(pool, ("files", ()))
        assert isinstance(future.exception(timeout=5), BrokenProcessPool)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
