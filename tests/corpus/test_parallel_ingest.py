"""Parallel ingest (#33 item 4): the same passages, pids, ids and order with 1 and 3 worker
processes, for a plain dump, a multistream dump and a ZIM file; a kill resumes; a malformed page
is named and the others go on."""

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from searchain.bench.ingest.measure import make_dump
from searchain.bench.ingest.multistream import to_multistream
from searchain.config import Settings
from searchain.corpus import parallel
from searchain.corpus.manager import CorpusManager
from searchain.corpus.problems import ProblemLog
from searchain.corpus.sources.mediawiki import MediaWikiSource
from searchain.errors import CorpusError
from searchain.events import Progress

REPO = Path(__file__).resolve().parents[2]


def rows(manager, name):
    with manager.open_store(name) as store:
        return store.conn.execute('SELECT id, pid, title, text, section, doc_id, start, "end", url '
                                  "FROM passages ORDER BY id").fetchall()


def test_one_and_three_workers_store_the_same_passages_with_the_same_ids(home, tmp_path):
    dump = make_dump(tmp_path / "wiki.xml.bz2", 150, random.Random(3))  # 3 page batches, 750 passages
    manager = CorpusManager(home, Settings())
    one = manager.add("one", dump, workers=1)
    messages = []
    three = manager.add("three", dump, workers=3,
                        on_event=lambda e: isinstance(e, Progress) and messages.append(e.message))
    assert any("with 3 worker processes" in m for m in messages)
    assert rows(manager, "one") == rows(manager, "three") and len(rows(manager, "one")) == 750
    assert (one.added, one.ignored, one.skipped) == (three.added, three.ignored, three.skipped)


def test_a_multistream_dump_is_split_by_its_index_with_the_same_result(home, tmp_path):
    plain = make_dump(tmp_path / "wiki.xml.bz2", 120, random.Random(4))
    dump, index = to_multistream(plain, tmp_path / "wiki-multistream.xml.bz2", pages_per_stream=10)
    source = MediaWikiSource(dump, "c", ProblemLog())
    items = [item for item, _ in source.work_items()]
    assert [kind for kind, _ in items] == ["stream"] * 6  # 12 streams, 2 a work item
    manager = CorpusManager(home, Settings())
    manager.add("serial", dump, workers=1)  # bz2 reads the streams as one: no index used
    manager.add("streams", dump, workers=3)
    assert rows(manager, "serial") == rows(manager, "streams") and len(rows(manager, "serial")) == 600

    late = MediaWikiSource(dump, "c", ProblemLog())
    late.resume_after = "35"  # in the 4th stream (pages 31-40): streams before it are not read
    first_item = next(iter(late.work_items()))[0]
    import bz2
    lines = bz2.decompress(index.read_bytes()).decode().splitlines()
    assert first_item[1][0] == int(next(x for x in lines if x.split(":")[1] == "35").split(":")[0])
    assert first_item[1][0] > items[1][1][0]


def test_an_index_of_another_dump_is_refused_by_name(tmp_path):
    dump, index = to_multistream(make_dump(tmp_path / "a.xml.bz2", 20, random.Random(5)),
                                 tmp_path / "a-multistream.xml.bz2", pages_per_stream=5)
    index.write_bytes(__import__("bz2").compress(b"999999999:1:Far away\n"))
    source = MediaWikiSource(dump, "c", ProblemLog())
    with pytest.raises(CorpusError, match="belongs to another dump") as err:
        list(source.work_items())
    assert str(index) in str(err.value)


def test_a_zim_file_gives_the_same_passages_with_workers(home, tmp_path):
    pytest.importorskip("libzim")
    from tests.fixtures.zim import write_zim

    articles = {f"Article_{i}": (f"Article {i}", f"<html><body><h1>Article {i}</h1><p>Article {i} is "
                                 f"about the river number {i}. It flows north.</p><h2>History</h2>"
                                 f"<p>Barges sailed it in {1800 + i}.</p></body></html>")
                for i in range(150)}
    zim = write_zim(tmp_path / "w.zim", articles, metadata={"Name": "wikipedia_en_all_nopic"})
    manager = CorpusManager(home, Settings())
    manager.add("one", zim, workers=1)
    manager.add("three", zim, workers=3)
    assert rows(manager, "one") == rows(manager, "three") and len(rows(manager, "one")) >= 300


