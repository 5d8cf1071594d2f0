"""``searchain bench llm`` prints the promised JSON, measured on the real tiny model."""

import json

from searchain.cli.main import main


def test_bench_llm_json(home, capsys, tiny_gguf):
    rc = main(["--home", str(home.config_dir.parent), "bench", "llm", "--model", str(tiny_gguf),
               "--json", "--tokens", "16", "--repeats", "1", "--threads", "1", "--n-ctx", "1024"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert out["tokens_per_run"] == out["raw_tokens_per_run"] == 16
    assert out["prompt_tokens"] == out["raw_prompt_tokens"] > 0
    assert out["backend_tokens_per_s"] > 0 and out["raw_tokens_per_s"] > 0
    assert out["overhead_ratio"] > 0
    # The worker-process backend ran in the same run, on the same model and token count.
    assert out["isolated_tokens_per_run"] == 16 and out["isolated_tokens_per_s"] > 0
    assert out["isolated_overhead_ratio"] > 0 and out["isolated_vs_inprocess"] > 0
    rounds = out["prompt_tokens_evaluated_per_round"]
    with_reuse, without = rounds["with_reuse"], rounds["without_reuse"]
    assert len(with_reuse) == len(without) == 3
    assert with_reuse[0] == without[0]  # the first round starts from an empty cache either way
    assert without[0] < without[1] < without[2]  # the whole, growing dialogue each time
    for reused, full in zip(with_reuse[1:], without[1:]):
        assert reused < full / 2  # only the new turn
