"""Will the model fit? A pre-load estimate of RAM needs against what the machine has free.

llama.cpp memory-maps the weights and allocates the KV cache and compute buffers at load time; on
a machine without enough RAM it either fails deep inside C++ or, worse, swaps the desktop to a
halt. Checking first turns that into an error the user can act on.
"""

from __future__ import annotations

from ...errors import ModelError
from ...machine import available_memory_bytes
from .catalogue import VRAM_OVERHEAD_BYTES
from .gguf_info import ModelFacts

GIB = 1024 ** 3
# Compute buffers, tokenizer tables and the Python side: a generous fixed allowance.
OVERHEAD_BYTES = 256 * 1024 ** 2


def estimate_ram_bytes(facts: ModelFacts, n_ctx: int, n_gpu_layers: int) -> int:
    """Weights kept on the CPU + F16 KV cache + overhead. Offloaded layers live in GPU memory."""
    cpu_fraction = 1.0
    if n_gpu_layers != 0 and facts.n_layers:
        offloaded = facts.n_layers if n_gpu_layers < 0 else min(n_gpu_layers, facts.n_layers)
        cpu_fraction = 1.0 - offloaded / facts.n_layers
    kv = facts.kv_cache_bytes(n_ctx) * (cpu_fraction if n_gpu_layers != 0 else 1.0)
    return int(facts.file_size * cpu_fraction + kv + OVERHEAD_BYTES)


def estimate_vram_bytes(facts: ModelFacts, n_ctx: int) -> int:
    """GPU memory with every layer offloaded: weights + F16 KV cache + the GPU's compute buffers
    (the catalogue's allowance, so a found model and a catalogue entry are judged alike)."""
    return int(facts.file_size + facts.kv_cache_bytes(n_ctx) + VRAM_OVERHEAD_BYTES)


def check_memory(facts: ModelFacts, n_ctx: int, n_gpu_layers: int,
                 available: int | None = None) -> None:
    """Raise ``ModelError`` when the estimate exceeds the available RAM."""
    available = available_memory_bytes() if available is None else available
    if available is None:
        return
    need = estimate_ram_bytes(facts, n_ctx, n_gpu_layers)
    if need > available:
        raise ModelError(
            f"{facts.path.name} needs about {need / GIB:.1f} GiB of RAM (weights "
            f"{facts.file_size / GIB:.1f} GiB + context of {n_ctx} tokens), but only "
            f"{available / GIB:.1f} GiB is free.",
            hint="Lower the context size (Settings > LLM > n_ctx), pick a smaller or more "
                 "quantised model (e.g. Q4_K_M of a 3B model), or close other programs.",
        )