def test_a_malformed_page_is_named_and_the_others_go_on_in_workers(home, tmp_path):
    dump = make_dump(tmp_path / "wiki.xml.bz2", 100, random.Random(6))
    import bz2

    text = bz2.decompress(dump.read_bytes()).replace(b"<id>70</id>", b"", 1)  # page 70 loses its id
    dump.write_bytes(bz2.compress(text))
    report = CorpusManager(home, Settings()).add("w", dump, workers=3)
    assert report.skipped == 1 and "page without title or id (title='Page 69'" in str(report.problems[0])
    assert report.added == 99 * 5


def test_an_error_in_a_worker_names_the_work_item(monkeypatch, tmp_path):
    source = MediaWikiSource(tmp_path / "x.xml", "c", ProblemLog())

    def boom(item):
        raise ValueError("unexpected markup")
    monkeypatch.setattr(source, "parse_item", boom)
    monkeypatch.setattr(parallel, "_worker_source", source)
    passages, ignored, problems, documents, error = parallel._parse(("pages", [("7", "T", "0", False, "")]))
    assert passages == [] and "pages 7 to 7" in error[0] and "ValueError: unexpected markup" in error[0]


def test_auto_workers_leave_a_small_file_in_process(tmp_path):
    dump = make_dump(tmp_path / "wiki.xml.bz2", 5, random.Random(7))
    source = MediaWikiSource(dump, "c", ProblemLog())
    assert parallel.workers_for(source, 0) == 1 and parallel.workers_for(source, 4) == 4
    assert 1 <= parallel.auto_workers() <= parallel.MAX_AUTO_WORKERS


KILL_CHILD = """
    import os, sys, time
    from searchain.config import AppPaths, Settings
    from searchain.corpus.manager import CorpusManager
    from searchain.events import Progress
    def on_event(e):
        if isinstance(e, Progress) and e.done and "passages added" in e.message and \\
                not e.message.startswith("0 "):
            print("COMMITTED", flush=True)
            time.sleep(600)  # wait here to be killed
    CorpusManager(AppPaths.resolve(sys.argv[1]), Settings()).add("wiki", sys.argv[2], workers=3,
                                                                  on_event=on_event)
"""


def _children(pid: int) -> list[int]:
    """``pid``'s descendants: the fork server, the resource tracker, and the workers (the fork
    server's children)."""
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    children = [int(x) for x in out.stdout.split()]
    return children + [d for c in children for d in _children(c)]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(") ")[-1].startswith("Z"))


@pytest.mark.skipif(sys.platform != "linux", reason="reads worker processes from ps and /proc")
def cancel_once_passages_are_added(cancel):
    """An ingest's event handler that cancels it at its first progress with passages stored."""
    def on_event(e):
        if isinstance(e, Progress) and "passages added" in e.message and not e.message.startswith("0 "):
            cancel.cancel()
    return on_event


