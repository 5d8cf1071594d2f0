"""``searchain bench batch``: what a batch of k tokens costs against one, on the real tiny model."""

import json

import pytest

from searchain.cli.main import main


def test_bench_batch_reports_each_size_against_one_token(home, capsys, tiny_gguf):
    rc = main(["--home", str(home.config_dir.parent), "bench", "batch", "--model", str(tiny_gguf),
               "--sizes", "1,3,9", "--repeats", "3", "--at", "50", "--prompt", "64", "--threads", "1",
               "--gpu-layers", "0"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["at"] == 50 and out["n_gpu_layers"] == 0
    assert [row["tokens"] for row in out["batches"]] == [1, 3, 9]
    one = out["batches"][0]
    assert one["steps"] == 1.0 and one["ceiling_speedup"] == 1.0
    for row in out["batches"]:
        assert len(row["runs_s"]) == 3 and all(s > 0 for s in row["runs_s"])
        # steps and the ceiling are the medians' ratios, as documented
        assert row["steps"] == pytest.approx(row["median_s"] / one["median_s"], rel=0.01)
        assert row["ceiling_speedup"] == pytest.approx(row["tokens"] / row["steps"], rel=0.05)
    assert out["prompt"]["tokens"] == 64 and out["prompt"]["tokens_per_s"] > 0
    assert out["decode_tokens_per_s"] == pytest.approx(1 / one["median_s"], rel=0.05)


@pytest.mark.parametrize("sizes", ["3,5", "1,x", "1,0", ""])
def test_bench_batch_refuses_sizes_without_the_one_token_baseline(home, capsys, tiny_gguf, sizes):
    rc = main(["--home", str(home.config_dir.parent), "bench", "batch", "--model", str(tiny_gguf),
               "--sizes", sizes])
    assert rc != 0
    assert "--sizes" in capsys.readouterr().err
