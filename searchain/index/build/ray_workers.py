"""What runs inside Ray's actors for ``ray_embed``: the passage reader and the embedding worker.

Ray ships these classes to its workers by module path, so every node imports this module (and
so needs SearChain installed, with the ``cluster`` extra); it imports nothing of Ray itself.
"""

from __future__ import annotations

import os
import socket
import sqlite3
from pathlib import Path

import numpy as np

from ..layout import doc_text


class PassageReader:
    """Reads the text to embed of id ranges from ``passages.db`` (on the machine holding it)."""

    def __init__(self, db: str, corpus: str):
        self.conn = sqlite3.connect(db, check_same_thread=False)
        self.conn.execute("PRAGMA busy_timeout=10000")
        self.corpus = corpus

    def __call__(self, batch: dict) -> dict:
        from ...types import Passage

        ids, texts = [], []
        for lo, hi in zip(batch["lo"], batch["hi"]):
            for pid, title, text in self.conn.execute(
                    "SELECT id, title, text FROM passages WHERE id > ? AND id <= ? ORDER BY id",
                    (int(lo), int(hi))):
                ids.append(pid)
                texts.append(doc_text(Passage(self.corpus, "", title, text)))
        return {"id": np.asarray(ids, dtype=np.int64), "text": np.asarray(texts, dtype=object)}


class EmbedWorker:
    """One embedding actor: an ``Embedder`` on this actor's GPU or CPU cores."""

    def __init__(self, name: str, device: str, models_dir: str, precision: str, batch_size: int,
                 gpu_batch_size: int, threads: int):
        from ..embed.embedder import Embedder

        if device == "cpu":
            import torch

            torch.set_num_threads(max(1, threads))
        # The build's model, precision and batch sizes; the device is this actor's (its GPU, or
        # CPU cores), which the Embedder turns into fp16 and GPU batches as on a local build.
        self.embedder = Embedder(name, device, models_dir=Path(models_dir) if models_dir else None,
                                 precision=precision, batch_size=batch_size,
                                 gpu_batch_size=gpu_batch_size)
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        _ = self.embedder.dim  # load now: a model missing on this node fails before any work

    def __call__(self, batch: dict) -> dict:
        texts = [str(t) for t in batch["text"]]
        vectors = self.embedder.encode_batch(texts)
        return {"id": batch["id"], "vector": vectors, "worker": np.full(len(texts), self.worker)}
