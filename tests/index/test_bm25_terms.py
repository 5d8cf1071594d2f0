"""Per-term BM25 computed from FTS5's own counts equals FTS5's bm25(), whatever the corpus size."""

import random

from searchain.corpus.store import FTS_TOKENIZER, PassageStore
from searchain.index.bm25.terms import TermScorer, read_varints
from searchain.types import Passage

WORDS = ("river valley county seat township island father born film team member located "
         "capital running runs ran bridge heron").split()


def corpus(tmp_path, n=300):
    rng = random.Random(0)
    store = PassageStore.open(tmp_path / "c" / "passages.db", create=True)
    store.add(Passage("c", f"p{i}", " ".join(rng.choices(WORDS, k=rng.randint(1, 3))).title(),
                      " ".join(rng.choices(WORDS, k=rng.randint(5, 60)))) for i in range(n))
    return store


def fts5_term_scores(conn, term, ids, weights):
    marks = ",".join("?" * len(ids))
    return dict(conn.execute(
        f"SELECT rowid, -bm25(passages_fts, ?, ?) FROM passages_fts WHERE passages_fts MATCH ? "
        f"AND rowid IN ({marks})", [*weights, f'"{term}"', *ids]).fetchall())


def test_scores_match_fts5_bm25_for_every_term_and_candidate(tmp_path):
    store = corpus(tmp_path)
    conn = store.conn
    weights = (2.0, 1.0)
    scorer = TermScorer(FTS_TOKENIZER, weights)
    ids = random.Random(1).sample(range(1, 301), 80)
    terms = {t: conn.execute("SELECT count(*) FROM passages_fts WHERE passages_fts MATCH ?",
                             (f'"{t}"',)).fetchone()[0] for t in ("county", "running", "heron", "zzz")}
    got = scorer.scores(conn, terms, ids, TermScorer.totals(conn))
    checked = 0
    for term in terms:
        expected = fts5_term_scores(conn, term, ids, weights)
        assert got[term].keys() == expected.keys()
        for i, score in expected.items():
            assert abs(got[term][i] - score) < 1e-9
            checked += 1
    assert checked > 100 and not got["zzz"]  # "running" also matched "runs" (stemmed)
    assert scorer.stem("running") == "run" and scorer.stem("two words") is None


def test_sqlite_varints():
    assert read_varints(bytes([0x7F, 0x81, 0x00, 0x00])) == [127, 128, 0]
    assert read_varints(bytes([0xFF] * 8 + [0xAB])) == [(2 ** 56 - 1) << 8 | 0xAB]
