"""Each retriever on a small real corpus, the factory's errors, and concurrent searches."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from searchain.errors import ConfigError, CorpusError, IndexError_
from searchain.index.retrievers import BM25Retriever, DenseRetriever, HybridRetriever, open_retriever
from searchain.types import Hit
from tests.fixtures.index import MINI_CORPUS, write_mini_corpus

QUERIES = {  # query -> the one right title
    "What is the capital of France?": "Paris",
    "highest mountain on Earth": "Mount Everest",
    "how plants make sugar from light": "Photosynthesis",
    "composer of nine symphonies who became deaf": "Ludwig van Beethoven",
    "ship that hit an iceberg in 1912": "Titanic",
    "who discovered the first antibiotic": "Penicillin",
}


@pytest.fixture(scope="module")
def retrievers(indexed_home, embedder):
    return {kind: open_retriever(indexed_home, Settings(), MINI_CORPUS, kind, embedder=embedder)
            for kind in ("dense", "bm25", "hybrid")}


def test_factory_returns_the_requested_kinds(retrievers):
    assert isinstance(retrievers["dense"], DenseRetriever)
    assert isinstance(retrievers["bm25"], BM25Retriever)
    assert isinstance(retrievers["hybrid"], HybridRetriever)


@pytest.mark.parametrize("kind", ["dense", "bm25", "hybrid"])
def test_each_retriever_ranks_the_right_passage_first(retrievers, kind):
    for query, title in QUERIES.items():
        if kind == "bm25" and title == "Penicillin":
            continue  # no shared keyword ("antibiotics" vs "antibiotic" stem aside): dense's job
        hits = retrievers[kind].search(query, 3)
        assert hits and all(isinstance(h, Hit) for h in hits)
        assert hits[0].passage.title == title, (kind, query, [h.passage.title for h in hits])
        assert hits[0].retriever == kind and hits[0].passage.corpus == MINI_CORPUS
        assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_k_is_respected_and_empty_queries_return_nothing(retrievers):
    for r in retrievers.values():
        assert len(r.search("largest capital city in the world", 4)) == 4
        assert r.search("   ", 5) == []
        assert r.search("capital", 0) == []


def test_bm25_survives_fts_syntax_in_the_query(retrievers):
    hits = retrievers["bm25"].search('"Eiffel AND (tower NEAR* -Paris: col:x', 3)
    assert hits[0].passage.title == "Eiffel Tower"


def test_bm25_title_weight_lifts_the_entity_article(indexed_home):
    # "Paris" occurs in the title of one passage and the text of another (Eiffel Tower).
    store = CorpusManager(indexed_home, Settings()).open_store(MINI_CORPUS)
    from searchain.index.passages import PassageSource

    weighted = BM25Retriever(PassageSource(store), title_weight=5.0)
    assert weighted.search("Paris", 1)[0].passage.title == "Paris"


def test_hybrid_rrf_and_score_fusion_both_work(retrievers):
    rrf = HybridRetriever(retrievers["dense"], retrievers["bm25"], method="rrf")
    assert rrf.search("highest mountain on Earth", 1)[0].passage.title == "Mount Everest"
    with pytest.raises(ValueError):
        HybridRetriever(retrievers["dense"], retrievers["bm25"], dense_weight=1.5)
    with pytest.raises(ValueError):
        HybridRetriever(retrievers["dense"], retrievers["bm25"], method="magic")


def test_concurrent_searches_give_the_same_results(retrievers):
    queries = list(QUERIES) * 4
    for r in retrievers.values():
        expected = [[h.passage.pid for h in r.search(q, 5)] for q in queries]
        with ThreadPoolExecutor(max_workers=6) as pool:
            got = list(pool.map(lambda q: [h.passage.pid for h in r.search(q, 5)], queries))
        assert got == expected


def test_bm25_needs_no_index_but_dense_says_how_to_build_one(home, tmp_path, embedder):
    CorpusManager(home, Settings()).add(MINI_CORPUS, write_mini_corpus(tmp_path / "m.jsonl"), "jsonl")
    assert open_retriever(home, Settings(), MINI_CORPUS, "bm25").search("Jupiter", 1)[0] \
        .passage.title == "Jupiter"
    with pytest.raises(IndexError_) as err:
        open_retriever(home, Settings(), MINI_CORPUS, "dense", embedder=embedder)
    assert "no finished vector index" in str(err.value)
    assert "searchain corpus index mini" in err.value.hint and "bm25" in err.value.hint


def test_hybrid_search_is_keyword_search_until_the_vector_index_is_built(home, tmp_path, embedder):
    """A corpus is searchable as soon as it is ingested (Wikipedia embeds for days on a CPU):
    the default hybrid search falls back to BM25, the workspace says so at every question, and
    the first question after the build gets hybrid search."""
    from searchain.index.build.builder import build_index
    from searchain.index.retrievers import KeywordOnly, keyword_only
    from searchain.workspace import Workspace

    CorpusManager(home, Settings()).add(MINI_CORPUS, write_mini_corpus(tmp_path / "m.jsonl"), "jsonl")
    assert keyword_only(home, Settings(), [MINI_CORPUS, "absent"]) == [MINI_CORPUS]
    assert keyword_only(home, Settings(), [MINI_CORPUS], "bm25") == []  # asked for: nothing to say
    hybrid = open_retriever(home, Settings(), MINI_CORPUS, "hybrid", embedder=embedder)
    assert isinstance(hybrid, BM25Retriever)
    assert hybrid.search("Jupiter", 1)[0].passage.title == "Jupiter"
    workspace = Workspace(home, Settings())
    workspace._embedder = embedder
    for _ in range(2):
        events = []
        retriever = workspace.retriever(MINI_CORPUS, on_event=events.append)
        assert retriever.name == "bm25" and events == [KeywordOnly(MINI_CORPUS)]
    note = events[0]
    assert "keywords only" in note.message and f"searchain corpus index {MINI_CORPUS}" in note.hint
    build_index(home, Settings(), MINI_CORPUS, embedder=embedder)
    events = []
    retriever = workspace.retriever(MINI_CORPUS, on_event=events.append)
    assert isinstance(retriever, HybridRetriever) and not any(isinstance(e, KeywordOnly) for e in events)
    assert keyword_only(home, Settings(), [MINI_CORPUS]) == []


def test_factory_errors(indexed_home):
    with pytest.raises(ConfigError, match="Unknown retriever"):
        open_retriever(indexed_home, Settings(), MINI_CORPUS, "magic")
    with pytest.raises(CorpusError):
        open_retriever(indexed_home, Settings(), "no-such-corpus", "bm25")


def test_default_kind_comes_from_settings(indexed_home, embedder):
    settings = Settings()
    settings.retrieval.retriever = "bm25"
    assert open_retriever(indexed_home, settings, MINI_CORPUS).name == "bm25"


def test_hybrid_title_boost_prefers_the_named_article(retrievers):
    plain = HybridRetriever(retrievers["dense"], retrievers["bm25"])
    boosted = HybridRetriever(retrievers["dense"], retrievers["bm25"], title_boost=1.0)
    query = "Eiffel Tower height"  # also close to Paris, which the Eiffel text names
    assert boosted.search(query, 1)[0].passage.title == "Eiffel Tower"
    top = boosted.fused_scores(query, 3)
    base = dict((i, s) for i, s, _ in plain.fused_scores(query, 3))
    eiffel = [(i, s) for i, s, p in top if p.title == "Eiffel Tower"][0]
    assert eiffel[1] == pytest.approx(base[eiffel[0]] + 1.0)


def test_the_workspace_says_when_it_opens_an_index_and_what_a_large_one_costs(indexed_copy):
    from searchain.events import Progress
    from searchain.index.layout import OPEN_STAGE, IndexLayout, opening_note
    from searchain.workspace import Workspace

    events = []
    workspace = Workspace(indexed_copy, Settings())
    workspace.retriever(MINI_CORPUS, on_event=events.append)
    assert events == [Progress(OPEN_STAGE, 0, 0, f"opening the search index of '{MINI_CORPUS}'",
                               started_at=events[0].started_at)]
    workspace.retriever(MINI_CORPUS, on_event=events.append)  # open already: nothing to say
    assert len(events) == 1
    # A Wikipedia-sized index (a sparse file of the 21M codes' size) is read for seconds: say how long.
    corpus_dir = CorpusManager(indexed_copy, Settings()).corpus_dir(MINI_CORPUS)
    with open(IndexLayout(corpus_dir / "index").compact_file, "r+b") as codes:
        codes.truncate(7_410_000_000)
    assert opening_note(corpus_dir, "wiki") == "opening the search index of 'wiki' (7.4 GB, about 23 s)"
