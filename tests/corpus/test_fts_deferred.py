"""The keyword index a large ingest builds at its end (``corpus.fts_build``, #33): it answers as
the per-batch index does; a kill -9 mid-ingest, before the build, or during it resumes to an index
holding exactly the store's passages; updates and searches never use a half-built one.

The dumps here parse too slowly for deferring to pay (``worth_deferring``), so most tests lower
its threshold (``defer_always``; the child scripts too); the parquet tests use the real one."""

import random

import pytest

from searchain.bench.ingest.measure import make_dump
from searchain.config import Settings
from searchain.corpus import fts_build
from searchain.corpus.ingest import FTS_STAGE
from searchain.corpus.manager import CorpusManager
from searchain.corpus.store import PassageStore
from searchain.errors import IndexError_
from searchain.events import CancelToken, Progress
from searchain.index.bm25.fts5 import BM25Retriever
from searchain.index.passages import PassageSource
from searchain.types import Passage
from tests.corpus.test_parallel_ingest import cancel_once_passages_are_added, kill_ingest_after_first_commit

QUERIES = ["Page 7", "Page 123", "Page 299 page"]
ALWAYS = "fts_build.DEFER_FROM_PASSAGES_PER_S = 0\n"


@pytest.fixture
def defer_always(monkeypatch):
    monkeypatch.setattr(fts_build, "DEFER_FROM_PASSAGES_PER_S", 0)


def hits(manager, name, queries=QUERIES, k=10):
    store = manager.open_store(name)
    retriever = BM25Retriever(PassageSource(store), use_tantivy=False)
    try:
        return {q: [(store.passages_by_id([i])[i].pid, round(s, 9)) for i, s in retriever.scores(q, k)]
                for q in queries}
    finally:
        store.close()


def fts_state(manager, name):
    with manager.open_store(name) as store:
        return store.meta_get(fts_build.META_KEY), fts_build.pending(store.conn), store.fts_integrity_ok()


def test_deferring_pays_when_the_workers_parse_faster_than_a_per_batch_writer(tmp_path):
    from searchain.bench.ingest.multistream import to_multistream
    from searchain.corpus.problems import ProblemLog
    from searchain.corpus.sources import open_source
    from tests.fixtures.parquet import filler, write_parquet
    from tests.fixtures.zim import write_zim

    def source(path, fmt):
        return open_source(path, fmt, "c", ProblemLog(), None)
    hub = source(write_parquet(tmp_path / "a.parquet", filler(3)), "parquet")
    single = source(make_dump(tmp_path / "w.xml.bz2", 5, random.Random(1)), "mediawiki")
    multi = source(to_multistream(tmp_path / "w.xml.bz2", tmp_path / "m-multistream.xml.bz2")[0],
                   "mediawiki")
    def defers(src, workers, capacity=16.0):  # a 16-core machine unless said
        return fts_build.worth_deferring(src, workers, capacity)

    assert defers(hub, 2) and not defers(hub, 1)
    assert not defers(single, 16)  # the parent decompresses: ~2 workers' worth
    assert not defers(multi, 7) and defers(multi, 8)
    zim = source(write_zim(tmp_path / "w.zim"), "zim")
    assert not defers(zim, 7) and defers(zim, 8)
    # Workers beyond the machine's cores parse no faster: 8 on 4 cores with 2 threads each
    # (capacity 4.6) parse a dump at ~4.6 cores' rate, too slowly to outrun a per-batch writer.
    assert not defers(multi, 8, capacity=4.6) and not defers(zim, 16, capacity=4.6)
    assert defers(hub, 2, capacity=1.15)  # parquet parses fast enough on one core and a thread


