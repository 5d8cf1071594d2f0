"""A large ingest leaves FTS5 unbuilt where tantivy serves keyword search (#33): tantivy is built
before the first search instead, and the corpus answers exactly as one ingested batch by batch
whose tantivy index the index stage built. The size threshold is lowered here (the dumps hold
~1,500 passages), the writer made to defer as a many-core machine's would."""

import json
import random

import pytest

from searchain.bench.ingest.measure import make_dump
from searchain.config import Settings
from searchain.corpus import fts_build
from searchain.corpus.ingest import FTS_STAGE, LEFT_TO_TANTIVY
from searchain.corpus.manager import CorpusManager
from searchain.events import Progress
from searchain.index.bm25 import tantivy_index as tv
from searchain.index.bm25.fts5 import BM25Retriever
from searchain.index.passages import PassageSource
from searchain.index.retrievers import finish_keyword_indexes

QUERIES = ["Page 7", "Page 123 page", "Page 299"]


@pytest.fixture
def large_from_1000(monkeypatch):
    monkeypatch.setattr(fts_build, "TANTIVY_SERVES_FROM", 1000)
    monkeypatch.setattr(tv, "TANTIVY_FROM_PASSAGES", 1000)
    monkeypatch.setattr(fts_build, "DEFER_FROM_PASSAGES_PER_S", 0)  # the writer defers


@pytest.fixture
def dump(tmp_path):
    return make_dump(tmp_path / "wiki.xml.bz2", 300, random.Random(0))  # 1,500 passages


def fts_rows(manager, name):
    with manager.open_store(name) as store:
        return (store.meta_get(fts_build.META_KEY), fts_build.pending(store.conn),
                store.conn.execute("SELECT count(*) FROM passages_fts_docsize").fetchone()[0])


def hits(manager, name, title_weight=2.0, queries=QUERIES):
    """Each query's top 10 above the 10th's score (which of the passages tied at the cut make
    it follows tantivy's segments, made by several threads: ``tantivy_index``)."""
    store = manager.open_store(name)
    retriever = BM25Retriever(PassageSource(store), title_weight=title_weight)
    try:
        found = {}
        for q in queries:
            scored = retriever.scores(q, 10)
            cut = scored[-1][1] if len(scored) == 10 else float("-inf")
            found[q] = [(store.passages_by_id([i])[i].pid, round(s, 6)) for i, s in scored if s > cut]
        return found, retriever._tantivy is not None
    finally:
        store.close()


def test_a_large_ingest_leaves_fts5_to_tantivy_and_answers_as_a_per_batch_one(home, dump, large_from_1000):
    manager = CorpusManager(home, Settings())
    events = []
    manager.add("left", dump, workers=3, on_event=events.append)
    manager.add("per-batch", dump, workers=1)
    assert fts_rows(manager, "left") == ({"state": "deferred", "indexed_to": 0}, 1500, 0)
    assert fts_rows(manager, "per-batch") == (None, 0, 1500)
    said = [e.message for e in events if isinstance(e, Progress) and e.stage == FTS_STAGE]
    assert said == [LEFT_TO_TANTIVY]  # no FTS5 build, and the ingest says why
    with manager.open_store("per-batch") as store:  # as the index stage builds it
        tv.ensure_current(store, 2.0)

    before = []
    finish_keyword_indexes(home, Settings(), ["left"], on_event=before.append)
    built = [e for e in before if isinstance(e, Progress) and e.stage == fts_build.FINISH_STAGE]
    assert built[0].total == 1500 and "tantivy" in built[0].message and built[-1].done == 1500
    assert fts_rows(manager, "left")[2] == 0  # FTS5 stays unbuilt: tantivy serves
    found, on_tantivy = hits(manager, "left")
    assert on_tantivy and all(found.values())
    assert found == hits(manager, "per-batch")[0]


def test_a_search_of_a_store_opened_otherwise_builds_tantivy_itself(home, dump, large_from_1000):
    manager = CorpusManager(home, Settings())
    manager.add("left", dump, workers=3)
    found, on_tantivy = hits(manager, "left")
    assert on_tantivy and all(found.values()) and fts_rows(manager, "left")[2] == 0


def test_a_title_weight_tantivy_cannot_express_builds_fts5_instead(home, dump, large_from_1000):
    manager = CorpusManager(home, Settings())
    manager.add("left", dump, workers=3)
    manager.add("per-batch", dump, workers=1)
    found, on_tantivy = hits(manager, "left", title_weight=1.5)
    assert not on_tantivy and fts_rows(manager, "left") == ({"state": "complete"}, 0, 1500)
    assert found == hits(manager, "per-batch", title_weight=1.5)[0] and all(found.values())


def test_an_update_keeps_fts5_unbuilt_and_tantivy_extended(home, tmp_path, large_from_1000):
    from searchain.corpus.update import update_corpus
    from tests.corpus.test_update_parallel import long_articles
    from tests.fixtures.parquet import write_parquet

    old = write_parquet(tmp_path / "s1" / "a.parquet", long_articles(260), row_group_size=40)
    new_rows = long_articles(260, changed={2, 9})
    gone = new_rows.pop(5)
    new = write_parquet(tmp_path / "s2" / "a.parquet", new_rows, row_group_size=40)
    manager = CorpusManager(home, Settings())
    manager.add("w", old, workers=2)
    with manager.open_store("w") as store:
        passages = store.count()
        assert passages >= 1000 and fts_build.left_to_tantivy(store.conn)
    finish_keyword_indexes(home, Settings(), ["w"])
    report = update_corpus(manager, "w", new, workers=2).to_dict()
    assert (report["changed"], report["removed"]) == (2, 1)
    state, pending, indexed = fts_rows(manager, "w")
    assert state == {"state": "deferred", "indexed_to": 0} and indexed == 0
    found, on_tantivy = hits(manager, "w", queries=["fast", gone["title"]])
    assert on_tantivy and fts_rows(manager, "w")[2] == 0
    assert {pid.split("#")[0] for pid, _ in found["fast"]} == {"1002", "1009"}  # the changed two
    assert not any(pid.startswith(f"{gone['id']}#") for pid, _ in found[gone["title"]])


