"""CorpusManager: add/list/info/remove/rebuild/active, interrupted ingests, bad input."""

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

from searchain.config import Settings
from searchain.corpus.lock import CorpusLock
from searchain.corpus.manager import CorpusManager
from searchain.errors import Cancelled, CorpusError
from searchain.events import CancelToken, Progress

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def write_jsonl(path, n, start=0, title="T"):
    path.write_text("".join(json.dumps({"id": f"r{i}", "title": f"{title}{i}", "text": f"text number {i}"}) + "\n"
                            for i in range(start, start + n)), encoding="utf-8")
    return path


@pytest.fixture
def manager(home):
    return CorpusManager(home, Settings())


def test_add_creates_and_appends_and_records_sources(manager, tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", 30)
    b = tmp_path / "b.tsv"
    b.write_text("x1\tfrom tsv\tX\nr0\tsame pid as jsonl\tY\n", encoding="utf-8")
    r1 = manager.add("mine", a)
    r2 = manager.add("mine", b)
    assert (r1.added, r2.added, r2.duplicates) == (30, 1, 1)
    info = manager.info("mine")
    assert info.passages == 31 and info.state == "ready"
    assert info.sources == [str(a), str(b)] and info.formats == ["jsonl", "tsv"]
    assert info.size_bytes > 0 and info.created
    assert [s["added"] for s in info.source_details] == [30, 1]
    assert [i.name for i in manager.list()] == ["mine"]


def test_progress_events_and_report(manager, tmp_path):
    events = []
    report = manager.add("p", write_jsonl(tmp_path / "a.jsonl", 1200), on_event=events.append)
    progress = [e for e in events if isinstance(e, Progress)]
    assert progress and progress[-1].done == progress[-1].total
    assert report.added == 1200 and report.seconds >= 0


def test_bad_inputs_are_clear_errors_and_leave_nothing_behind(manager, tmp_path, home):
    with pytest.raises(CorpusError, match="does not exist"):
        manager.add("x", tmp_path / "missing.jsonl")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    with pytest.raises(CorpusError, match="empty"):
        manager.add("x", empty, "jsonl")
    junk = tmp_path / "junk.jsonl"
    junk.write_text("{bad\n[1]\n", encoding="utf-8")
    with pytest.raises(CorpusError, match=r"(?s)No passages found.*junk.jsonl:1: invalid JSON") as info:
        manager.add("x", junk, "jsonl")
    assert "2 records were malformed" in str(info.value)
    with pytest.raises(CorpusError, match="Invalid corpus name"):
        manager.add("../evil", junk)
    with pytest.raises(CorpusError, match="Unknown corpus format"):
        manager.add("x", junk, "csv")
    with pytest.raises(CorpusError, match="does not fit"):
        manager.add("x", tmp_path, "jsonl")
    assert not (home.corpora_dir / "x").exists() and manager.list() == []


def test_failed_second_source_keeps_the_first(manager, tmp_path):
    manager.add("c", write_jsonl(tmp_path / "a.jsonl", 5))
    junk = tmp_path / "junk.jsonl"
    junk.write_text("nope\n", encoding="utf-8")
    with pytest.raises(CorpusError):
        manager.add("c", junk, "jsonl")
    info = manager.info("c")
    assert info.passages == 5 and info.state == "ready" and info.sources == [str(tmp_path / "a.jsonl")]


def test_skipped_records_are_reported_not_dropped_silently(manager, tmp_path):
    f = write_jsonl(tmp_path / "a.jsonl", 3)
    with open(f, "a", encoding="utf-8") as fh:
        fh.write("{broken\n")
    report = manager.add("c", f)
    assert report.added == 3 and report.skipped == 1
    assert list(report.problems[0]) == [str(f), 4, report.problems[0].reason]


def test_cancel_keeps_committed_batches_and_add_again_continues(manager, tmp_path):
    src = write_jsonl(tmp_path / "a.jsonl", 2000)
    token = CancelToken()

    def cancel_after_first_batch(event):
        if isinstance(event, Progress) and event.done:
            token.cancel()

    with pytest.raises(Cancelled):
        manager.add("c", src, on_event=cancel_after_first_batch, cancel=token)
    info = manager.info("c")
    assert info.state == "incomplete" and 0 < info.passages < 2000
    report = manager.add("c", src)
    assert report.added == 2000 - info.passages and report.duplicates == info.passages
    assert manager.info("c").state == "ready" and manager.info("c").passages == 2000
    # The source's record counts what it added over both runs, not the last run's share.
    assert manager.info("c").source_details[0]["added"] == 2000


def test_a_source_counts_its_own_passages_across_resumes_and_other_adds(manager, tmp_path):
    a = write_jsonl(tmp_path / "a.jsonl", 1500)
    token = CancelToken()

    def cancel_after_first_batch(event):
        if isinstance(event, Progress) and event.done:
            token.cancel()

    with pytest.raises(Cancelled):
        manager.add("c", a, on_event=cancel_after_first_batch, cancel=token)
    manager.add("c", write_jsonl(tmp_path / "b.jsonl", 40, start=5000))  # another source meanwhile
    manager.add("c", a)  # continues a
    write_jsonl(a, 1600)  # a grows: adding it again stores the 100 new records
    assert manager.add("c", a).added == 100
    added = {s["path"]: s["added"] for s in manager.info("c").source_details}
    assert added == {str(a): 1600, str(tmp_path / "b.jsonl"): 40}
    assert manager.info("c").passages == 1640


def test_killed_process_mid_ingest_loses_nothing(home, tmp_path):
    src = write_jsonl(tmp_path / "big.jsonl", 5000)
    child = textwrap.dedent(f"""
        import sys, time
        from searchain.config import AppPaths, Settings
        from searchain.corpus.manager import CorpusManager
        from searchain.events import Progress
        batches = []
        def on_event(e):
            if isinstance(e, Progress) and e.done:
                batches.append(e)
                if len(batches) == 3:
                    print("COMMITTED", flush=True)
                    time.sleep(600)  # wait here to be killed
        paths = AppPaths.resolve({str(home.config_dir.parent)!r})
        CorpusManager(paths, Settings()).add("big", {str(src)!r}, on_event=on_event)
    """)
    proc = subprocess.Popen([sys.executable, "-c", child], cwd=REPO, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "COMMITTED"
        manager = CorpusManager(home, Settings())
        assert manager.info("big").state == "ingesting"  # the child still holds the write lock
        with pytest.raises(CorpusError, match="another process"):
            manager.add("big", src)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    info = manager.info("big")
    assert info.state == "incomplete" and info.passages == 3 * 500
    with manager.open_store("big") as store:
        assert store.fts_integrity_ok()
    report = manager.add("big", src)
    assert (report.added, report.duplicates) == (3500, 1500)
    info = manager.info("big")
    assert info.state == "ready" and info.passages == 5000


def test_remove_and_active_corpus(manager, tmp_path, home):
    manager.add("one", write_jsonl(tmp_path / "a.jsonl", 2))
    manager.add("two", write_jsonl(tmp_path / "b.jsonl", 2))
    manager.set_active("two")
    assert Settings.load(home).active_corpus == "two"
    assert [i.active for i in manager.list()] == [False, True]
    with pytest.raises(CorpusError, match="no corpus named 'three'"):
        manager.set_active("three")
    manager.remove("two")
    assert manager.names() == ["one"] and Settings.load(home).active_corpus == "one"
    assert not any(p.name.startswith(".") for p in home.corpora_dir.iterdir())
    with pytest.raises(CorpusError, match="no corpus named"):
        manager.remove("two")
    with pytest.raises(CorpusError, match="(?s)no corpus named .two.*Known corpora: one"):
        manager.info("two")


def test_locked_corpus_cannot_be_removed_or_rebuilt(manager, tmp_path):
    manager.add("c", write_jsonl(tmp_path / "a.jsonl", 2))
    lock = CorpusLock(manager.corpus_dir("c")).acquire("c")
    try:
        with pytest.raises(CorpusError, match="another process"):
            manager.remove("c")
        with pytest.raises(CorpusError, match="another process"):
            manager.rebuild("c")
    finally:
        lock.release()
    manager.remove("c")


def test_rebuild_rereads_sources_and_keeps_ids(manager, tmp_path):
    src = write_jsonl(tmp_path / "a.jsonl", 10)
    manager.add("c", src)
    with manager.open_store("c") as store:
        ids_before = {p.pid: i for b in store.iter_batches() for i, p in b}
        store.delete(["r3"])  # gone from the store, still in the source
        store.meta_set("index_note", "kept?")
    write_jsonl(src, 12)  # the source grew
    report = manager.rebuild("c")
    assert report.added == 12
    with manager.open_store("c") as store:
        ids_after = {p.pid: i for b in store.iter_batches() for i, p in b}
        assert store.meta_get("index_note") is None  # a fresh store
        assert store.fts_integrity_ok()
    assert all(ids_after[pid] == i for pid, i in ids_before.items() if pid != "r3")
    assert min(ids_after["r10"], ids_after["r11"], ids_after["r3"]) > max(ids_before.values())
    assert manager.info("c").state == "ready"
    assert not list(manager.corpus_dir("c").glob(".rebuild-*"))


def test_rebuild_with_a_missing_source_changes_nothing(manager, tmp_path):
    src = write_jsonl(tmp_path / "a.jsonl", 4)
    manager.add("c", src)
    src.unlink()
    with pytest.raises(CorpusError, match="source .* is gone"):
        manager.rebuild("c")
    assert manager.info("c").passages == 4


def test_damaged_store_is_listed_as_damaged(manager, tmp_path):
    manager.add("good", write_jsonl(tmp_path / "a.jsonl", 2))
    bad = manager.corpus_dir("bad")
    bad.mkdir()
    (bad / "passages.db").write_bytes(b"garbage" * 1000)
    states = {i.name: i.state for i in manager.list()}
    assert states == {"bad": "damaged", "good": "ready"}
    assert "Cannot open passage store" in manager.info("bad").problem


def test_index_facts_are_read_from_index_meta(manager, tmp_path):
    manager.add("c", write_jsonl(tmp_path / "a.jsonl", 3))
    index_dir = manager.corpus_dir("c") / "index"
    index_dir.mkdir()
    (index_dir / "meta.json").write_text(json.dumps({"embedder": "mini", "count": 3}))
    info = manager.info("c")
    assert (info.embedder, info.indexed) == ("mini", 3)
