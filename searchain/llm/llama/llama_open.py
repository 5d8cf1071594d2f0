"""Opening a GGUF with llama-cpp-python: the one place a ``llama_cpp.Llama`` is constructed."""

from __future__ import annotations

import os
from pathlib import Path

from ...errors import ModelError


def open_llama(path: Path, *, n_gpu_layers: int, n_ctx: int, n_threads: int, n_batch: int,
               seed: int):
    """Construct the ``llama_cpp.Llama``; llama.cpp's load failure becomes ``ModelError``.

    A module-level function on purpose: it is the one place where a model is opened, so tests
    can induce a GPU-side load failure here and watch the CPU fallback happen.
    """
    import llama_cpp

    try:
        return llama_cpp.Llama(
            model_path=str(path), n_gpu_layers=n_gpu_layers, n_ctx=n_ctx, n_batch=n_batch,
            n_ubatch=n_batch, n_threads=n_threads or None, n_threads_batch=n_threads or None,
            seed=seed, logits_all=False, verbose=bool(os.environ.get("SEARCHAIN_LLAMA_VERBOSE")),
        )
    except (ValueError, RuntimeError, OSError) as exc:
        raise ModelError(
            f"llama.cpp could not load {path}: {exc}",
            hint="The file may be damaged or use an architecture this llama-cpp-python build "
                 "does not know; set SEARCHAIN_LLAMA_VERBOSE=1 to see llama.cpp's log.",
        ) from exc
