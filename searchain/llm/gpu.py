"""GPU offload: can this llama-cpp-python build offload, and how many layers to ask for."""

from __future__ import annotations


def gpu_offload_supported() -> bool:
    """True when llama-cpp-python was built with a GPU backend (CUDA, Metal, Vulkan, ROCm...)."""
    try:
        import llama_cpp
    except ImportError:
        return False
    return bool(llama_cpp.llama_supports_gpu_offload())


def resolve_gpu_layers(requested: int) -> int:
    """``-1`` (auto) becomes "all layers" (llama.cpp's -1) when the build can offload, else 0;
    an explicit count is kept when the build can offload, else 0."""
    if requested == 0 or not gpu_offload_supported():
        return 0
    return -1 if requested < 0 else requested