def kill_ingest_after_first_commit(script: str, home, source) -> None:
    """Run ``script`` (an ingest of ``source`` into ``home``, as ``KILL_CHILD``) in a child process,
    kill -9 it once it has committed a batch, and check its worker processes go with it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), str(home.config_dir.parent), str(source)],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "COMMITTED"
        workers = _children(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.stdout.close()
    assert workers  # the pool's processes (and the fork server)
    deadline = time.monotonic() + 20
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(_alive(w) for w in workers), "worker processes outlived the killed ingest"


def test_a_killed_parallel_ingest_leaves_no_workers_and_resumes_to_the_same_corpus(home, tmp_path):
    dump = make_dump(tmp_path / "wiki.xml.bz2", 300, random.Random(0))  # 1,500 passages
    kill_ingest_after_first_commit(KILL_CHILD, home, dump)

    manager = CorpusManager(home, Settings())
    stored = manager.info("wiki").passages
    assert manager.info("wiki").state == "incomplete" and 0 < stored < 1500
    messages = []
    report = manager.add("wiki", dump, workers=3,
                         on_event=lambda e: isinstance(e, Progress) and messages.append(e.message))
    assert any("continuing after page" in m for m in messages)
    assert report.added == 1500 - stored
    manager.add("whole", dump, workers=1)
    assert [r[:2] for r in rows(manager, "wiki")] == [r[:2] for r in rows(manager, "whole")]
    assert manager.info("wiki").state == "ready"


def test_bench_ingest_with_workers_prints_runs_per_worker_count(tmp_path, capsys):
    import json

    from searchain.cli.main import main

    dump = make_dump(tmp_path / "wiki.xml.bz2", 70, random.Random(8))
    assert main(["bench", "ingest", "--source", str(dump), "--workers", "1,2", "--repeats", "1",
                 "--no-wikiextractor", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["workers"] for r in out["runs"]] == [1, 2] and out["wikiextractor"] is None
    assert out["pages"] == 70 and all(r["passages"] == 350 and r["pages_per_s"] > 0 for r in out["runs"])
    assert out["runs"][1]["workers_cpu_s"] > 0  # the worker processes' CPU time is counted
    # whether the machine gave the workers their cores, checked before and after the runs
    check = out["core_check"]
    assert check["processes"] == min(2, os.cpu_count())
    for when in ("before", "after"):
        assert check[when]["alone_s"] > 0 and check[when]["parallel_s"] > 0
        assert check[when]["parallel_vs_alone"] == pytest.approx(
            check[when]["parallel_s"] / check[when]["alone_s"], rel=0.05)
    assert main(["bench", "ingest", "--source", str(dump), "--workers", "0"]) != 0


def test_bench_ingest_times_wikiextractor_at_the_counts_asked_and_compares_like_with_like(tmp_path, capsys):
    import json

    from searchain.cli.main import main

    pytest.importorskip("wikiextractor")
    dump = make_dump(tmp_path / "wiki.xml.bz2", 40, random.Random(3))
    assert main(["bench", "ingest", "--source", str(dump), "--workers", "1,2", "--repeats", "1",
                 "--wikiextractor-workers", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["processes"] for r in out["wikiextractor"]["runs"]] == [2]
    one, two = out["runs"]
    assert "vs_wikiextractor" not in one  # no wikiextractor run with 1 process to compare with
    assert two["vs_wikiextractor"] == pytest.approx(
        two["pages_per_s"] / out["wikiextractor"]["runs"][0]["pages_per_s"], rel=0.02)


def test_bench_ingest_times_each_count_without_and_with_the_writers_watch(tmp_path, capsys):
    import json

    from searchain.cli.main import main
    from searchain.corpus import fts_build

    watched = fts_build.WATCH_PASSAGES
    dump = make_dump(tmp_path / "wiki.xml.bz2", 40, random.Random(5))
    assert main(["bench", "ingest", "--source", str(dump), "--workers", "1,2", "--repeats", "1",
                 "--writer-watch", "both", "--no-wikiextractor"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [(r["workers"], r["writer_watch"]) for r in runs] == [(1, "off"), (1, "on"), (2, "off"), (2, "on")]
    assert len({r["passages"] for r in runs}) == 1
    assert fts_build.WATCH_PASSAGES == watched  # the switch is the benchmark's alone


def test_the_benchmarks_watch_off_keeps_the_watch_from_deciding(tmp_path, monkeypatch):
    from searchain.bench.ingest import workers
    from searchain.corpus import fts_build

    seen = []

    def timed(*args):
        watch = fts_build.WriterWatch(8, 3_380, capacity=16.0)
        seen.append(any(watch.observe(500, 0.0, 0.05) for _ in range(200)))  # a writer-bound pace
        return {}
    monkeypatch.setattr(workers, "_timed", timed)
    assert workers._ours(tmp_path, "mediawiki", 8, 1, tmp_path, "off")["writer_watch"] == "off"
    assert workers._ours(tmp_path, "mediawiki", 8, 1, tmp_path, "on")["writer_watch"] == "on"
    assert seen == [False, True]


def test_multistream_streams_compressed_in_processes_are_the_same_bytes(tmp_path):
    from searchain.bench.ingest.multistream import repeat_pages

    dump = repeat_pages(make_dump(tmp_path / "w.xml.bz2", 30, random.Random(4)), tmp_path / "r.xml", 3)
    assert dump.read_bytes()[:3] != b"BZh"  # a .xml name: written plain
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = to_multistream(dump, tmp_path / "a" / "w-multistream.xml.bz2", pages_per_stream=7)
    two = to_multistream(dump, tmp_path / "b" / "w-multistream.xml.bz2", pages_per_stream=7, processes=2)
    assert one[0].read_bytes() == two[0].read_bytes() and one[1].read_bytes() == two[1].read_bytes()
    index = __import__("bz2").decompress(two[1].read_bytes()).decode().splitlines()
    assert len(index) == 90 and len({line.split(":")[0] for line in index}) == 13  # 90 pages, 7 a stream


def test_a_cancel_stops_the_workers_and_keeps_a_prefix(home, tmp_path):
    from searchain.events import CancelToken, Cancelled

    dump = make_dump(tmp_path / "wiki.xml.bz2", 150, random.Random(9))
    cancel = CancelToken()
    manager = CorpusManager(home, Settings())
    with pytest.raises(Cancelled):
        manager.add("w", dump, workers=2, on_event=cancel_once_passages_are_added(cancel), cancel=cancel)
    import multiprocessing

    assert not multiprocessing.active_children()  # the pool was shut down with the ingest
    manager.add("whole", dump, workers=1)
    stored = [r[:2] for r in rows(manager, "w")]
    assert 0 < len(stored) < 750 and stored == [r[:2] for r in rows(manager, "whole")][:len(stored)]


def test_a_page_the_stripper_fails_on_is_named_and_the_rest_are_read(monkeypatch, tmp_path):
    from searchain.corpus.sources import mediawiki

    real = mediawiki.wikitext_sections

    def fragile(markup):
        if "heron heron heron" in markup:
            raise RecursionError("maximum recursion depth exceeded")
        return real(markup)
    monkeypatch.setattr(mediawiki, "wikitext_sections", fragile)
    records = [("1", "Fine", "0", False, "A river flows north."),
               ("2", "Odd", "0", False, "heron heron heron"), ("3", "Also fine", "0", False, "Salt.")]
    source = MediaWikiSource(tmp_path / "x.xml", "c", ProblemLog())
    passages = source.parse_item(("pages", records))
    assert [p.doc_id for p in passages] == ["1", "3"]
    assert source.problems.skipped == 1
    assert "page 2 ('Odd'): its wikitext could not be converted (RecursionError" in str(source.problems.problems[0])


def test_a_zim_resumes_at_the_last_stored_article_serial_and_with_workers(tmp_path):
    pytest.importorskip("libzim")
    from searchain.corpus.sources.zim import ZimSource
    from tests.fixtures.zim import write_zim

    articles = {f"A_{i:03d}": (f"A {i}", f"<html><body><p>Article {i} is about hill {i}.</p></body></html>")
                for i in range(100)}
    zim = write_zim(tmp_path / "w.zim", articles)
    whole = [p.pid for p in ZimSource(zim, "c", ProblemLog()).passages()]
    serial = ZimSource(zim, "c", ProblemLog())
    serial.resume_after = "A_060"
    assert [p.pid for p in serial.passages()] == whole[whole.index("A_060#0"):]
    assert serial.skipped_pages == 60
    workers = ZimSource(zim, "c", ProblemLog())
    workers.resume_after = "A_060"
    assert [p.pid for p in parallel.parallel_passages(workers, 2)] == whole[whole.index("A_060#0"):]
    missing = ZimSource(zim, "c", ProblemLog())
    missing.resume_after = "No_such_article"
    assert [p.pid for p in missing.passages()] == whole


def test_items_in_flight_stay_bounded_whatever_the_source_size(monkeypatch, tmp_path):
    from searchain.corpus.sources import mediawiki

    monkeypatch.setattr(mediawiki, "PAGES_PER_ITEM", 5)
    dump = make_dump(tmp_path / "wiki.xml.bz2", 150, random.Random(10))  # 30 items
    source = MediaWikiSource(dump, "c", ProblemLog())
    pages_seen: set = set()
    ahead = []
    items = source.work_items

    def counted():
        for k, pair in enumerate(items()):
            ahead.append(k - len(pages_seen) // 5)  # items pulled beyond those already consumed
            yield pair
    monkeypatch.setattr(source, "work_items", counted)
    for p in parallel.parallel_passages(source, 2):
        pages_seen.add(p.doc_id)
    assert len(ahead) == 30 and max(ahead) <= 2 * parallel.WINDOW


def test_corpus_add_takes_workers_and_refuses_a_negative_count(home, tmp_path, capsys):
    from searchain.cli.main import main

    dump = make_dump(tmp_path / "wiki.xml.bz2", 20, random.Random(11))
    assert main(["corpus", "add", "w", str(dump), "--workers", "-1", "--no-index"]) != 0
    assert "--workers must be 0 (auto) to 256; got -1" in capsys.readouterr().err
    assert not CorpusManager(home, Settings()).exists("w")
    assert main(["corpus", "add", "w", str(dump), "--workers", "2", "--no-index", "--json"]) == 0
    assert CorpusManager(home, Settings()).info("w").passages == 100


def test_a_dump_broken_midway_stores_the_pages_before_it_with_workers_as_without(home, tmp_path):
    import bz2

    good = bz2.decompress(make_dump(tmp_path / "w.xml.bz2", 150, random.Random(12)).read_bytes())
    cut = good.index(b"<page><title>Page 120<")
    broken = tmp_path / "broken.xml"
    broken.write_bytes(good[:cut] + b"<page><title>Page 120</titl></page>\n" + good[cut:])
    manager = CorpusManager(home, Settings())
    for name, workers in (("serial", 1), ("workers", 3)):
        with pytest.raises(CorpusError, match="the XML is malformed"):
            manager.add(name, broken, workers=workers)
    assert len(rows(manager, "serial")) == 600  # pages 0-119
    assert rows(manager, "serial") == rows(manager, "workers")


def test_workers_send_rows_the_writer_stores_as_they_are_or_the_passages_a_caller_wants(tmp_path):
    """The workers send each passage as the store's row (cheaper for the one writer to unpickle);
    ``rows=True`` hands those on, else they are the serial read's ``Passage`` objects again."""
    from searchain.corpus.store import passage_row
    from searchain.types import Passage

    dump = make_dump(tmp_path / "wiki.xml.bz2", 40, random.Random(2))
    serial = list(MediaWikiSource(dump, "c", ProblemLog()).passages())
    got = list(parallel.parallel_passages(MediaWikiSource(dump, "c", ProblemLog()), 2, rows=True))
    assert got == [passage_row(p) for p in serial] and all(type(r) is tuple for r in got)
    again = list(parallel.parallel_passages(MediaWikiSource(dump, "c", ProblemLog()), 2))
    assert again == serial and all(type(p) is Passage and p.corpus == "c" for p in again)
    item = next(iter(MediaWikiSource(dump, "c", ProblemLog()).work_items()))[0]
    sent = parallel._parse_with(MediaWikiSource(dump, "c", ProblemLog()), item)[0]
    assert sent and all(type(r) is tuple and len(r) == 10 for r in sent)  # no objects on the wire


def test_a_serial_read_as_rows_is_closed_with_them():
    """Closing the ingest's stream (a cancel, a full disk) closes a serial read too: its file."""
    from searchain.corpus.ingest import _rows
    from searchain.types import Passage

    closed = []

    def read():
        try:
            for i in range(10):
                yield Passage("c", f"p{i}", "T", "text")
        finally:
            closed.append(True)

    inner = read()  # still referenced: only an explicit close ends it now
    stream = _rows(inner)
    assert next(stream) == ("p0", "T", "text", "", "", 0, 0, "", "", None)
    stream.close()
    assert closed == [True]
