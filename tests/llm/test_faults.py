"""Every way loading a model can go wrong gives a clear ModelError or a visible warning."""

import gguf
import numpy as np
import pytest

from searchain.config import LLMSettings
from searchain.errors import ModelError
from searchain.llm import gpu
from searchain.llm.llama import llama_cpp_backend
from searchain.llm.base import GenerationParams
from searchain.llm.events import LLMWarning
from searchain.llm.loader import load_llm
from searchain.llm.models import memory
from searchain.llm.models.gguf_info import read_model_facts


def _settings(path, **kw):
    # In this process: several tests patch the loader's own functions, which a worker would not see.
    # The worker's handling of the same faults is in test_isolated.py.
    kw.setdefault("isolation", "inprocess")
    return LLMSettings(model_path=str(path), n_ctx=256, n_threads=1, **kw)


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.gguf"
    with pytest.raises(ModelError, match="nope.gguf does not exist") as info:
        load_llm(_settings(missing))
    assert "models pull" in info.value.hint


def test_no_model_set_and_folder_instead_of_file(tmp_path):
    with pytest.raises(ModelError, match="No model file"):
        load_llm(LLMSettings())
    with pytest.raises(ModelError, match="not a file"):
        read_model_facts(tmp_path)


def test_not_a_gguf(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_text("<html>404 Not Found</html>")
    with pytest.raises(ModelError, match="not a GGUF file"):
        load_llm(_settings(fake))


def test_truncated_in_the_tensor_data(tiny_gguf, tmp_path):
    cut = tmp_path / "cut.gguf"
    data = tiny_gguf.read_bytes()
    cut.write_bytes(data[: len(data) * 2 // 3])
    with pytest.raises(ModelError, match="is damaged or truncated|is truncated") as info:
        load_llm(_settings(cut))
    assert str(cut) in str(info.value)


def test_truncated_in_the_header(tiny_gguf, tmp_path):
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(tiny_gguf.read_bytes()[:300])
    with pytest.raises(ModelError, match="damaged or truncated"):
        load_llm(_settings(cut))


def test_valid_gguf_llama_cpp_cannot_load(tmp_path):
    odd = tmp_path / "odd.gguf"
    w = gguf.GGUFWriter(str(odd), "no-such-architecture")
    w.add_tensor("weird.weight", np.zeros((4, 4), dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    assert read_model_facts(odd).architecture == "no-such-architecture"
    with pytest.raises(ModelError, match="llama.cpp could not load"):
        load_llm(_settings(odd))


def test_too_little_memory(tiny_gguf, monkeypatch):
    monkeypatch.setattr(memory, "available_memory_bytes", lambda: 64 * 1024 ** 2)
    with pytest.raises(ModelError, match="needs about .* GiB of RAM") as info:
        load_llm(_settings(tiny_gguf))
    assert "n_ctx" in info.value.hint


def test_memory_estimate_follows_context_and_offload(tiny_gguf):
    facts = read_model_facts(tiny_gguf)
    small, big = (memory.estimate_ram_bytes(facts, n, 0) for n in (512, 4096))
    assert big - small == facts.kv_cache_bytes(4096) - facts.kv_cache_bytes(512) > 0
    assert memory.estimate_ram_bytes(facts, 4096, -1) < big  # all layers on the GPU
    assert memory.available_memory_bytes() > 0


def test_gpu_offload_failure_falls_back_to_cpu_with_a_warning(tiny_gguf, monkeypatch):
    # Induce the fault: pretend the build can offload, and make every GPU load fail the way
    # llama.cpp does when CUDA/VRAM is broken. The CPU load that follows is the real one.
    monkeypatch.setattr(gpu, "gpu_offload_supported", lambda: True)
    real_open = llama_cpp_backend.open_llama
    attempts = []

    def open_llama(path, *, n_gpu_layers, **kw):
        attempts.append(n_gpu_layers)
        if n_gpu_layers != 0:
            raise ModelError("llama.cpp could not load it: CUDA error: out of memory")
        return real_open(path, n_gpu_layers=n_gpu_layers, **kw)

    monkeypatch.setattr(llama_cpp_backend, "open_llama", open_llama)
    events = []
    llm = load_llm(_settings(tiny_gguf, n_gpu_layers=-1), on_event=events.append)
    try:
        assert attempts == [-1, 0]
        assert llm.n_gpu_layers == 0
        assert len(llm.warnings) == 1 and events == llm.warnings
        assert isinstance(events[0], LLMWarning)
        assert "GPU offload failed" in events[0].message and "CUDA error" in events[0].message
        assert llm.complete("works", GenerationParams(max_tokens=3)).usage.completion_tokens == 3
    finally:
        llm.close()


def test_auto_offload_follows_the_build(tiny_gguf):
    llm = load_llm(_settings(tiny_gguf, n_gpu_layers=-1))
    try:
        assert llm.n_gpu_layers == (-1 if gpu.gpu_offload_supported() else 0)
        assert llm.warnings == []
    finally:
        llm.close()


@pytest.mark.skipif(gpu.gpu_offload_supported(), reason="this build can offload to a GPU")
def test_explicit_layers_on_a_cpu_only_build_warn(tiny_gguf):
    events = []
    llm = load_llm(_settings(tiny_gguf, n_gpu_layers=12), on_event=events.append)
    try:
        assert llm.n_gpu_layers == 0
        assert "cannot offload" in events[0].message
    finally:
        llm.close()


def test_closed_model_says_so(tiny_gguf):
    llm = load_llm(_settings(tiny_gguf))
    llm.close()
    with pytest.raises(ModelError, match="closed"):
        llm.complete("x")


def test_kv_cache_uses_the_key_and_value_widths_the_file_declares(tmp_path):
    """Qwen3 declares 128-wide heads although its width / heads is 80: the RAM check must use 128."""
    path = tmp_path / "qwen3-like.gguf"
    w = gguf.GGUFWriter(str(path), "qwen3")
    w.add_block_count(2)
    w.add_embedding_length(2560)
    w.add_head_count(32)
    w.add_head_count_kv(8)
    w.add_key_length(128)
    w.add_value_length(128)
    w.add_tensor("t", np.zeros(4, dtype=np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    facts = read_model_facts(path)
    assert (facts.key_length, facts.value_length) == (128, 128)
    assert facts.kv_cache_bytes(1000) == 2 * 1000 * 2 * 8 * (128 + 128)  # not 80-wide heads
