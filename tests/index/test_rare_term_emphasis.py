"""BM25's rare-term emphasis and the hybrid's z-score fusion, on small real corpora."""

import math

import pytest

from searchain.config import Settings
from searchain.corpus.manager import CorpusManager
from searchain.index.bm25.fts5 import BM25Retriever
from searchain.index.hybrid import HybridRetriever, _score_fusion
from searchain.index.passages import PassageSource
from tests.fixtures.index import write_mini_corpus

# A sub-question made of one rare name and generic relation words, over a corpus where the
# generic words are everywhere: plain BM25 lets them outvote the name.
QUERY = "Outagamie County shares border with"
COUNTIES = [
    ("Baranya County", "Baranya County shares a border with Croatia; the county border runs along "
                       "the Drava and the county shares its border crossings with Somogy County."),
    ("Outagamie County", "Outagamie County lies in the state of Wisconsin in the United States of "
                         "America; the city of Appleton is its seat and largest city."),
] + [(f"Region {n}", f"Region {n} has a county border that it shares with a neighbour.") for n in range(3)] + [
    (f"Town {n}", f"Town {n} is a small place in a valley with a river and a mill.") for n in range(20)]


@pytest.fixture
def county_source(home, tmp_path):
    CorpusManager(home, Settings()).add("counties", write_mini_corpus(tmp_path / "c.jsonl", COUNTIES), "jsonl")
    source = PassageSource(CorpusManager(home, Settings()).open_store("counties"))
    yield source
    source.close()


def _titles(retriever, query, k=3):
    return [h.passage.title for h in retriever.search(query, k)]


def test_emphasis_lets_the_rare_name_outvote_generic_words(county_source):
    plain = BM25Retriever(county_source, idf_power=0.0)
    emphasised = BM25Retriever(county_source, idf_power=1.0)
    assert _titles(plain, QUERY)[0] == "Baranya County"
    assert _titles(emphasised, QUERY)[0] == "Outagamie County"


def test_emphasised_score_is_the_idf_weighted_sum_of_per_term_scores(county_source):
    plain = BM25Retriever(county_source, idf_power=0.0)
    emphasised = BM25Retriever(county_source, idf_power=2.0)
    n = len(COUNTIES)
    expected: dict[int, float] = {}
    for term in ("outagamie", "county", "shares", "border"):
        df = sum(term in (t + " " + x).lower() for t, x in COUNTIES)
        idf = max(math.log((n - df + 0.5) / (df + 0.5)), 1e-6)
        for i, s in plain.scores(term, 100):
            expected[i] = expected.get(i, 0.0) + idf ** 2 * s
    got = dict(emphasised.scores(QUERY, 100))
    assert set(got) == set(expected)
    for i, s in got.items():
        assert s == pytest.approx(expected[i], rel=1e-6)


def test_restricted_scores_match_the_full_ranking(county_source):
    bm25 = BM25Retriever(county_source)
    full = dict(bm25.scores(QUERY, 100))
    some = list(full)[3:9] + [999_999]  # an id the corpus does not have is simply absent
    assert dict(bm25.scores(QUERY, 100, restrict_to=some)) == {i: full[i] for i in some[:-1]}
    assert bm25.scores(QUERY, 5, restrict_to=[]) == []


def test_a_single_term_query_ranks_as_plain_bm25(county_source):
    assert _titles(BM25Retriever(county_source), "county", 25) == \
        _titles(BM25Retriever(county_source, idf_power=0.0), "county", 25)


def test_idf_follows_the_corpus_when_it_grows(home, tmp_path, county_source):
    bm25 = BM25Retriever(county_source)
    before = bm25.scores(QUERY, 5)
    more = [(f"Outagamie {n}", f"Outagamie note {n}.") for n in range(20)]  # the name turns common
    CorpusManager(home, Settings()).add("counties", write_mini_corpus(tmp_path / "more.jsonl", more,
                                                                      id_prefix="x"), "jsonl")
    fresh_source = PassageSource(CorpusManager(home, Settings()).open_store("counties"))
    try:
        assert bm25.scores(QUERY, 5) == BM25Retriever(fresh_source).scores(QUERY, 5) != before
    finally:
        fresh_source.close()


def test_bad_power_is_refused(county_source):
    with pytest.raises(ValueError, match="idf_power"):
        BM25Retriever(county_source, idf_power=-1)


def test_zscore_fusion_gives_both_sides_equal_spread():
    import statistics

    cands = [1, 2, 3, 4, 5]
    dense = {1: 0.30, 2: 0.50, 3: 0.70, 4: 0.10}  # 5: not in the graph -> lowest cosine seen
    bm25 = {1: 40.0, 2: 6.0, 3: 5.0}  # 4, 5: no keyword match -> 0
    fused = _score_fusion(cands, [dense], bm25, 0.3, "zscore")

    def z(values):
        mean, sd = statistics.fmean(values), statistics.pstdev(values)
        return [(v - mean) / sd for v in values]

    zd = z([0.30, 0.50, 0.70, 0.10, 0.10])
    zb = z([40.0, 6.0, 5.0, 0.0, 0.0])
    assert [fused[i] for i in cands] == pytest.approx([0.3 * d + 0.7 * b for d, b in zip(zd, zb)])
    minmax = _score_fusion(cands, [dense], bm25, 0.3, "minmax")
    assert minmax[1] == pytest.approx(0.3 * (0.2 / 0.6) + 0.7 * 1.0)
    flat = _score_fusion(cands, [{i: 0.5 for i in cands}], {}, 0.5, "zscore")
    assert set(flat.values()) == {0.0}  # no spread on either side: no preference


def test_hybrid_methods_and_the_old_name(county_source):
    class _Dense:  # the hybrid only needs the dense side's shape for construction
        pass

    bm25 = BM25Retriever(county_source)
    assert HybridRetriever(_Dense(), bm25).method == "zscore"
    assert HybridRetriever(_Dense(), bm25, method="score").method == "zscore"  # saved by v1
    assert HybridRetriever(_Dense(), bm25, method="minmax").method == "minmax"
    with pytest.raises(ValueError, match="fusion method"):
        HybridRetriever(_Dense(), bm25, method="max")