def test_an_ingest_with_workers_builds_the_index_at_its_end_and_answers_as_per_batch(home, tmp_path,
                                                                                    defer_always):
    dump = make_dump(tmp_path / "wiki.xml.bz2", 300, random.Random(0))  # 1,500 passages
    manager = CorpusManager(home, Settings())
    events = []
    manager.add("deferred", dump, workers=3, on_event=events.append)
    manager.add("per-batch", dump, workers=1)
    assert fts_state(manager, "deferred") == ({"state": "complete"}, 0, True)
    assert fts_state(manager, "per-batch") == (None, 0, True)  # small ingests index each batch
    built = [e for e in events if isinstance(e, Progress) and e.stage == FTS_STAGE]
    assert built and built[-1].done == built[-1].total == 1500
    with manager.open_store("per-batch") as store:  # and two words of the text
        words = store.passages_by_id([700])[700].text.split()[-3:-1]
    queries = QUERIES + words + [" ".join(words)]
    found = hits(manager, "deferred", queries)
    assert found == hits(manager, "per-batch", queries) and all(found.values())
    assert found["Page 299 page"][0][0] == "300#0"  # its title (page id 300), weighted


def passages(n, start=0):
    return [Passage("c", f"p{i}", f"Title {i}", f"text number{i} shared words") for i in range(start, start + n)]


def test_a_build_stopped_between_ranges_goes_on_from_the_range_it_reached(tmp_path, monkeypatch):
    monkeypatch.setattr(fts_build, "CHUNK", 40)
    with PassageStore.open(tmp_path / "a" / "passages.db", create=True) as store:
        store.add(passages(30))  # indexed per batch
        store.defer_fts()
        store.add(passages(100, start=30), batch_size=25)
        assert store.meta_get("fts") == {"state": "deferred", "indexed_to": 30}
        assert fts_build.pending(store.conn) == 100 and not store.fts_integrity_ok()
        ranges = []

        def stop_after_two():
            ranges.append(1)
            if len(ranges) == 3:
                raise KeyboardInterrupt  # as a kill between two transactions
        with pytest.raises(KeyboardInterrupt):
            store.finish_fts(check=stop_after_two)
        assert store.meta_get("fts") == {"state": "deferred", "indexed_to": 110} and fts_build.pending(store.conn) == 20
        store.add(passages(5, start=130))  # still deferred: above X, left for the build
        assert fts_build.pending(store.conn) == 25
        assert store.finish_fts() == 25 and store.fts_integrity_ok()
        assert store.conn.execute("SELECT count(*) FROM passages_fts WHERE passages_fts MATCH 'shared'"
                                  ).fetchone()[0] == 135
        store.add(passages(2, start=135))  # complete again: per batch
        assert fts_build.pending(store.conn) == 0 and store.fts_integrity_ok()


def fts_count(store, term="shared"):
    return store.conn.execute("SELECT count(*) FROM passages_fts WHERE passages_fts MATCH ?",
                              (term,)).fetchone()[0]


def test_deletes_and_updates_of_a_deferred_store_leave_the_index_true_without_building_it(tmp_path):
    """The triggers act only on the passages the index holds (id <= X): deleting or changing one
    above X must not touch FTS5 (a 'delete' of a row it never indexed damages it), one at or
    below X must; the index stays deferred, and once built it matches the passages exactly."""
    with PassageStore.open(tmp_path / "a" / "passages.db", create=True) as store:
        store.add(passages(6))  # ids 1-6, indexed
        store.defer_fts()  # X = 6
        store.add(passages(6, start=6))  # ids 7-12, not indexed
        assert fts_count(store) == 6
        assert store.delete(["p3", "p8"]) == 2  # one on each side of X
        assert store.meta_get("fts") == {"state": "deferred", "indexed_to": 6}
        assert fts_count(store) == 5 and fts_build.pending(store.conn) == 5
        with store.conn:  # an update on each side of X
            store.conn.execute("UPDATE passages SET text = 'changed words' WHERE pid IN ('p1', 'p10')")
        assert fts_count(store) == 4 and fts_count(store, "changed") == 1
        assert store.finish_fts() == 6 and store.fts_integrity_ok()
        assert fts_count(store) == 8 and fts_count(store, "changed") == 2


