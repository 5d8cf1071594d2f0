"""The tantivy keyword index: same ranking as FTS5, used only while current, atomic builds,
clear errors for a damaged index."""

import json
import random
import shutil

import pytest

from searchain.corpus.store import PassageStore
from searchain.errors import Cancelled, IndexError_
from searchain.events import CancelToken
from searchain.index.bm25 import tantivy_index as tv
from searchain.index.bm25.fts5 import BM25Retriever
from searchain.index.passages import PassageSource
from searchain.types import Passage

WORDS = ("river valley county seat township island father born film team member located "
         "capital running runs ran bridge heron").split()
TITLES = ("alpha beta gamma delta epsilon zeta eta theta iota kappa").split()


def corpus(tmp_path, n=200, titled=True):
    rng = random.Random(0)
    store = PassageStore.open(tmp_path / "c" / "passages.db", create=True, corpus="c")
    # one-word titles that no query names, texts under tantivy's exact length encoding (40)
    store.add(Passage("c", f"p{i}", rng.choice(TITLES).title() if titled else "",
                      " ".join(rng.choices(WORDS, k=rng.randint(3, 30)))) for i in range(n))
    return store


def retriever(store, **kw):
    return BM25Retriever(PassageSource(store), title_weight=2.0, idf_power=1.0, **kw)


def concordant(reference, other):
    """Every pair FTS5 orders strictly (scores apart by more than rounding), ``other`` orders alike."""
    pos = {i: n for n, (i, _) in enumerate(other)}
    pairs = bad = 0
    for a, (i, si) in enumerate(reference):
        for j, sj in reference[a + 1:]:
            if si - sj > 1e-6 * abs(si):
                pairs += 1
                bad += pos[i] > pos[j]
    return pairs, bad


def test_single_term_rankings_equal_fts5(tmp_path):
    """Untitled passages: the same term frequencies and lengths, so the same order. (With
    titles the lengths differ by the repeated title, which may swap near-ties.)"""
    store = corpus(tmp_path, titled=False)
    r = retriever(store)
    before = {w: r.scores(w, 200) for w in ("county", "heron", "running", "bridge")}
    assert tv.ensure_current(store, 2.0, min_passages=0) is not None
    r = retriever(store)
    checked = 0
    for word, fts in before.items():
        got = r.scores(word, 200)
        assert r._tantivy is not None  # answered by tantivy
        assert {i for i, _ in got} == {i for i, _ in fts}  # same matches ("running" ~ "runs")
        pairs, bad = concordant(fts, got)
        assert bad == 0
        checked += pairs
    assert checked > 1000


def test_title_weight_ranks_the_named_article_first(tmp_path):
    store = corpus(tmp_path)
    store.add([Passage("c", "t", "Quokka", "an animal of the island with a bridge river"),
               Passage("c", "x", "Alpha", "an animal the quokka of the island with a bridge")])
    tv.ensure_current(store, 2.0, min_passages=0)
    r = retriever(store)
    assert [i for i, _ in r.scores("quokka island", 2)] == [store.id_of("t"), store.id_of("x")]
    assert r._tantivy is not None


def test_multi_term_top_results_agree_with_fts5(tmp_path):
    store = corpus(tmp_path)
    queries = ["county seat river", "heron island bridge", "film team member", "father born capital"]
    before = [retriever(store).scores(q, 5) for q in queries]
    tv.ensure_current(store, 2.0, min_passages=0)
    r = retriever(store)
    after = [r.scores(q, 5) for q in queries]
    assert r._tantivy is not None
    assert [a[0][0] for a in after] == [b[0][0] for b in before]
    # restrict_to scores only the ids given (hybrid fusion's use)
    some = [i for i, _ in before[0][1:4]]
    assert sorted(i for i, _ in r.scores(queries[0], 10, restrict_to=some)) == sorted(some)


def test_stale_index_is_not_used_and_corpus_index_rebuilds_it(tmp_path):
    store = corpus(tmp_path)
    tv.ensure_current(store, 2.0, min_passages=0)
    store.add([Passage("c", "new", "Quokka", "a quokka crossed the bridge")])
    r = retriever(store)
    assert [i for i, _ in r.scores("quokka", 5)] == [store.id_of("new")]  # FTS5 answered
    assert r._tantivy is None
    assert tv.ensure_current(store, 2.0, min_passages=0)["passages"] == 201
    assert tv.ensure_current(store, 2.0, min_passages=0) is None  # current: nothing to do
    r = retriever(store)
    assert [i for i, _ in r.scores("quokka", 5)] == [store.id_of("new")] and r._tantivy is not None
    # another title weight is another index: FTS5 answers until it is rebuilt
    assert retriever(store, text_weight=1.0)._tantivy_index(store) is not None
    other = BM25Retriever(PassageSource(store), title_weight=3.0)
    assert other._tantivy_index(store) is None


