"""The catalogue's pins: every entry names an exact file at an exact commit, with its licence,
context, chat template and the memory it needs at the app's default context."""

import re

import pytest

from searchain.config import LLMSettings
from searchain.llm.models.catalogue import CATALOGUE, DEFAULT_N_CTX, GIB

BY_NAME = {e.name: e for e in CATALOGUE}


def test_every_entry_is_pinned_to_a_commit_a_size_and_a_sha256():
    assert len(BY_NAME) == len(CATALOGUE)
    for e in CATALOGUE:
        assert re.fullmatch(r"[0-9a-f]{40}", e.revision), e.name  # a commit, never "main"
        assert e.sha256 is None or re.fullmatch(r"[0-9a-f]{64}", e.sha256), e.name
        assert e.filename.endswith(".gguf") and e.size_bytes > 500_000_000, e.name
        assert f"/resolve/{e.revision}/{e.filename}" in e.url
        assert e.context_length >= 32768 and e.n_layers and e.n_kv_heads and e.head_dim, e.name
    assert all(e.sha256 for e in CATALOGUE)  # every pin found; pull still handles a missing one


def test_the_current_tiers_are_there():
    assert BY_NAME["qwen3-4b"].filename == "Qwen_Qwen3-4B-Instruct-2507-Q4_K_M.gguf"
    assert BY_NAME["qwen3-8b"].thinking and BY_NAME["qwen3-14b"].thinking
    assert not BY_NAME["qwen3-4b"].thinking and not BY_NAME["qwen3-30b-a3b"].thinking
    assert "A3B-Instruct-2507" in BY_NAME["qwen3-30b-a3b"].filename
    assert BY_NAME["qwen2.5-1.5b"].size_bytes == 1_117_320_736


def test_licences_are_accurate_and_non_commercial_is_flagged():
    flagged = {e.name for e in CATALOGUE if e.non_commercial}
    assert flagged == {"qwen2.5-3b"}
    assert "Research" in BY_NAME["qwen2.5-3b"].licence
    assert BY_NAME["qwen2.5-3b"].size_bytes == 2_104_932_768  # the Hub's LFS size, 2.10 GB
    assert BY_NAME["qwen2.5-3b"].size_label == "2.1 GB"
    for name in ("qwen3-4b", "qwen3-8b", "qwen3-14b", "qwen3-30b-a3b", "qwen2.5-1.5b"):
        assert BY_NAME[name].licence == "Apache-2.0"
    assert BY_NAME["phi3.5-mini"].licence == "MIT"
    assert BY_NAME["llama3.1-8b"].licence.startswith("Llama 3.1 Community License")


def test_memory_needs_are_at_the_apps_default_context():
    assert DEFAULT_N_CTX == LLMSettings().n_ctx
    e = BY_NAME["qwen3-8b"]
    # 36 layers x 8 KV heads x 128 dims x 2 (K and V) x 2 bytes x 4096 tokens = 576 MiB.
    assert e.kv_cache_bytes() == 576 * 1024 ** 2
    assert e.ram_bytes() > e.size_bytes + e.kv_cache_bytes()
    assert e.vram_bytes() > e.size_bytes + e.kv_cache_bytes()
    assert e.ram_bytes(16384) > e.ram_bytes()
    facts = e.facts()
    assert facts["n_ctx"] == DEFAULT_N_CTX and facts["vram_bytes"] == e.vram_bytes()
    assert facts["verified"] is True and facts["revision"] == e.revision
    # The tiers fit the hardware they are named for.
    assert BY_NAME["qwen3-8b"].vram_bytes() < 8 * GIB
    assert BY_NAME["qwen3-14b"].vram_bytes() < 12 * GIB
    assert BY_NAME["qwen3-30b-a3b"].vram_bytes() < 24 * GIB
    assert BY_NAME["qwen2.5-1.5b"].ram_bytes() < 2 * GIB


@pytest.mark.parametrize("entry", CATALOGUE, ids=lambda e: e.name)
def test_size_labels_are_the_exact_size(entry):
    from searchain.units import size

    assert entry.size_label == size(entry.size_bytes)
    value, unit = entry.size_label.split()
    assert abs(float(value) * {"GB": 1e9, "MB": 1e6}[unit] - entry.size_bytes) <= 0.05 * {"GB": 1e9, "MB": 1e6}[unit]