def test_an_older_store_gets_the_guarded_triggers(tmp_path):
    """A version-2 store (unguarded triggers) is migrated: a delete above X then leaves FTS5 as
    it was, where the old trigger would have damaged it."""
    import sqlite3

    from searchain.corpus import store_schema

    db = tmp_path / "a" / "passages.db"
    with PassageStore.open(db, create=True) as store:
        store.add(passages(4))
    conn = sqlite3.connect(db)
    conn.executescript("""
        DROP TRIGGER passages_ad;
        CREATE TRIGGER passages_ad AFTER DELETE ON passages BEGIN
            INSERT INTO passages_fts(passages_fts, rowid, title, text)
                VALUES ('delete', old.id, old.title, old.text);
        END;
        PRAGMA user_version = 2;""")
    conn.close()
    with PassageStore.open(db) as store:
        assert store.version == store_schema.SCHEMA_VERSION == 3
        sql = store.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'passages_ad'").fetchone()[0]
        assert "WHEN old.id <=" in sql
        store.defer_fts()
        store.add(passages(3, start=4))
        store.delete(["p5"])
        assert store.finish_fts() == 3 and store.fts_integrity_ok() and fts_count(store) == 6


KILL_BEFORE_BUILD = """
    import sys, time
    from searchain.config import AppPaths, Settings
    from searchain.corpus import fts_build
    from searchain.corpus.manager import CorpusManager
    build = fts_build.build
    def stop(conn, **kwargs):
        print("COMMITTED", flush=True)  # every passage stored, none of them indexed
        time.sleep(600)
    fts_build.build = stop
    fts_build.DEFER_FROM_PASSAGES_PER_S = 0
    CorpusManager(AppPaths.resolve(sys.argv[1]), Settings()).add("wiki", sys.argv[2], workers=3)
"""

KILL_DURING_BUILD = """
    import sys, time
    from searchain.config import AppPaths, Settings
    from searchain.corpus import fts_build
    from searchain.corpus.ingest import FTS_STAGE
    from searchain.corpus.manager import CorpusManager
    from searchain.events import Progress
    fts_build.CHUNK = 400
    fts_build.DEFER_FROM_PASSAGES_PER_S = 0
    def on_event(e):
        if isinstance(e, Progress) and e.stage == FTS_STAGE and e.done:
            print("COMMITTED", flush=True)  # one range of the index built and committed
            time.sleep(600)
    CorpusManager(AppPaths.resolve(sys.argv[1]), Settings()).add("wiki", sys.argv[2], workers=3,
                                                                  on_event=on_event)
"""


@pytest.mark.parametrize("script, indexed", [(KILL_BEFORE_BUILD, 0), (KILL_DURING_BUILD, 400)],
                         ids=["before the build", "during the build"])
def test_a_kill_around_the_build_resumes_to_the_whole_index(home, tmp_path, script, indexed,
                                                            defer_always):
    dump = make_dump(tmp_path / "wiki.xml.bz2", 300, random.Random(0))
    kill_ingest_after_first_commit(script, home, dump)
    manager = CorpusManager(home, Settings())
    assert manager.info("wiki").state == "incomplete" and manager.info("wiki").passages == 1500
    state, pending, ok = fts_state(manager, "wiki")
    assert state == {"state": "deferred", "indexed_to": indexed} and pending == 1500 - indexed and not ok
    assert manager.add("wiki", dump, workers=3).added == 0  # the same add finishes it
    assert fts_state(manager, "wiki") == ({"state": "complete"}, 0, True)
    assert manager.info("wiki").state == "ready"
    manager.add("whole", dump, workers=1)
    assert hits(manager, "wiki") == hits(manager, "whole")


