"""The tantivy keyword index after a corpus update (#33 item 5): extended (deleted passages'
documents removed, new ones added, one commit), not rebuilt; the same hits as a fresh build; a
rebuild only when the index is missing, damaged, of another layout, or too much of it deleted."""

import json
import random

import pytest

from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from searchain.corpus.store import PassageStore
from searchain.corpus.update import update_corpus
from searchain.errors import Cancelled
from searchain.events import CancelToken
from searchain.index.bm25 import tantivy_index as tv
from searchain.index.bm25 import tantivy_update as tu
from searchain.types import Passage
from tests.index.test_bm25_tantivy import WORDS

RARE = [f"term{k}" for k in range(300)]  # beside WORDS, which nearly every passage holds
QUERIES = [["county", "term7"], ["term1", "term2", "bridge"], ["term3"], ["term10", "term11", "term12"],
           ["quokka"], ["river", "term4", "term5", "term6"]]


def passages(prefix, n, seed):
    rng = random.Random(seed)
    return [Passage("c", f"{prefix}{i}", rng.choice(["Alpha", "Beta", "Gamma"]),
                    " ".join(rng.choices(WORDS, k=rng.randint(3, 20)) +
                             rng.choices(RARE[:30], k=rng.randint(0, 8)) +
                             rng.choices(RARE, k=rng.randint(0, 6)))) for i in range(n)]


def hits(path, queries, k=1000):
    searcher = tv.TantivySearcher(path)
    return {tuple(q): searcher.scores(q, k, idf_power=1.0) for q in queries}


def same_hits(path, store, tmp_path, queries=QUERIES):
    """The index at ``path`` answers as a fresh build over the store's live passages: the same
    matches, strictly ordered pairs in the same order, scores within the drift of deleted
    documents still counted in tantivy's statistics (see tantivy_index's docstring)."""
    fresh = tmp_path / "fresh.tantivy"
    tv.build(store.conn, fresh)
    stamp = tv.read_stamp(path)
    # a bound: with tantivy's df (deleted documents counted) scores drifted by ~1.2 x the share
    # deleted since the full build; with the live df of an extended index (``_live_df``) ~0.7 x
    drift = 1.5 * stamp["deleted"] / stamp["passages"] + 0.01
    got, want = hits(path, queries), hits(fresh, queries)
    checked = 0
    for q in want:
        assert {i for i, _ in got[q]} == {i for i, _ in want[q]}, q
        by_id = dict(got[q])
        near = 0.03 * max((s for _, s in want[q]), default=0) + 1e-6  # near-zero IDFs drift more
        for i, score in want[q]:
            assert by_id[i] == pytest.approx(score, rel=drift, abs=near)
        ordered = want[q]
        pairs = bad = 0
        pos = {i: n for n, (i, _) in enumerate(got[q])}
        for a, (i, si) in enumerate(ordered):
            for j, sj in ordered[a + 1:]:
                if si - sj > 2 * drift * abs(si) + 2 * near:  # apart by more than the drift
                    pairs += 1
                    bad += pos[i] > pos[j]
        assert bad == 0, q
        checked += pairs
    assert checked > 20
    assert got[("quokka",)]  # the new passages are found


