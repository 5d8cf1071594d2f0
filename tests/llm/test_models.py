"""The models folder: listing, catalogue, and pull through the real huggingface_hub code
against a loopback Hub stub (progress, cancel + resume, checksum), plus the offline error.
Verification against the pins (wrong SHA, wrong size, other ETags, upstream changes, resumed and
already-complete files): test_models_verify.py."""

import hashlib
from dataclasses import replace

import pytest

from searchain.errors import Cancelled, ModelError
from searchain.events import CancelToken, Progress
from searchain.llm.models.manager import ModelManager

from .hf_stub import HubStub

NAME = "qwen2.5-1.5b"


@pytest.fixture
def payload(tiny_gguf):
    return tiny_gguf.read_bytes()  # ~0.5 MB: several 64 KiB chunks


@pytest.fixture
def pinned(monkeypatch, payload):
    """The catalogue's NAME entry re-pinned to the stub's payload (the real pin is a 1.1 GB
    file); the rest of the catalogue is unchanged."""
    from searchain.llm.models import manager as models

    entries = tuple(replace(e, size_bytes=len(payload), sha256=hashlib.sha256(payload).hexdigest())
                    if e.name == NAME else e for e in models.CATALOGUE)
    monkeypatch.setattr(models, "CATALOGUE", entries)
    return next(e for e in entries if e.name == NAME)


def test_catalogue_lists_real_repos_offline(home):
    entries = ModelManager(home).catalogue()
    assert len(entries) >= 6
    assert len({e.name for e in entries}) == len(entries)
    for e in entries:
        assert "/" in e.repo and e.filename.endswith(".gguf") and e.size_bytes > 0
        assert e.licence and e.hardware
    assert any("CPU" in e.hardware for e in entries) and any("GPU" in e.hardware for e in entries)


def test_list_local_shows_facts_and_broken_files(home, tiny_gguf):
    (home.models_dir / "sub").mkdir()
    (home.models_dir / "sub" / "tiny.gguf").write_bytes(tiny_gguf.read_bytes())
    (home.models_dir / "broken.gguf").write_text("not a model")
    (home.models_dir / ".cache").mkdir()
    (home.models_dir / ".cache" / "hidden.gguf").write_text("x")
    listed = {m.path.name: m for m in ModelManager(home).list_local()}
    assert set(listed) == {"tiny.gguf", "broken.gguf"}
    assert listed["tiny.gguf"].facts.architecture == "llama"
    assert listed["broken.gguf"].facts is None and "not a GGUF" in listed["broken.gguf"].error


def test_pull_downloads_with_progress_and_checksum(home, online, payload, pinned):
    events = []
    with HubStub(payload) as hub:
        path = ModelManager(home, endpoint=hub.url).pull(NAME, on_event=events.append)
    assert path == home.models_dir / "qwen2.5-1.5b-instruct-q4_k_m.gguf"
    assert path.read_bytes() == payload
    downloads = [e for e in events if isinstance(e, Progress) and e.stage == "download"]
    assert len(downloads) >= 5 and downloads[-1].done == downloads[-1].total == len(payload)
    assert [e for e in events if e.stage == "verify"][-1].done == len(payload)
    # The pinned commit is what is asked for, never "main".
    assert any(f"/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/{pinned.revision}/" in r[1]
               for r in hub.requests)
    assert [m.path for m in ModelManager(home).list_local()] == [path]


def test_cancel_keeps_the_partial_file_and_the_next_pull_resumes(home, online, payload,
                                                                   pinned):
    cancel = CancelToken()

    def on_event(event):
        if event.stage == "download" and event.done >= 2 * 64 * 1024:
            cancel.cancel()

    with HubStub(payload) as hub:
        manager = ModelManager(home, endpoint=hub.url)
        with pytest.raises(Cancelled):
            manager.pull(NAME, on_event=on_event, cancel=cancel)
        assert not (home.models_dir / "qwen2.5-1.5b-instruct-q4_k_m.gguf").exists()
        partial, = (home.models_dir / ".partial").iterdir()
        assert 0 < partial.stat().st_size < len(payload)
        path = manager.pull(NAME)
    assert path.read_bytes() == payload
    ranges = [r[2] for r in hub.requests if r[0] == "GET"]
    assert ranges[0] is None
    resumed_from = int(ranges[-1].split("=")[1].rstrip("-"))
    assert resumed_from >= 64 * 1024  # it did not start over