def test_a_kill_mid_ingest_resumes_and_a_search_before_that_builds_what_was_stored(home, tmp_path,
                                                                                   defer_always):
    from tests.corpus.test_parallel_ingest import KILL_CHILD

    dump = make_dump(tmp_path / "wiki.xml.bz2", 300, random.Random(0))
    script = KILL_CHILD.replace("from searchain.events import Progress\n",
                                "from searchain.events import Progress\n"
                                "    from searchain.corpus import fts_build\n    " + ALWAYS)
    assert ALWAYS in script
    kill_ingest_after_first_commit(script, home, dump)
    manager = CorpusManager(home, Settings())
    stored = manager.info("wiki").passages
    assert 0 < stored < 1500 and fts_state(manager, "wiki")[1] == stored
    # a search now (nobody holds the corpus) builds the index for what is stored, then answers
    first = hits(manager, "wiki", ["Page 0"])["Page 0"]
    assert first and first[0][0] == "1#0"
    assert fts_state(manager, "wiki") == ({"state": "complete"}, 0, True)
    manager.add("wiki", dump, workers=3)  # the rest, deferred again and built at the end
    assert fts_state(manager, "wiki") == ({"state": "complete"}, 0, True)
    manager.add("whole", dump, workers=1)
    assert hits(manager, "wiki") == hits(manager, "whole")


def test_a_search_while_the_ingest_holds_the_corpus_says_the_index_is_being_built(home, tmp_path):
    from searchain.corpus.lock import CorpusLock

    manager = CorpusManager(home, Settings())
    manager.add("w", make_dump(tmp_path / "w.xml.bz2", 10, random.Random(1)), workers=1)
    with manager.open_store("w") as store:
        store.defer_fts()
        store.add(passages(3))
    with CorpusLock(manager.corpus_dir("w")).acquire("w"):  # as an ingest running elsewhere
        with pytest.raises(IndexError_) as err:
            hits(manager, "w", ["number1"])
    assert "being built (by its ingest" in err.value.message
    assert hits(manager, "w", ["number1"])["number1"][0][0] == "p1"  # released: built, answered


def test_a_cancelled_ingest_leaves_the_index_to_the_next_add(home, tmp_path, defer_always):
    from searchain.events import Cancelled

    dump = make_dump(tmp_path / "wiki.xml.bz2", 300, random.Random(0))
    cancel = CancelToken()
    manager = CorpusManager(home, Settings())
    with pytest.raises(Cancelled):
        manager.add("w", dump, workers=3, on_event=cancel_once_passages_are_added(cancel), cancel=cancel)
    assert fts_state(manager, "w")[1] > 0  # stored, not indexed: a cancel stays prompt
    manager.add("w", dump, workers=1)  # per batch this time, and the rest built at its end
    assert fts_state(manager, "w") == ({"state": "complete"}, 0, True)


def test_an_update_of_a_corpus_ingested_with_workers_keeps_the_index_right(home, tmp_path):
    from searchain.corpus.update import update_corpus
    from tests.corpus.test_update_parallel import long_articles
    from tests.fixtures.parquet import write_parquet

    old = write_parquet(tmp_path / "s1" / "a.parquet", long_articles(24), row_group_size=4)
    new_rows = long_articles(24, changed={2, 9})
    gone = new_rows.pop(5)
    new = write_parquet(tmp_path / "s2" / "a.parquet", new_rows, row_group_size=4)
    manager = CorpusManager(home, Settings())
    manager.add("w", old, workers=3)
    assert fts_state(manager, "w") == ({"state": "complete"}, 0, True)
    with manager.open_store("w") as store:  # as if killed before its build: the update goes on
        fts_build._set(store.conn, {"state": "deferred", "indexed_to": 0})  # without building it
        store.conn.execute("INSERT INTO passages_fts(passages_fts) VALUES ('delete-all')")
        store.conn.commit()
    report = update_corpus(manager, "w", new, workers=2).to_dict()
    assert (report["changed"], report["removed"]) == (2, 1)
    with manager.open_store("w") as store:
        passages = store.count()
    assert fts_state(manager, "w") == ({"state": "deferred", "indexed_to": 0}, passages, False)
    found = hits(manager, "w", ["fast", gone["title"]])  # the search builds it first
    assert fts_state(manager, "w") == ({"state": "complete"}, 0, True)
    assert {pid.split("#")[0] for pid, _ in found["fast"]} == {"1002", "1009"}  # the changed two
    assert found[gone["title"]] and not any(pid.startswith(f"{gone['id']}#") for pid, _ in found[gone["title"]])


