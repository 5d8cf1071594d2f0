"""Reaching a Ray cluster: an address nobody answers at, a Ray Client address, Ray missing.

These never start Ray: a dead address is found by a plain TCP probe in milliseconds.
"""

import io
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from searchain.cli.main import main
from searchain.errors import IndexError_
from tests.fixtures.index import MINI_CORPUS

REPO = Path(__file__).resolve().parents[2]

if os.environ.get("CI") != "true":
    pytest.importorskip("ray", reason="the cluster extra is not installed: pip install '.[cluster]' "
                                      "(make test does)")


def dead_address() -> str:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"127.0.0.1:{port}"


def test_an_address_that_does_not_answer_is_a_clear_error_naming_the_local_build(indexed_copy):
    address = dead_address()
    proc = subprocess.run(
        [sys.executable, "-m", "searchain", "--home", str(indexed_copy.config_dir.parent), "corpus",
         "index", MINI_CORPUS, "--ray", address],
        capture_output=True, text=True, timeout=120, cwd=REPO, stdin=subprocess.DEVNULL,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.returncode == 1
    assert f"error: No Ray cluster answers at {address} (Connection refused)." in proc.stderr
    assert f"build on this machine instead: searchain corpus index {MINI_CORPUS}" in proc.stderr
    assert "Traceback" not in proc.stderr


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_at_a_terminal_the_local_build_is_offered_and_taken(indexed_copy, monkeypatch, capsys):
    import ray

    assert not ray.is_initialized()
    import shutil

    shutil.rmtree(indexed_copy.corpora_dir / MINI_CORPUS / "index")
    monkeypatch.setattr("sys.stdin", Terminal("y\n"))
    assert main(["--home", str(indexed_copy.config_dir.parent), "corpus", "index", MINI_CORPUS,
                 "--ray", dead_address()]) == 0
    out, err = capsys.readouterr()
    assert "No Ray cluster answers at" in err and "Build on this machine instead? [y/N]" in out
    assert "mini: index ready, 20 passages (20 embedded)" in out
    assert not ray.is_initialized()


def test_declined_at_a_terminal_builds_nothing(indexed_copy, monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", Terminal("n\n"))
    assert main(["--home", str(indexed_copy.config_dir.parent), "corpus", "index", MINI_CORPUS,
                 "--ray", dead_address(), "--rebuild"]) == 1
    assert "Not built." in capsys.readouterr().err
    assert (indexed_copy.corpora_dir / MINI_CORPUS / "index" / "meta.json").is_file()  # untouched


def test_ray_client_addresses_and_nonsense_are_refused(home):
    from searchain.index.build.ray_embed import RayEmbedding, RayOptions

    with pytest.raises(IndexError_, match="Ray Client addresses"):
        RayEmbedding(RayOptions(address="ray://10.0.0.5:10001")).connect()
    with pytest.raises(IndexError_, match="is not a Ray address"):
        RayEmbedding(RayOptions(address="headnode")).connect()


def test_without_ray_installed_the_error_names_the_extra(monkeypatch):
    from searchain.index.build.ray_embed import INSTALL_HINT, RayEmbedding

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(IndexError_, match="needs Ray, which is not installed") as err:
        RayEmbedding().connect()
    assert err.value.hint == INSTALL_HINT and "[cluster]" in INSTALL_HINT


def test_ray_options_need_ray(home, capsys):
    assert main(["--home", str(home.config_dir.parent), "corpus", "index", "x", "--ray-workers", "2"]) == 1
    assert "--ray-workers needs --ray" in capsys.readouterr().err


def test_old_ray_sessions_are_pruned(tmp_path):
    from searchain.index.build.ray_embed import prune_sessions

    for k in range(5):
        folder = tmp_path / f"session_2026-01-0{k + 1}_00-00-00_1_{k}"
        folder.mkdir()
        os.utime(folder, (k * 100, k * 100))
    (tmp_path / "session_latest").symlink_to(folder)
    prune_sessions(tmp_path, keep=3)
    assert sorted(p.name[:18] for p in tmp_path.glob("session_2*")) == \
        ["session_2026-01-03", "session_2026-01-04", "session_2026-01-05"]
    assert (tmp_path / "session_latest").is_symlink()
