"""Embedding on a GPU with the tokenizer off the critical path.

``SentenceTransformer.encode`` runs tokenise -> copy -> forward -> copy back one batch at a time on
one thread, so the GPU idles while the CPU tokenises the next batch and while each batch's result
is copied back. Here a helper thread tokenises batch i+1 (Hugging Face's Rust tokenizers release
the GIL) into pinned memory while the GPU runs batch i; inputs go up with non-blocking copies and
the finished vectors stay on the GPU until the whole call is done, so there is one device-to-host
copy per call instead of one per batch.

Texts are processed longest first (as ``encode`` does), so each batch pads to similar lengths;
the result comes back in the caller's order, L2-normalised, as float32.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Sequence

import numpy as np


def _tokenise(model, texts: list[str], pin: bool) -> dict:
    preprocess = getattr(model, "preprocess", None) or model.tokenize  # sentence-transformers < 6
    features = preprocess(texts)
    if not pin:
        return features
    return {k: (v.pin_memory() if hasattr(v, "pin_memory") else v) for k, v in features.items()}


def encode_on_gpu(model, texts: Sequence[str], *, batch_size: int, device: str) -> np.ndarray:
    """Unit-length float32 vectors of ``texts`` (n x dim), computed on ``device`` (see above)."""
    import torch

    texts = list(texts)
    if not texts:
        get_dim = getattr(model, "get_embedding_dimension", None) or \
            model.get_sentence_embedding_dimension  # renamed in sentence-transformers 6
        dim = get_dim()
        return np.zeros((0, dim), dtype=np.float32)
    order = np.argsort([-len(t) for t in texts], kind="stable")
    batches = [order[i:i + batch_size] for i in range(0, len(order), batch_size)]
    outputs = []
    pin = device.startswith("cuda")  # page-locked host memory makes the copy up asynchronous
    model.eval()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="tokenise") as pool, \
            torch.inference_mode():
        pending = pool.submit(_tokenise, model, [texts[i] for i in batches[0]], pin)
        for n, _ in enumerate(batches):
            features = pending.result()
            if n + 1 < len(batches):
                pending = pool.submit(_tokenise, model, [texts[i] for i in batches[n + 1]], pin)
            features = {k: (v.to(device, non_blocking=True) if hasattr(v, "to") else v)
                        for k, v in features.items()}
            vectors = model(features)["sentence_embedding"]
            outputs.append(torch.nn.functional.normalize(vectors.float(), p=2, dim=1))
        stacked = torch.cat(outputs).cpu().numpy()
    out = np.empty_like(stacked)
    out[order] = stacked
    return out
