"""The retrieval benchmark on real eval data (a few questions), and its query construction."""

import json

import pytest

from searchain.bench.retrieval import eval_queries, eval_question_ids
from searchain.eval.datasets import load_dataset


def test_musique_steps_and_hotpotqa_supporting_pairs(shared_eval):
    mq = load_dataset(shared_eval / "musique" / "dev_200.jsonl")
    pairs = eval_queries(mq)
    assert len(pairs) == 478  # every decomposition step of the 200 questions
    questions = eval_question_ids(mq)
    assert len(questions) == 478 and len(set(questions)) == 200  # each step knows its question
    assert all("#" not in q and ">>" not in q for q, _ in pairs)
    hp = load_dataset(shared_eval / "hotpotqa" / "dev_500.jsonl", limit=10)
    assert len(eval_queries(hp)) == 20  # two supporting paragraphs each


@pytest.mark.slow
def test_bench_retrieval_prints_one_json_object(shared_eval, home, tiny_cross_encoder_dir,
                                                tiny_embedder_dir, capsys):
    from searchain.cli.main import main

    code = main(["bench", "retrieval", "--dataset", str(shared_eval / "musique" / "dev_200.jsonl"),
                 "--limit", "3", "--reranker", str(tiny_cross_encoder_dir),
                 "--second-embedder", str(tiny_embedder_dir), "--json"])
    assert code == 0
    out = capsys.readouterr().out.strip()
    data = json.loads(out)  # exactly one JSON object on stdout
    assert data["default"] in ("dense", "bm25", "hybrid")
    for kind in ("dense", "bm25", "hybrid"):
        r = data[kind]
        assert 0.0 <= r["recall@1"] <= r["recall@5"] <= r["recall@10"] <= 1.0
    assert data["corpus_size"] == 60 and data["queries"] >= 6 and data["index_build_s"] > 0
    # Even on 3 questions the gold step paragraphs are mostly in the top 10 of 60 passages.
    assert data["hybrid"]["recall@10"] >= 0.8
    # Each row's recall@1 comes with its question-bootstrap interval, and the hybrid's gain over
    # each other row with a paired one.
    for kind in ("dense", "bm25", "hybrid", "rrf_plain", "hybrid+rerank", "dense_2nd", "hybrid+2nd"):
        lo, hi = data[kind]["recall@1_ci95"]
        assert lo <= data[kind]["recall@1"] <= hi
    paired = data["paired_recall@1"]
    assert set(paired) == {"hybrid_vs_dense", "hybrid_vs_bm25", "hybrid_vs_rrf_plain",
                           "hybrid+rerank_vs_hybrid", "hybrid+2nd_vs_hybrid"}
    # The second model's rows: a random 32-d model alone ranks far worse than MiniLM, and its
    # index was built in the same run.
    assert data["second_embedder"].startswith("local:tiny-emb@") and data["second_index_build_s"] > 0
    assert data["dense_2nd"]["recall@10"] < data["dense"]["recall@10"]
    gain = paired["hybrid_vs_dense"]
    assert gain["delta"] == pytest.approx(data["hybrid"]["recall@1"] - data["dense"]["recall@1"], abs=1e-3)
    assert gain["ci"][0] <= gain["delta"] <= gain["ci"][1]
    # The re-ranked default is one more row, from the same first stage, in the same run.
    reranked = data["hybrid+rerank"]
    assert 0.0 <= reranked["recall@1"] <= reranked["recall@5"] <= reranked["recall@10"] <= 1.0
    assert data["reranker"] == "cross-encoder:tiny-ce" and data["default"] == "hybrid"
    assert data["ms_per_query"]["hybrid+rerank"] > 0


@pytest.mark.slow
def test_bench_retrieval_default_follows_auto_second_model(shared_eval, home, tiny_embedder_dir,
                                                          monkeypatch, capsys):
    # Where ``auto`` turns the second model on (here it resolves to the tiny model), that is the
    # default retriever: its rows appear without --second-embedder and "default" names them.
    from searchain.cli.main import main
    from searchain.index.embed import second

    monkeypatch.setattr(second, "auto_choice",
                        lambda r, models_dir, passages=None: second.AutoChoice(str(tiny_embedder_dir), "test"))
    code = main(["bench", "retrieval", "--dataset", str(shared_eval / "musique" / "dev_200.jsonl"),
                 "--limit", "2", "--no-rrf-baseline", "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["default"] == "hybrid+2nd"
    assert data["second_embedder"].startswith("local:tiny-emb@")
    assert {"hybrid", "dense_2nd", "hybrid+2nd"} <= set(data)


def test_bench_index_measures_synthetic_and_pooled_real_vectors(indexed_home, capsys):
    from searchain.cli.main import main
    from tests.fixtures.index import MINI_CORPUS, MINI_PASSAGES

    code = main(["--home", str(indexed_home.config_dir.parent), "bench", "index", "--n", "2000",
                 "--dim", "32", "--queries", "50", "--real", MINI_CORPUS, "--real", MINI_CORPUS,
                 "--no-encode", "--json"])
    assert code == 0
    data = json.loads(capsys.readouterr().out.strip())
    assert data["n"] == 2000 and data["dim"] == 32 and data["queries"] == 50
    assert 0.9 <= data["recall@10_vs_exact"] <= 1.0  # 2000 clustered vectors: an easy graph
    assert 0 < data["query_p50_ms"] <= data["query_p99_ms"]
    real = data["real"]
    pooled = 2 * len(MINI_PASSAGES)  # the corpus given twice: its vectors pooled twice
    held = pooled // 10
    assert real["corpus"] == f"{MINI_CORPUS},{MINI_CORPUS}"
    assert real["n"] == pooled - held and real["queries"] == held and real["dim"] == 384
    # 36 vectors in the graph: the search is exhaustive, so recall is exact.
    assert real["recall@10_vs_exact"] == 1.0


def test_recall_counts_a_tied_neighbour_as_found():
    import numpy as np

    from searchain.bench.ann.hnsw_bench import tie_aware_recall

    data = np.array([[1.0, 0.0], [0.8, 0.6], [0.8, 0.6], [0.0, 1.0]], dtype=np.float32)
    queries = np.array([[1.0, 0.0]], dtype=np.float32)
    truth = np.array([[0, 1]])  # rows 1 and 2 are the same vector: either is the 2nd neighbour
    assert tie_aware_recall(data, queries, np.array([[0, 2]]), truth) == 1.0
    assert tie_aware_recall(data, queries, np.array([[2, 0]]), truth) == 1.0
    assert tie_aware_recall(data, queries, np.array([[0, 3]]), truth) == 0.5  # a worse one is a miss
    assert tie_aware_recall(data, queries, np.array([[0, -1]]), truth) == 0.5  # hnswlib's "none"