def test_an_export_of_a_corpus_left_deferred_builds_its_index_first(home, tmp_path):
    from searchain.library.bundle_export import export_corpus
    from searchain.library.bundle_import import import_corpus

    manager = CorpusManager(home, Settings())
    manager.add("w", make_dump(tmp_path / "w.xml.bz2", 10, random.Random(1)), workers=1)
    with manager.open_store("w") as store:  # as a killed ingest with workers leaves it
        store.defer_fts()
        store.add(passages(3))
    file = tmp_path / "w.searchain-corpus"
    export_corpus(home, Settings(), "w", file)
    assert fts_state(manager, "w") == ({"state": "complete"}, 0, True)
    import_corpus(home, Settings(), file, as_name="copy")
    assert fts_state(manager, "copy") == ({"state": "complete"}, 0, True)
    assert hits(manager, "copy", ["number2"])["number2"][0][0] == "p2"


def test_a_rebuild_with_workers_defers_into_its_fresh_store_and_keeps_the_ids(home, tmp_path):
    from tests.corpus.test_update_parallel import long_articles
    from tests.fixtures.parquet import write_parquet

    settings = Settings()
    settings.corpus.ingest_workers = 2  # parquet on 2 workers: deferred (the real threshold)
    manager = CorpusManager(home, settings)
    source = write_parquet(tmp_path / "a.parquet", long_articles(12), row_group_size=3)
    manager.add("w", source)
    with manager.open_store("w") as store:
        before = store.conn.execute("SELECT id, pid FROM passages ORDER BY id").fetchall()
    events = []
    manager.rebuild("w", on_event=events.append)
    assert any(isinstance(e, Progress) and e.stage == FTS_STAGE for e in events)
    with manager.open_store("w") as store:
        assert store.conn.execute("SELECT id, pid FROM passages ORDER BY id").fetchall() == before
    assert fts_state(manager, "w") == ({"state": "complete"}, 0, True)
    assert hits(manager, "w", ["slowly"])["slowly"]


def _left_unbuilt(home, tmp_path, n=7):
    """Corpus 'w' as a stopped large ingest leaves it: n passages stored above the index."""
    manager = CorpusManager(home, Settings())
    manager.add("w", make_dump(tmp_path / "w.xml.bz2", 10, random.Random(1)), workers=1)
    with manager.open_store("w") as store:
        store.defer_fts()
        store.add(passages(n))
    return manager


def _bm25_workspace(home):
    from searchain.workspace import Workspace

    settings = Settings()
    settings.retrieval.retriever = "bm25"
    return Workspace(home, settings)


def test_opening_the_retriever_finishes_a_left_index_with_an_estimate_and_progress(home, tmp_path):
    manager = _left_unbuilt(home, tmp_path)
    events = []
    retriever = _bm25_workspace(home).retriever("w", on_event=events.append)
    finishing = [e for e in events if isinstance(e, Progress) and e.stage == fts_build.FINISH_STAGE]
    # said before it starts: what is left and about how long; then how far it is
    assert finishing[0].done == 0 and finishing[0].total == 7
    assert "7 passages, about" in finishing[0].message and "'w'" in finishing[0].message
    assert finishing[-1].done == finishing[-1].total == 7
    assert fts_state(manager, "w") == ({"state": "complete"}, 0, True)
    assert retriever.search("number3", k=1)[0].passage.pid == "p3"


def test_a_cancelled_finish_keeps_what_it_indexed_and_the_next_open_goes_on(home, tmp_path, monkeypatch):
    from searchain.events import Cancelled

    monkeypatch.setattr(fts_build, "CHUNK", 2)
    manager = _left_unbuilt(home, tmp_path)
    cancel = CancelToken()

    def cancel_after_the_first_range(event):
        if isinstance(event, Progress) and event.stage == fts_build.FINISH_STAGE and event.done:
            cancel.cancel()
    with pytest.raises(Cancelled):
        _bm25_workspace(home).retriever("w", on_event=cancel_after_the_first_range, cancel=cancel)
    state, left, _ = fts_state(manager, "w")
    assert state["state"] == "deferred" and 0 < left < 7  # one range indexed, and kept
    _bm25_workspace(home).retriever("w")
    assert fts_state(manager, "w") == ({"state": "complete"}, 0, True)


