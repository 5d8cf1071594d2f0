"""``searchain models ...`` end to end through the CLI entry point."""

import json

from searchain.cli.main import main
from searchain.config import Settings


def _run(capsys, home, *argv):
    rc = main(["--home", str(home.config_dir.parent), *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_make_list_info_use_remove(home, capsys):
    target = home.models_dir / "test.gguf"
    rc, out, _ = _run(capsys, home, "models", "make-test-model", str(target))
    assert rc == 0 and out.strip() == str(target) and target.is_file()

    rc, out, _ = _run(capsys, home, "models", "list", "--json")
    (row,) = json.loads(out)
    assert rc == 0 and row["architecture"] == "llama" and row["n_layers"] == 2
    assert row["active"] is False

    rc, out, _ = _run(capsys, home, "models", "info", str(target), "--json")
    assert json.loads(out)["quantisation"] == "F32"

    rc, out, _ = _run(capsys, home, "models", "use", "test.gguf")
    assert rc == 0 and Settings.load(home).llm.model_path == str(target.resolve())

    rc, out, _ = _run(capsys, home, "models", "remove", "test.gguf")
    assert rc == 0 and not target.exists()
    assert Settings.load(home).llm.model_path == ""


def test_catalogue_offline_and_pull_offline_error(home, capsys):
    rc, out, _ = _run(capsys, home, "models", "catalogue", "--json")
    entries = json.loads(out)["entries"]
    assert rc == 0 and {"qwen2.5-3b", "llama3.2-3b", "qwen3-4b"} <= {e["name"] for e in entries}
    rc, out, err = _run(capsys, home, "models", "pull", "qwen2.5-3b")
    assert rc == 1 and "no network access" in err and "hint:" in err


def test_bad_files_are_clear_errors(home, capsys, tmp_path):
    junk = tmp_path / "junk.gguf"
    junk.write_text("hello")
    rc, _, err = _run(capsys, home, "models", "info", str(junk))
    assert rc == 1 and "not a GGUF file" in err
    rc, _, err = _run(capsys, home, "models", "use", str(tmp_path / "missing.gguf"))
    assert rc == 1 and "does not exist" in err
    rc, _, err = _run(capsys, home, "models", "make-test-model", str(tmp_path / "x.gguf"),
                      "--quant", "Q9_Z")
    assert rc == 1 and "Unknown quantisation" in err


def test_check_reports_offload_and_loads_the_model(home, capsys, tiny_gguf):
    rc, out, _ = _run(capsys, home, "models", "check", "--model", str(tiny_gguf), "--json")
    report = json.loads(out)
    assert rc == 0 and isinstance(report["gpu_offload_supported"], bool)
    assert report["decode_tokens_per_s"] > 0
    assert report["n_gpu_layers"] == (-1 if report["gpu_offload_supported"] else 0)


def test_catalogue_recommends_for_this_machine_and_says_why(home, capsys, monkeypatch):
    from searchain.llm.models import recommend

    fake = recommend.MachineFacts(32 * 1024 ** 3, 24 * 1024 ** 3, "NVIDIA RTX 4070",
                                  12 * 1024 ** 3, True)
    monkeypatch.setattr(recommend, "machine_facts", lambda: fake)
    rc, out, _ = _run(capsys, home, "models", "catalogue", "--json")
    report = json.loads(out)
    assert rc == 0 and report["recommended"] == "qwen3-14b" and report["n_ctx"] == 4096
    assert "RTX 4070" in report["reason"] and report["machine"]["vram_bytes"] == 12 * 1024 ** 3
    rows = {e["name"]: e for e in report["entries"]}
    assert rows["qwen3-14b"]["recommended"] and not rows["qwen3-8b"]["recommended"]
    assert rows["qwen3-8b"]["fits"] and not rows["qwen3-30b-a3b"]["fits"]
    assert rows["qwen2.5-3b"]["non_commercial"] and rows["qwen3-14b"]["sha256"]
    assert rows["qwen3-14b"]["revision"] == "530227a7d994db8eca5ab5ced2fb692b614357fd"
    assert rows["qwen3-8b"]["thinking"] and rows["mistral-7b"]["chat_template"] == "mistral"

    rc, out, _ = _run(capsys, home, "models", "catalogue")
    assert rc == 0 and "* qwen3-14b" in out and "[NON-COMMERCIAL]" in out
    assert out.strip().splitlines()[-1].startswith("Recommended here: qwen3-14b")


def test_pull_of_an_unpinned_model_needs_allow_unverified(home, capsys, monkeypatch):
    from dataclasses import replace

    from searchain.llm.models import manager as models

    asked = []

    def pull(self, name, *, on_event=None, cancel=None, confirm=None):
        asked.append(confirm and confirm("Download it anyway?"))
        raise models.ModelError("stop here")

    monkeypatch.setattr(models.ModelManager, "pull", pull)
    monkeypatch.setattr(models, "CATALOGUE", tuple(replace(e, sha256=None) for e in models.CATALOGUE))
    _run(capsys, home, "models", "pull", "qwen3-4b")  # not a terminal: nobody to ask
    _run(capsys, home, "models", "pull", "qwen3-4b", "--allow-unverified")
    assert asked == [None, True]