def test_small_corpora_get_no_index(tmp_path):
    store = corpus(tmp_path, n=20)
    assert tv.ensure_current(store, 2.0) is None
    assert not tv.index_dir(store.path).exists()


def test_killed_build_leaves_the_old_index(tmp_path, monkeypatch):
    store = corpus(tmp_path)
    tv.ensure_current(store, 2.0, min_passages=0)
    path = tv.index_dir(store.path)
    old_stamp = tv.read_stamp(path)
    store.add([Passage("c", "new", "Quokka", "a quokka")])
    monkeypatch.setattr(tv, "BUILD_BATCH", 50)

    def killed(done, total):
        if done >= 100:
            raise KeyboardInterrupt  # stands in for a kill mid-build

    with pytest.raises(KeyboardInterrupt):
        tv.build(store.conn, path, progress=killed)
    assert tv.read_stamp(path) == old_stamp  # the old index, whole
    assert path.with_name(path.name + ".tmp").exists()
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):  # `corpus index` cancelled: the same
        tv.ensure_current(store, 2.0, min_passages=0, cancel=token)
    assert tv.read_stamp(path) == old_stamp
    assert tv.ensure_current(store, 2.0, min_passages=0)["passages"] == 201
    assert not path.with_name(path.name + ".tmp").exists()  # the leftover is cleared


def test_damaged_index_gives_the_fix(tmp_path):
    store = corpus(tmp_path)
    tv.ensure_current(store, 2.0, min_passages=0)
    path = tv.index_dir(store.path)
    (path / "meta.json").write_text("{ not json", encoding="utf-8")
    with pytest.raises(IndexError_) as err:
        retriever(store).scores("county seat", 5)
    assert "damaged" in err.value.message and "searchain corpus index c" in err.value.hint
    assert tv.ensure_current(store, 2.0, min_passages=0) is not None  # rebuilt
    assert retriever(store).scores("county seat", 5)

    (path / tv.STAMP).write_text("garbage", encoding="utf-8")
    with pytest.raises(IndexError_) as err:
        retriever(store).scores("county seat", 5)
    assert "damaged" in err.value.message
    shutil.rmtree(path)
    assert retriever(store).scores("county seat", 5)  # no index: FTS5 answers


def test_stamp_records_the_build(tmp_path):
    store = corpus(tmp_path)
    stamp = tv.ensure_current(store, 2.0, min_passages=0)
    assert stamp == {"format": tv.FORMAT, "passages": 200, "max_id": 200, "title_repeat": 2}
    assert json.loads((tv.index_dir(store.path) / tv.STAMP).read_text()) == stamp


def test_status_names_a_missing_or_stale_keyword_index(tmp_path, monkeypatch):
    store = corpus(tmp_path)
    assert tv.index_problem(store.path, 200, 200) is None  # small: FTS5 is the index
    monkeypatch.setattr(tv, "TANTIVY_FROM_PASSAGES", 100)
    assert "no tantivy index yet" in tv.index_problem(store.path, 200, 200)
    tv.ensure_current(store, 2.0, min_passages=0)
    assert tv.index_problem(store.path, 200, 200) is None
    assert "behind the corpus" in tv.index_problem(store.path, 201, 201)
    (tv.index_dir(store.path) / tv.STAMP).write_text("{", encoding="utf-8")
    assert "damaged" in tv.index_problem(store.path, 200, 200)


def test_corpus_index_builds_the_keyword_index_and_status_asks_for_it(indexed_copy, embedder, monkeypatch):
    from searchain.config import Settings
    from searchain.corpus.manager import CorpusManager
    from searchain.index.build.builder import build_index
    from searchain.index.retrievers import open_retriever
    from searchain.index.status import READY, STALE, index_status
    from tests.fixtures.index import MINI_CORPUS

    monkeypatch.setattr(tv, "TANTIVY_FROM_PASSAGES", 1)  # the mini corpus counts as large
    status = index_status(indexed_copy, MINI_CORPUS)
    assert status.state == STALE and "no tantivy index yet" in status.message and status.usable
    build_index(indexed_copy, Settings(), MINI_CORPUS, embedder=embedder)
    assert index_status(indexed_copy, MINI_CORPUS).state == READY
    store_path = CorpusManager(indexed_copy, Settings()).corpus_dir(MINI_CORPUS) / "passages.db"
    assert tv.is_current(tv.index_dir(store_path), PassageStore.open(store_path).conn, 2.0)
    bm25 = open_retriever(indexed_copy, Settings(), MINI_CORPUS, "bm25")
    hits = bm25.search("planet gas giant", 3)
    assert hits and bm25._tantivy is not None
