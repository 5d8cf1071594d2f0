"""The retrieval benchmark on real eval data (a few questions), and its query construction."""

import json

import pytest

from searchain.bench.retrieval import eval_queries
from searchain.eval.datasets import load_dataset


def test_musique_steps_and_hotpotqa_supporting_pairs(shared_eval):
    mq = load_dataset(shared_eval / "musique" / "dev_200.jsonl")
    pairs = eval_queries(mq)
    assert len(pairs) == 478  # every decomposition step of the 200 questions
    assert all("#" not in q and ">>" not in q for q, _ in pairs)
    hp = load_dataset(shared_eval / "hotpotqa" / "dev_500.jsonl", limit=10)
    assert len(eval_queries(hp)) == 20  # two supporting paragraphs each


@pytest.mark.slow
def test_bench_retrieval_prints_one_json_object(shared_eval, home, capsys):
    from searchain.cli.main import main

    code = main(["bench", "retrieval", "--dataset", str(shared_eval / "musique" / "dev_200.jsonl"),
                 "--limit", "3", "--json"])
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