def test_the_search_command_finishes_a_left_index_and_says_so(home, tmp_path, capsys):
    from searchain.cli.main import main

    manager = _left_unbuilt(home, tmp_path)
    assert main(["--home", str(home.config_dir.parent), "search", "w", "number3", "--retriever", "bm25", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "finishing the keyword index a stopped ingest of 'w' left: 7 passages" in err
    assert '"p3"' in out and fts_state(manager, "w") == ({"state": "complete"}, 0, True)


def _watch(workers, rate, batches, capacity=16.0):
    """Feed ``WriterWatch`` (passages, waited s, wrote s) batches on a machine of ``capacity``
    cores' worth; the verdicts it gave."""
    watch = fts_build.WriterWatch(workers, rate, capacity)
    return [watch.observe(*b) for b in batches], watch


def test_the_writer_watch_defers_where_the_16_vcpu_machine_was_writer_bound():
    # BENCHMARKS.md "Ingest on 16 vCPUs": a per-batch writer stored ~13,900 passages/s, busy
    # ~96 % of the time; 8 workers declare 8 x 3,380 = 27,040/s (> 1.53 x 13,900): defer.
    start = [(500, 0.5, 0.036)] * fts_build.WATCH_SKIP_BATCHES  # the workers' start: not timed
    busy = [(500, 0.0015, 500 / 13_900)] * 20
    verdicts, _ = _watch(8, 3_380, start + busy)
    assert verdicts == [False] * 21 + [True]  # once, after the 10,000 timed passages
    # 4 workers there (13,520/s declared) kept per-batch indexing, rightly (16.9 s against ~20)
    assert not any(_watch(4, 3_380, start + busy)[0])
    # 8 workers on a machine of 4.6 cores' worth parse at most ~15,500/s: per batch keeps up
    assert not any(_watch(8, 3_380, start + busy, capacity=4.6)[0])
    # a writer that waits for its passages keeps up whatever the workers declare
    idle = [(500, 0.05, 500 / 13_900)] * 20
    assert not any(_watch(16, 3_380, start + idle)[0])


def test_the_writer_watch_stays_out_of_one_process_and_of_undeclared_sources():
    fast = [(500, 0.0, 0.05)] * 40
    assert not any(_watch(1, 32_000, fast)[0])  # one process: nothing to overlap with
    assert not any(_watch(8, 0, fast)[0])  # a source with no measured parse rate
    verdicts, watch = _watch(8, 32_000, fast + fast)
    assert verdicts.count(True) == 1 and watch.decided  # it decides once


def test_an_ingest_deferred_mid_way_answers_as_per_batch(home, tmp_path, monkeypatch):
    """The watch defers after a few batches: the index is complete up to there, the rest is built
    at the end, and every search answers as a per-batch ingest's."""
    class DeferAtSecondBatch(fts_build.WriterWatch):
        def observe(self, passages, waited, wrote):
            self.batches += 1
            return self.batches == 2

    seen = []
    real_defer = PassageStore.defer_fts

    def defer(store):
        seen.append(store.count())  # passages stored when the switch came
        real_defer(store)
    monkeypatch.setattr(fts_build, "WriterWatch", DeferAtSecondBatch)
    monkeypatch.setattr(PassageStore, "defer_fts", defer)
    dump = make_dump(tmp_path / "wiki.xml.bz2", 300, random.Random(0))  # 1,500 passages
    manager = CorpusManager(home, Settings())
    events = []
    manager.add("switched", dump, workers=2, on_event=events.append)  # batches of 500
    monkeypatch.setattr(PassageStore, "defer_fts", real_defer)
    manager.add("per-batch", dump, workers=1)
    assert seen == [1000]  # after the second batch: 500 passages left for the build
    assert any(isinstance(e, Progress) and e.stage == FTS_STAGE for e in events)  # built at the end
    state, pending, ok = fts_state(manager, "switched")
    assert state == {"state": fts_build.COMPLETE} and pending == 0 and ok
    assert hits(manager, "switched") == hits(manager, "per-batch")
