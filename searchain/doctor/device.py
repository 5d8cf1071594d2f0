"""``searchain doctor``'s check of where embeddings run (``retrieval.embed_device``): the GPU
when torch has CUDA and sees one, else the CPU, with the fix when ``cuda`` is forced without it."""

from __future__ import annotations


def embed_device_check(settings):
    from .check import FAIL, OK, Check
    from ..index.embed.device import CUDA_HINT, cuda_build, cuda_status

    setting = settings.retrieval.embed_device
    usable, why = cuda_status() if cuda_build() or setting == "cuda" else (False, "torch is a CPU-only build")
    if usable:
        return Check("device", OK, "Embeddings run on the CPU, as retrieval.embed_device says." if setting == "cpu"
                     else f"Embeddings run on the GPU: {why}.")
    if setting == "cuda":
        return Check("device", FAIL, f"retrieval.embed_device is cuda, but {why}.", CUDA_HINT)
    return Check("device", OK, f"Embeddings run on the CPU ({why}). A CUDA GPU embeds about 30 times "
                 "faster: README, 'GPU embedding'.")