def test_a_bundle_carries_tantivy_and_leaves_fts5_unbuilt(home, tmp_path, dump, large_from_1000):
    from searchain.library.bundle_export import export_corpus
    from searchain.library.bundle_import import import_corpus

    manager = CorpusManager(home, Settings())
    manager.add("w", dump, workers=3)
    export_corpus(home, Settings(), "w", tmp_path / "w.searchain-corpus")
    assert fts_rows(manager, "w")[2] == 0  # the export built tantivy, not FTS5
    import_corpus(home, Settings(), tmp_path / "w.searchain-corpus", as_name="copy")
    assert fts_rows(manager, "copy") == ({"state": "deferred", "indexed_to": 0}, 1500, 0)
    found, on_tantivy = hits(manager, "copy")
    assert on_tantivy and found == hits(manager, "w")[0] and all(found.values())


def test_bench_keyword_left_times_both_ways_on_the_same_source(tmp_path, capsys, large_from_1000):
    pytest.importorskip("pyarrow")
    from searchain.cli.main import main

    assert main(["--home", str(tmp_path / "home"), "bench", "keyword-left", "--articles", "400",
                 "--workers", "2", "--work", str(tmp_path / "w")]) == 0
    out = json.loads(capsys.readouterr().out)
    before, today = out["variants"]["before"], out["variants"]["today"]
    assert before["passages"] == today["passages"] >= 1000
    assert not before["fts5_left_unbuilt"] and today["fts5_left_unbuilt"]
    assert before["fts5_build_s"] > 0 and before["tantivy_build_s"] > 0 and today["tantivy_build_s"] > 0
    assert today["store_bytes"] < before["store_bytes"]  # no FTS5 tables' pages
    assert out["disk_before_over_today"] > 1 and out["to_keyword_search_before_over_today"] > 0
    assert fts_build.TANTIVY_SERVES_FROM == 1000  # the bench's switch is put back


@pytest.mark.parametrize("lock_name", ["write", "build"])
def test_a_search_while_an_ingest_or_index_build_holds_the_corpus_says_so(home, dump, large_from_1000,
                                                                          lock_name):
    """An index build builds tantivy first, into the same folder: a search must not start a second
    build beside it (nor beside an ingest); it says why, and builds once the corpus is free."""
    from searchain.corpus.lock import BUILD_LOCK_NAME, LOCK_NAME, CorpusLock
    from searchain.errors import IndexError_

    manager = CorpusManager(home, Settings())
    manager.add("left", dump, workers=3)
    held = CorpusLock(manager.corpus_dir("left"), LOCK_NAME if lock_name == "write" else BUILD_LOCK_NAME)
    assert held.try_acquire()
    try:
        with pytest.raises(IndexError_, match="is being built"):
            hits(manager, "left")
        assert not tv.index_dir(manager.corpus_dir("left") / "passages.db").exists()
    finally:
        held.release()
    found, on_tantivy = hits(manager, "left")
    assert on_tantivy and all(found.values())


KILL_DURING_TANTIVY = """
    import os, signal, sys
    from searchain.config import AppPaths, Settings
    from searchain.corpus import fts_build
    from searchain.corpus.manager import CorpusManager
    from searchain.index.bm25 import tantivy_index as tv
    from searchain.index.retrievers import finish_keyword_indexes
    fts_build.TANTIVY_SERVES_FROM = tv.TANTIVY_FROM_PASSAGES = 1000
    fts_build.DEFER_FROM_PASSAGES_PER_S = 0
    home = AppPaths.resolve(sys.argv[1])
    CorpusManager(home, Settings()).add("left", DUMP, workers=3)
    def on_event(e):
        if getattr(e, "stage", "") == fts_build.FINISH_STAGE and e.done:
            os.kill(os.getpid(), signal.SIGKILL)  # documents added, nothing committed or renamed
    finish_keyword_indexes(home, Settings(), ["left"], on_event=on_event)
"""


def test_a_kill_during_the_tantivy_build_before_the_first_search_is_built_again(home, dump,
                                                                                large_from_1000):
    from tests.faults.test_kill_and_resume import run_child

    run_child(KILL_DURING_TANTIVY.replace("DUMP", repr(str(dump))), home)
    manager = CorpusManager(home, Settings())
    index = tv.index_dir(manager.corpus_dir("left") / "passages.db")
    assert not index.exists() and index.with_name(index.name + ".tmp").exists()  # half a build
    assert fts_rows(manager, "left") == ({"state": "deferred", "indexed_to": 0}, 1500, 0)
    found, on_tantivy = hits(manager, "left")  # built again, whole, before the search
    assert on_tantivy and all(found.values()) and not index.with_name(index.name + ".tmp").exists()
