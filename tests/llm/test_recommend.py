"""The catalogue recommends the model that fits this machine, and says why (faked machines)."""

import pytest

from searchain.llm.models import recommend as rec
from searchain.llm.models.recommend import MachineFacts, recommend

GIB = 1024 ** 3


def cpu(total_gib, free_gib=None, **kw):
    free = total_gib * 0.7 if free_gib is None else free_gib
    return MachineFacts(int(total_gib * GIB), int(free * GIB), **kw)


def gpu(vram_gib, ram_gib=32, name="NVIDIA RTX", build=True):
    return MachineFacts(int(ram_gib * GIB), int(ram_gib * 0.7 * GIB), name, int(vram_gib * GIB),
                        build)


@pytest.mark.parametrize("machine, expected", [
    (cpu(8), "qwen2.5-1.5b"),          # low RAM
    (cpu(16), "qwen3-4b"),             # a 16 GB CPU machine
    (cpu(64), "qwen3-30b-a3b"),        # lots of RAM: the MoE runs fast on CPU
    (cpu(64, free_gib=10), "qwen3-4b"),  # ... but not while the RAM is taken
    (gpu(8), "qwen3-8b"),
    (gpu(12), "qwen3-14b"),
    (gpu(16), "qwen3-14b"),
    (gpu(24), "qwen3-30b-a3b"),
    (gpu(6), "qwen3-4b"),
])
def test_the_tier_that_fits(machine, expected):
    r = recommend(machine)
    assert r.entry.name == expected, r.reason
    assert r.reason.startswith(expected)
    assert r.fits(r.entry)


def test_the_reason_names_the_facts_it_used():
    r = recommend(gpu(12, name="NVIDIA GeForce RTX 4070"))
    assert r.on_gpu and "NVIDIA GeForce RTX 4070" in r.reason and "12.0 GiB" in r.reason
    assert "9.6 GiB" in r.reason and "4096-token" in r.reason
    assert not r.fits(next(e for e in rec.CATALOGUE if e.name == "qwen3-30b-a3b"))


def test_a_cpu_only_build_does_not_use_the_gpu_and_says_so():
    r = recommend(gpu(24, ram_gib=16, build=False, name="NVIDIA RTX 4090"))
    assert r.entry.name == "qwen3-4b" and not r.on_gpu
    assert "CPU-only" in r.reason and "RTX 4090" in r.reason and "docs/llm.md" in r.reason


def test_a_gpu_build_with_unknown_memory_falls_back_to_the_cpu_rule():
    r = recommend(MachineFacts(16 * GIB, 12 * GIB, None, None, True))
    assert r.entry.name == "qwen3-4b" and "memory is unknown" in r.reason


def test_non_commercial_models_are_never_recommended():
    from dataclasses import replace

    entries = tuple(replace(e, non_commercial=True) if e.name == "qwen3-4b" else e
                    for e in rec.CATALOGUE)
    assert recommend(cpu(16), entries).entry.name == "qwen2.5-1.5b"


def test_nothing_fits_a_tiny_machine():
    r = recommend(cpu(2, free_gib=0.5))
    assert r.entry is None and "No catalogue model fits" in r.reason


def test_a_larger_context_needs_more():
    assert recommend(gpu(8)).entry.name == "qwen3-8b"
    # At 32k tokens Qwen3's KV cache alone is 4.5 GiB: only the 1.5B (0.9 GiB of cache) fits.
    assert recommend(gpu(8), n_ctx=32768).entry.name == "qwen2.5-1.5b"


def test_probing_reads_nvidia_smi_and_the_build(monkeypatch, tmp_path):
    class Done:
        stdout = "NVIDIA T400, 2048\nNVIDIA RTX A4000, 16376\n"

    monkeypatch.setattr(rec.shutil, "which", lambda exe: "/usr/bin/nvidia-smi")
    monkeypatch.setattr(rec.subprocess, "run", lambda *a, **k: Done())
    assert rec._nvidia_gpu() == ("NVIDIA RTX A4000", 16376 * 1024 ** 2)
    monkeypatch.setattr(rec.shutil, "which", lambda exe: None)
    assert rec._nvidia_gpu() == (None, None)

    lib = tmp_path / "llama_cpp" / "lib"
    lib.mkdir(parents=True)
    (lib / "libggml-cpu.so").touch()

    class Spec:
        submodule_search_locations = [str(tmp_path / "llama_cpp")]

    from searchain import machine

    monkeypatch.setattr(machine.importlib.util, "find_spec", lambda name: Spec())
    monkeypatch.setattr(rec.sys, "platform", "linux")
    assert rec.gpu_build_installed() is False
    (lib / "libggml-cuda.so").touch()
    assert rec.gpu_build_installed() is True


def test_machine_facts_on_this_machine():
    facts = rec.machine_facts()
    assert facts.ram_total_bytes and facts.ram_total_bytes > 0
    assert isinstance(facts.gpu_build, bool)
