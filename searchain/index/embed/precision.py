"""The arithmetic an embedding model runs in: float32, or bfloat16 matrix products.

``bf16`` runs the model under ``torch.autocast``: matrix products in bfloat16, while layer
norms, softmax and the pooled output stay float32. On CPUs with native bfloat16 instructions
(AVX512-BF16 or AMX) this embeds 2.1-2.8 times faster, and the vectors keep a cosine above
0.9999 with float32 ones (measured for MiniLM and mpnet on MuSiQue passages; see
docs/retrieval.md), so an index built either way serves queries embedded either way and the
model id does not change. Without those instructions bfloat16 is emulated and slower, so
``auto`` only picks it where the CPU has them.

``fp16`` casts the model's weights to float16 (what GPUs run fastest); ``auto`` picks it on CUDA,
where it keeps a cosine above 0.9999 with float32 vectors too (BENCHMARKS.md, GPU embedding).
"""

from __future__ import annotations

import contextlib
from typing import ContextManager

PRECISIONS = ("auto", "fp32", "bf16", "fp16")
_BF16_FLAGS = frozenset({"avx512_bf16", "amx_bf16"})


def cpu_has_native_bf16() -> bool:
    """Whether this CPU multiplies bfloat16 in hardware (AVX512-BF16 or AMX tiles).

    Read from ``/proc/cpuinfo`` where there is one, so that deciding costs no torch import (the
    CLI and the settings dialog ask); elsewhere torch's own CPU checks answer.
    """
    flags = _cpuinfo_flags()
    if flags is not None:
        return bool(flags & _BF16_FLAGS)
    return _torch_has_native_bf16()


def _cpuinfo_flags(path: str = "/proc/cpuinfo") -> frozenset[str] | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("flags"):
                    return frozenset(line.partition(":")[2].split())
    except OSError:
        return None
    return None


def _torch_has_native_bf16() -> bool:
    import torch

    checks = (getattr(torch.cpu, "_is_avx512_bf16_supported", None),
              getattr(torch.cpu, "_is_amx_tile_supported", None))
    for check in checks:
        try:
            if check is not None and check():
                return True
        except Exception:  # a private torch helper; treat any failure as "no"
            continue
    return False


def resolve_precision(setting: str, device: str) -> str:
    """``fp32`` or ``bf16`` for the setting ``auto | fp32 | bf16`` on ``device``."""
    if setting not in PRECISIONS:
        raise ValueError(f"embedding precision must be one of {', '.join(PRECISIONS)}; got {setting!r}")
    if setting != "auto":
        return setting
    if device.startswith("cuda"):
        return "fp16"
    return "bf16" if cpu_has_native_bf16() else "fp32"


def precision_context(precision: str, device: str) -> ContextManager:
    """The context the model's forward passes run in for ``precision`` (``fp16`` needs none: the
    weights themselves are cast when the model loads)."""
    if precision != "bf16":
        return contextlib.nullcontext()
    import torch

    return torch.autocast(device_type="cuda" if device.startswith("cuda") else "cpu",
                          dtype=torch.bfloat16)