def test_checksum_mismatch_deletes_the_file(home, online, payload, pinned):
    tampered = payload[:-1] + bytes([payload[-1] ^ 1])  # same size, one bit differs
    with HubStub(tampered, etag_sha256=pinned.sha256) as hub:  # the server even lies in its ETag
        with pytest.raises(ModelError, match="failed its checksum"):
            ModelManager(home, endpoint=hub.url).pull(NAME)
    assert not list(home.models_dir.rglob("*.gguf*"))  # neither the file nor a partial


def test_offline_pull_is_a_clear_error(home):
    # conftest sets HF_HUB_OFFLINE=1, as on an offline machine.
    with pytest.raises(ModelError, match="no network access") as info:
        ModelManager(home).pull(NAME)
    assert "copy a .gguf" in info.value.hint


def test_unknown_name_and_remove(home, tiny_gguf):
    manager = ModelManager(home)
    with pytest.raises(ModelError, match="not in the model catalogue"):
        manager.pull("gpt-17")
    target = home.models_dir / "mine.gguf"
    target.write_bytes(tiny_gguf.read_bytes())
    assert manager.remove("mine.gguf") == target.resolve()
    assert not target.exists()
    with pytest.raises(ModelError, match="No model"):
        manager.remove("mine.gguf")
    with pytest.raises(ModelError, match="not inside the models folder"):
        manager.remove("../../outside.gguf")


def test_pull_refuses_at_once_when_the_rest_of_the_file_cannot_fit(home, online, payload, pinned,
                                                                    monkeypatch):
    import shutil as real_shutil

    from searchain.llm.models import manager as models

    free = len(payload) // 2
    usage = real_shutil.disk_usage(home.models_dir)
    monkeypatch.setattr(models.shutil, "disk_usage",
                        lambda path: usage._replace(free=free))  # what the OS would report
    with HubStub(payload) as hub:
        manager = ModelManager(home, endpoint=hub.url)
        with pytest.raises(ModelError, match="Not enough disk space") as err:
            manager.pull(NAME)
        assert "qwen2.5-1.5b-instruct-q4_k_m.gguf" in str(err.value) and "--home" in err.value.hint
        assert not [r for r in hub.requests if r[0] == "GET"]  # nothing was downloaded

        # With half of it already downloaded, the other half fits.
        partial = manager._partial_path("qwen2.5-1.5b-instruct-q4_k_m.gguf", hub.etag)
        partial.write_bytes(payload[:len(payload) - free])
        assert manager.pull(NAME).read_bytes() == payload


def test_a_disk_filling_up_mid_download_keeps_the_partial_file(home, online, payload, pinned,
                                                                 monkeypatch):
    import errno

    from huggingface_hub import file_download

    real_http_get = file_download.http_get

    def http_get_onto_a_full_disk(url, temp_file, **kwargs):
        class FillsUp:  # the file object http_get writes to; the disk fills after 128 KiB
            def write(self, data):
                if temp_file.tell() + len(data) > 128 * 1024:
                    raise OSError(errno.ENOSPC, "No space left on device")
                return temp_file.write(data)

            def __getattr__(self, name):
                return getattr(temp_file, name)

        return real_http_get(url, FillsUp(), **kwargs)

    monkeypatch.setattr(file_download, "http_get", http_get_onto_a_full_disk)
    with HubStub(payload) as hub:
        with pytest.raises(ModelError, match="disk filled up") as err:
            ModelManager(home, endpoint=hub.url).pull(NAME)
        assert "resumes" in err.value.hint
        partial, = (home.models_dir / ".partial").iterdir()
        assert partial.read_bytes() == payload[:partial.stat().st_size] and partial.stat().st_size > 0
        monkeypatch.setattr(file_download, "http_get", real_http_get)
        assert ModelManager(home, endpoint=hub.url).pull(NAME).read_bytes() == payload
