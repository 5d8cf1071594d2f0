"""Embedding checkpoints: the vectors of a build, written in numbered shards as they come.

Each shard is one ``.npz`` holding ``ids`` (int64, ascending) and ``vectors`` (float32), written
atomically, so a shard on disk is always complete. A killed build resumes after the largest id
found in the shards; nothing already embedded is embedded again. ``owner.json`` records which
embedder and passage text format made the shards, so vectors of two models never mix.
"""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from ...files import atomic_write_bytes, atomic_write_text
from ...errors import IndexError_
from ..layout import IndexLayout, rebuild_hint


@dataclass(frozen=True)
class ShardSummary:
    files: int
    vectors: int
    max_id: int  # 0 when there are none


class ShardStore:
    def __init__(self, layout: IndexLayout, corpus_name: str):
        self.layout = layout
        self.corpus_name = corpus_name

    # -- owner ----------------------------------------------------------------------------
    def owner(self) -> dict | None:
        f = self.layout.owner_file
        if not f.is_file():
            return None
        try:
            return json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise IndexError_(f"{f} of corpus '{self.corpus_name}' is damaged: {exc}",
                              hint=rebuild_hint(self.corpus_name)) from exc

    def set_owner(self, owner: dict) -> None:
        atomic_write_text(self.layout.owner_file, json.dumps(owner, indent=2))

    def clear(self) -> None:
        shutil.rmtree(self.layout.shards_dir, ignore_errors=True)

    # -- shards ---------------------------------------------------------------------------
    def write(self, seq: int, ids: np.ndarray, vectors: np.ndarray) -> Path:
        buf = io.BytesIO()
        np.savez(buf, ids=np.asarray(ids, dtype=np.int64), vectors=np.asarray(vectors, np.float32))
        path = self.layout.shard_file(seq)
        atomic_write_bytes(path, buf.getvalue())
        return path

    def _load(self, path: Path, key: str) -> np.ndarray:
        try:
            with np.load(path) as data:
                return data[key]
        except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
            raise IndexError_(f"Embedding checkpoint {path} of corpus '{self.corpus_name}' is "
                              f"damaged: {exc}", hint=rebuild_hint(self.corpus_name)) from exc

    def load_ids(self, path: Path) -> np.ndarray:
        """The passage ids of one shard (``IndexError_`` when the file is damaged)."""
        return self._load(path, "ids")

    def summary(self) -> ShardSummary:
        files = self.layout.shard_files()
        count = max_id = 0
        for f in files:
            ids = self._load(f, "ids")
            count += len(ids)
            if len(ids):
                max_id = max(max_id, int(ids[-1]))
        return ShardSummary(len(files), count, max_id)

    def next_seq(self) -> int:
        files = self.layout.shard_files()
        return int(files[-1].stem.split("-")[1]) + 1 if files else 1

    def count_after(self, after_id: int) -> int:
        """How many checkpointed vectors have an id above ``after_id`` (reads ids only)."""
        return sum(int((self._load(f, "ids") > after_id).sum()) for f in self.layout.shard_files())

    def iter_shards(self, after_id: int = 0) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """``(ids, vectors)`` of every shard, keeping only ids above ``after_id``."""
        for f in self.layout.shard_files():
            ids = self._load(f, "ids")
            if not len(ids) or ids[-1] <= after_id:
                continue
            vectors = self._load(f, "vectors")
            keep = ids > after_id
            yield ids[keep], vectors[keep]
