"""A pull is verified against the catalogue's pin, through the real huggingface_hub client and a
loopback Hub stub: a wrong SHA-256, a wrong size, a non-SHA ETag, a file changed upstream, a
resumed download, a file already on disk, and an entry with no pinned hash (asks first)."""

import hashlib
from dataclasses import replace

import pytest

from searchain.errors import ModelError
from searchain.llm.models.manager import ModelManager

from .hf_stub import HubStub
from .test_models import NAME, payload, pinned  # noqa: F401  (fixtures)

FILENAME = "qwen2.5-1.5b-instruct-q4_k_m.gguf"


def _gets(hub):
    return [r for r in hub.requests if r[0] == "GET"]


def _unpinned(monkeypatch, entry):
    from searchain.llm.models import manager as models

    monkeypatch.setattr(models, "CATALOGUE", (replace(entry, sha256=None),))


def test_wrong_sha256_is_deleted_even_when_the_etag_is_no_sha(home, online, payload, pinned):
    tampered = payload[:100] + b"X" + payload[101:]  # same size, other bytes
    with HubStub(tampered, etag_sha256="abc-proxy-etag-17") as hub:  # a proxy's own ETag
        with pytest.raises(ModelError, match="failed its checksum") as err:
            ModelManager(home, endpoint=hub.url).pull(NAME)
    assert pinned.sha256 in str(err.value)
    assert not list(home.models_dir.rglob("*.gguf*"))  # not kept: neither file nor partial


def test_a_non_sha_etag_still_verifies_against_the_pin(home, online, payload, pinned):
    # Before: a non-SHA ETag skipped verification silently. Now the pin is what counts.
    events = []
    with HubStub(payload, etag_sha256="W-1234-abcd") as hub:
        path = ModelManager(home, endpoint=hub.url).pull(NAME, on_event=events.append)
    assert path.read_bytes() == payload
    assert [e for e in events if e.stage == "verify"][-1].done == len(payload)


def test_wrong_size_is_refused_before_downloading(home, online, payload, pinned):
    with HubStub(payload + b"\0" * 10) as hub:  # a valid ETag for what it serves, not the pin
        with pytest.raises(ModelError, match="changed upstream") as err:
            ModelManager(home, endpoint=hub.url).pull(NAME)
        assert not _gets(hub)  # nothing fetched
    assert f"{len(payload):,}" in str(err.value) and f"{len(payload) + 10:,}" in str(err.value)


def test_a_file_changed_upstream_is_refused_before_downloading(home, online, payload, pinned):
    changed = payload[:-1] + b"\x7f"  # same size, re-uploaded: the Hub's SHA-256 differs
    with HubStub(changed) as hub:
        with pytest.raises(ModelError, match="changed upstream") as err:
            ModelManager(home, endpoint=hub.url).pull(NAME)
        assert not _gets(hub)
    assert hashlib.sha256(changed).hexdigest() in str(err.value)
    assert "Update SearChain" in err.value.hint


def test_a_resumed_download_is_verified_as_a_whole(home, online, payload, pinned):
    with HubStub(payload) as hub:
        manager = ModelManager(home, endpoint=hub.url)
        partial = manager._partial_path(FILENAME, hub.etag)
        half = len(payload) // 2
        partial.write_bytes(b"\0" * half)  # a corrupt earlier half, kept from another run
        with pytest.raises(ModelError, match="failed its checksum"):
            manager.pull(NAME)
        assert not partial.exists()
        assert _gets(hub)[-1][2] == f"bytes={half}-"  # it did resume, then caught the damage

        partial.write_bytes(payload[:half])  # a good earlier half resumes into a good file
        assert manager.pull(NAME).read_bytes() == payload
        assert _gets(hub)[-1][2] == f"bytes={half}-"


def test_a_partial_that_is_already_whole_is_verified_not_fetched_again(home, online, payload,
                                                                      pinned):
    # The last pull stopped after the last byte (while hashing, say): the next one hashes it.
    with HubStub(payload) as hub:
        manager = ModelManager(home, endpoint=hub.url)
        manager._partial_path(FILENAME, hub.etag).write_bytes(payload)
        assert manager.pull(NAME).read_bytes() == payload
        assert not _gets(hub)


def test_a_complete_file_is_verified_without_the_network(home, payload, pinned):
    # No `online` fixture: HF_HUB_OFFLINE=1, so any metadata request would fail.
    final = home.models_dir / FILENAME
    final.write_bytes(payload)
    events = []
    assert ModelManager(home).pull(NAME, on_event=events.append) == final
    assert [e for e in events if e.stage == "verify"][-1].done == len(payload)


def test_a_complete_looking_file_with_other_bytes_is_replaced(home, online, payload, pinned):
    final = home.models_dir / FILENAME
    final.write_bytes(b"\0" * len(payload))  # right size, wrong content: not "already complete"
    with HubStub(payload) as hub:
        assert ModelManager(home, endpoint=hub.url).pull(NAME).read_bytes() == payload
        assert _gets(hub)


def test_an_unpinned_entry_asks_first(home, online, payload, pinned, monkeypatch):
    _unpinned(monkeypatch, pinned)
    asked = []
    with HubStub(payload) as hub:
        manager = ModelManager(home, endpoint=hub.url)
        with pytest.raises(ModelError, match="no pinned SHA-256") as err:
            manager.pull(NAME)  # nobody to ask: refused
        assert "--allow-unverified" in err.value.hint and not _gets(hub)
        with pytest.raises(ModelError, match="Not downloaded"):
            manager.pull(NAME, confirm=lambda message: asked.append(message) or False)
        assert not _gets(hub)
        path = manager.pull(NAME, confirm=lambda message: asked.append(message) or True)
    assert path.read_bytes() == payload
    assert "the Hub's own SHA-256" in asked[0]  # the stub's ETag is a SHA-256: still checked


def test_an_unpinned_entry_behind_a_non_sha_etag_says_nothing_checks_it(home, online, payload,
                                                                       pinned, monkeypatch):
    _unpinned(monkeypatch, pinned)
    asked = []
    tampered = payload[:-1] + bytes([payload[-1] ^ 1])
    with HubStub(tampered, etag_sha256="proxy-etag") as hub:
        path = ModelManager(home, endpoint=hub.url).pull(
            NAME, confirm=lambda message: asked.append(message) or True)
    assert "not a SHA-256, so nothing can check it" in asked[0]
    assert path.read_bytes() == tampered  # the user was told and agreed


def test_an_unpinned_entry_is_checked_against_the_hubs_sha(home, online, payload, pinned,
                                                           monkeypatch):
    _unpinned(monkeypatch, pinned)
    tampered = payload[:-1] + bytes([payload[-1] ^ 1])
    with HubStub(tampered, etag_sha256=hashlib.sha256(payload).hexdigest()) as hub:
        with pytest.raises(ModelError, match="failed its checksum"):
            ModelManager(home, endpoint=hub.url).pull(NAME, confirm=lambda message: True)
