"""``searchain bench discovery`` lays out a fake home of sparse GGUFs over every app's layout and
finds them all, without reading or writing gigabytes."""

import json

from searchain.cli.main import main


def test_bench_discovery_finds_every_model_it_laid_out(home, capsys, tmp_path):
    work = tmp_path / "bench"
    rc = main(["--home", str(home.config_dir.parent), "bench", "discovery", "--models", "14",
               "--repeats", "1", "--work", str(work)])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["models_laid_out"] == out["found"] == out["readable"] == 14
    assert set(out["sources"].values()) == {2}  # two in each of the seven layouts
    assert out["logical_gb"] >= 14 and out["on_disk_mb"] < 5  # sparse: gigabytes in kilobytes
    assert out["seconds_median"] > 0 and isinstance(out["meets_goal"], bool)
