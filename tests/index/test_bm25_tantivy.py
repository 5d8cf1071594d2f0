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


def test_a_build_on_several_threads_answers_as_one_thread_does(tmp_path):
    """Each indexing thread writes its own segment; the statistics are the index's, so every
    score is the same, and equal scores come in id order whatever segment holds them."""
    store = corpus(tmp_path, n=600)
    one, three = tmp_path / "one", tmp_path / "three"
    tv.build(store.conn, one, threads=1)
    tv.build(store.conn, three, threads=3)
    a, b = tv.TantivySearcher(one), tv.TantivySearcher(three)
    assert b._searcher.num_segments > 1  # the threads did share the passages out
    ties = 0
    for words in (["county"], ["heron", "bridge"], ["river", "born", "film"], ["running"]):
        want, got = a.scores(words, 600, idf_power=1.0), b.scores(words, 600, idf_power=1.0)
        assert got == want and len(got) > 50  # every match: no cut to fall between ties
        for (i, s), (j, t) in zip(got, got[1:]):
            assert s > t or (s == t and i < j)
            ties += s == t
        top = b.scores(words, 10, idf_power=1.0)
        cut = top[-1][1]
        assert [h for h in top if h[1] > cut] == [h for h in want if h[1] > cut]
    assert ties > 100  # lengths are stored coarsely: plenty of equal scores to order


def test_the_writer_takes_a_thread_per_cpu_up_to_its_cap():
    from searchain.index.bm25.tantivy_schema import MAX_WRITER_THREADS, PASSAGES_PER_THREAD_S, build_seconds, writer_threads

    assert writer_threads(1) == 1 and writer_threads(0) == 1 and writer_threads(4) == 4
    assert writer_threads(64) == MAX_WRITER_THREADS
    # a plan counts the cores' worth the threads get (hyperthreads count for less)
    assert build_seconds(PASSAGES_PER_THREAD_S * 3, capacity=1.0) == pytest.approx(3.0)
    assert build_seconds(PASSAGES_PER_THREAD_S * 3, capacity=0.5) == pytest.approx(3.0)


def test_bench_keyword_build_compares_thread_counts_on_the_same_passages(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    from searchain.cli.main import main

    assert main(["--home", str(tmp_path / "home"), "bench", "keyword-build", "--articles", "120",
                 "--threads", "1,2", "--queries", "30", "--work", str(tmp_path / "w")]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [r["threads"] for r in out["runs"]] == [1, 2] and out["passages"] > 120
    assert out["runs"][0]["speedup"] == 1.0 and all(r["passages_per_s"] > 0 for r in out["runs"])
    agree = out["agreement"]["2"]
    assert agree["queries"] == 30 and agree["top10_scores_identical_share"] == 1.0
    assert agree["above_the_cut_identical_share"] == 1.0


def test_a_search_opened_before_the_keyword_index_was_built_then_uses_it(tmp_path):
    """``corpus index`` builds it while the corpus stays as it is (no data_version change):
    a keyword search opened before (the app's, answering by keywords meanwhile) switches to it."""
    store = corpus(tmp_path)
    r = retriever(store)
    before = r.scores("county heron", 10)
    assert r._tantivy is None
    tv.ensure_current(store, 2.0, min_passages=0)
    after = r.scores("county heron", 10)
    assert r._tantivy is not None and {i for i, _ in after} & {i for i, _ in before}


def test_the_keyword_index_is_built_before_the_embedding(home, tmp_path, embedder, monkeypatch):
    """Minutes before the hours or days of embedding: a build stopped while embedding leaves
    keyword search on its fast index (and hybrid search answering by keywords meanwhile)."""
    from searchain.config import Settings
    from searchain.corpus.manager import CorpusManager
    from searchain.index.build import builder
    from tests.fixtures.index import MINI_CORPUS, write_mini_corpus

    monkeypatch.setattr(tv, "TANTIVY_FROM_PASSAGES", 1)
    CorpusManager(home, Settings()).add(MINI_CORPUS, write_mini_corpus(tmp_path / "m.jsonl"), "jsonl")

    def stopped(*args, **kwargs):
        raise Cancelled()

    monkeypatch.setattr(builder, "_build_layout", stopped)
    with pytest.raises(Cancelled):
        builder.build_index(home, Settings(), MINI_CORPUS, embedder=embedder)
    store = CorpusManager(home, Settings()).open_store(MINI_CORPUS)
    assert tv.is_current(tv.index_dir(store.path), store.conn, 2.0)
