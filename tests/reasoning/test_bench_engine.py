"""`searchain bench engine` prints one JSON object comparing the engine with bare calls."""

import json

from searchain.cli.main import main


def test_bench_engine_prints_one_json_object(home, capsys):
    code = main(["--home", str(home.config_dir.parent), "bench", "engine", "--questions", "3",
                 "--llm-latency", "0.03", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["benchmark"] == "engine" and out["questions"] == 3
    assert out["calls_per_question"] == 10  # 3 LLM calls, 3 searches + 1 for the question itself, 3 reader calls
    assert 0.0 <= out["framework_overhead"] < 1.0 and out["median_baseline_s"] > 0.09
    assert out["pass"] == (out["framework_overhead"] <= out["target"])
