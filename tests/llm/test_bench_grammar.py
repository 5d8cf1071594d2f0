"""``searchain bench grammar`` measures the three ways on the reasoning's real prompts and grammars."""

import json

from searchain.cli.main import main


def test_bench_grammar_json(home, capsys, tiny_gguf):
    rc = main(["--home", str(home.config_dir.parent), "bench", "grammar", "--model", str(tiny_gguf),
               "--tokens", "24", "--repeats", "1", "--threads", "1", "--n-ctx", "2048"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0
    assert [case["kind"] for case in out["cases"]] == ["chain", "chain", "chain", "final", "rewrite"]
    for case in out["cases"]:
        assert case["free_ms_per_token"] > 0 and case["grammar_ms_per_token"] > 0
        assert case["full_filter_ms_per_token"] > 0 and case["overhead"] > 0
        assert 0 <= case["rejected_share"] <= 1 and case["grammar_tokens"] > 0
        assert 0 <= case["full_filter_share"] <= case["rejected_share"]
    # Greedy: the fast path writes what the full filter writes, and the grammar accepts it.
    assert out["identical_outputs"] is True and out["valid"] is True