def no_rebuild(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("rebuilt")
    monkeypatch.setattr(tv, "build", refuse)


def test_an_update_extends_the_index_and_hits_equal_a_fresh_build(tmp_path, monkeypatch):
    store = PassageStore.open(tmp_path / "c" / "passages.db", create=True, corpus="c")
    store.add(passages("p", 400, 0))
    tv.ensure_current(store, 2.0, min_passages=0)
    path = tv.index_dir(store.path)
    store.delete([f"p{i}" for i in range(0, 400, 40)])  # 10 gone (changed or deleted articles)
    store.add(passages("q", 8, 1) + [Passage("c", "z", "Quokka", "a quokka of the island")])
    with monkeypatch.context() as m:
        no_rebuild(m)
        stamp = tv.ensure_current(store, 2.0, min_passages=0)
    assert stamp == {**tv.store_stamp(store.conn, 2.0), "built_with": 400, "deleted": 10}
    assert tv.is_current(path, store.conn, 2.0) and tv.TantivySearcher(path)._total == 399
    same_hits(path, store, tmp_path)
    # a second update counts its deletions on top of the first's
    store.delete(["p1", "q0"])
    with monkeypatch.context() as m:
        no_rebuild(m)
        assert tv.ensure_current(store, 2.0, min_passages=0)["deleted"] == 12
    same_hits(path, store, tmp_path)


def test_a_corpus_update_then_the_keyword_index_matches_a_fresh_build(home, tmp_path, monkeypatch):
    from tests.corpus.test_update import text_of, wiki

    manager = CorpusManager(home, Settings())
    old = {i: (f"Article {i}", f"'''Article {i}''' is about {text_of(1000 + i, 150)} tag{i % 7} "
               f"tag{i % 11} tag{i % 13} tag{i % 5}.") for i in range(1, 31)}
    manager.add("wiki", wiki(tmp_path / "dump-1.xml", old))
    with manager.open_store("wiki") as store:
        tv.ensure_current(store, 2.0, min_passages=0)
    new = dict(old)
    new[3] = ("Article 3", "'''Article 3''' was rewritten about a quokka on an island.")
    del new[5]
    new[40] = ("Article 40", "'''Article 40''' is new: a quokka crossed the river valley.")
    update_corpus(manager, "wiki", wiki(tmp_path / "dump-2.xml", new))
    with manager.open_store("wiki") as store:
        with monkeypatch.context() as m:
            no_rebuild(m)
            stamp = tv.ensure_current(store, 2.0, min_passages=0)
        assert stamp["deleted"] > 0 and tv.is_current(tv.index_dir(store.path), store.conn, 2.0)
        same_hits(tv.index_dir(store.path), store, tmp_path, [["tag1", "tag2"], ["tag3"], ["quokka"],
                  ["tag4", "mountain"], ["tag5", "tag6", "tag10"], ["tag0", "comet"]])


def test_a_replay_after_a_kill_between_commit_and_stamp_adds_no_twins(tmp_path):
    store = PassageStore.open(tmp_path / "c" / "passages.db", create=True, corpus="c")
    store.add(passages("p", 200, 0))
    tv.ensure_current(store, 2.0, min_passages=0)
    path = tv.index_dir(store.path)
    before = (path / tv.STAMP).read_text()
    store.delete(["p3"])
    store.add(passages("q", 5, 1))
    tv.ensure_current(store, 2.0, min_passages=0)
    (path / tv.STAMP).write_text(before)  # killed after tantivy's commit, before the stamp
    assert tv.ensure_current(store, 2.0, min_passages=0)["built_with"] == 200  # extended again
    assert tv.TantivySearcher(path)._total == store.count() == 204


def test_a_cancelled_extension_keeps_the_old_index(tmp_path, monkeypatch):
    store = PassageStore.open(tmp_path / "c" / "passages.db", create=True, corpus="c")
    store.add(passages("p", 200, 0))
    tv.ensure_current(store, 2.0, min_passages=0)
    path = tv.index_dir(store.path)
    old = tv.read_stamp(path)
    store.delete(["p3"])
    store.add(passages("q", 30, 1))
    monkeypatch.setattr(tu, "BUILD_BATCH", 10)
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        tv.ensure_current(store, 2.0, min_passages=0, cancel=token)
    assert tv.read_stamp(path) == old and tv.TantivySearcher(path)._total == 200
    assert tv.ensure_current(store, 2.0, min_passages=0)["deleted"] == 1


@pytest.mark.parametrize("why", ["damaged", "other weight", "too much deleted", "count"])
def test_a_rebuild_when_the_index_cannot_be_extended(tmp_path, why):
    store = PassageStore.open(tmp_path / "c" / "passages.db", create=True, corpus="c")
    store.add(passages("p", 200, 0))
    tv.ensure_current(store, 2.0, min_passages=0)
    path = tv.index_dir(store.path)
    store.add(passages("q", 3, 1))
    weight = 2.0
    if why == "damaged":
        (path / "meta.json").write_text("{ not json", encoding="utf-8")
    elif why == "other weight":
        weight = 3.0
    elif why == "too much deleted":
        store.delete([f"p{i}" for i in range(25)])  # over REBUILD_DELETED_SHARE of 200
        stamp = json.loads((path / tv.STAMP).read_text())
        (path / tv.STAMP).write_text(json.dumps({**stamp, "deleted": 0}))
        tv.ensure_current(store, weight, min_passages=0)  # extended: 25 deleted
        store.add(passages("r", 1, 2))
    elif why == "count":  # the stamp claims passages the index does not hold
        stamp = json.loads((path / tv.STAMP).read_text())
        (path / tv.STAMP).write_text(json.dumps({**stamp, "max_id": 203}))
    stamp = tv.ensure_current(store, weight, min_passages=0)
    assert "built_with" not in stamp  # a fresh build
    assert tv.TantivySearcher(path)._total == store.count()


def test_bench_keyword_update_extends_and_reports_both_ways(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    from searchain.cli.main import main

    assert main(["--home", str(tmp_path / "home"), "bench", "keyword-update", "--articles", "150",
                 "--changed-share", "0.05", "--queries", "30", "--work", str(tmp_path / "w")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["extended_not_rebuilt"] and out["articles_changed"] == 7
    assert out["extend"]["wall_s"] > 0 and out["rebuild"]["wall_s"] > 0
    assert out["queries"] > 0 and out["top10_overlap_mean"] > 0.8
