"""A thin wrapper around hnswlib: inner product on L2-normalised vectors, atomic saves.

Labels are the corpus's passage ids (``passages.id``), so a hit maps straight back to a row.
Saving goes through a temp file in the same folder, fsync and rename: a crash mid-save leaves
the previous index intact. The SHA-256 of the saved file goes into ``meta.json`` so that a
truncated or damaged file is caught before hnswlib reads it (hnswlib itself may crash on one).
"""

from __future__ import annotations

import array
import struct
import sys
import threading
from pathlib import Path

import numpy as np

from ...files import file_sha256

from ...files import atomic_write
from ...errors import IndexError_

SPACE = "ip"  # inner product == cosine on normalised vectors


# hnswlib's saveIndex header: six size_t, an int and a uint32, three size_t, a double, a size_t.
_HEADER = struct.Struct("<6QiI3QdQ")


def incomplete_save(path: Path) -> str | None:
    """Why an hnswlib file on disk is not the whole index, or None when it is.

    hnswlib writes through a C++ stream and never checks it: on a full disk ``save_index``
    returns normally and leaves a truncated file. The file's layout (header, the level-0
    block, then per element a uint32 byte count and that many link bytes) gives its exact
    length, so walking the per-element counts tells a complete file from a cut one without
    loading the graph.
    """
    size = Path(path).stat().st_size
    with open(path, "rb") as fh:
        head = fh.read(_HEADER.size)
        if len(head) < _HEADER.size:
            return f"{size} bytes, shorter than the header"
        count, per_element = _HEADER.unpack(head)[2:4]
        fh.seek(_HEADER.size + count * per_element)
        tail = fh.read()
    if _HEADER.size + count * per_element + 4 * count > size:
        return f"{size} bytes, too short for {count} elements"
    # Link blocks are whole uint32s, so the tail reads as uint32 words throughout.
    words = array.array("I")
    words.frombytes(tail[: len(tail) - len(tail) % 4])
    if sys.byteorder != "little":
        words.byteswap()
    pos = 0
    for _ in range(count):
        if pos >= len(words):
            return f"{size} bytes, cut inside the link lists"
        pos += 1 + words[pos] // 4
    if pos * 4 != len(tail):
        return f"{size} bytes, {len(tail) - pos * 4:+d} bytes off the expected length"
    return None


def estimated_memory(count: int, dim: int, m: int) -> int:
    """Bytes of RAM an hnswlib graph of ``count`` float32 vectors takes once built.

    Level 0 holds each vector (4·dim), its 2·M links (4 bytes each) and a label; upper levels,
    the label map and per-element locks add about 160 bytes more. Measured: 1,954 bytes per
    element for 60k × 384-d vectors at M = 32, where this gives 1,952.
    """
    return int(count) * (4 * dim + 8 * m + 160)


class HnswIndex:
    """An hnswlib index plus the parameters it was built with.

    ``search`` is safe to call from several threads at once (hnswlib's query path only reads
    the graph); ``add`` and ``set_ef`` are serialised against searches with a lock because
    hnswlib does not allow a resize or an ef change while a query is running.
    """

    def __init__(self, dim: int, *, m: int = 32, ef_construction: int = 200, ef: int = 128):
        import hnswlib

        if dim < 1:
            raise ValueError(f"dimension must be positive, got {dim}")
        self.dim = dim
        self.m = m
        self.ef_construction = ef_construction
        self._ef = ef
        self._index = hnswlib.Index(space=SPACE, dim=dim)
        self._lock = threading.RLock()
        self._initialised = False
        self.deleted = 0  # labels hidden by mark_deleted (hnswlib cannot count them itself)

    # -- construction -------------------------------------------------------------------
    def init_empty(self, capacity: int) -> None:
        self._index.init_index(max_elements=max(1, capacity), M=self.m,
                               ef_construction=self.ef_construction, random_seed=100)
        self._index.set_ef(self._ef)
        self._initialised = True

    def add(self, vectors: np.ndarray, labels: np.ndarray, *, num_threads: int = -1) -> None:
        """Add ``vectors`` (n x dim, float32) under ``labels`` (n ints), growing as needed."""
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        labels = np.asarray(labels, dtype=np.int64)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"expected vectors of shape (n, {self.dim}), got {vectors.shape}")
        if len(vectors) != len(labels):
            raise ValueError("vectors and labels differ in length")
        if not len(vectors):
            return
        with self._lock:
            if not self._initialised:
                self.init_empty(len(vectors))
            needed = self._index.get_current_count() + len(vectors)
            if needed > self._index.get_max_elements():
                # Grow geometrically so repeated small adds stay cheap.
                self._index.resize_index(max(needed, int(self._index.get_max_elements() * 1.5)))
            self._index.add_items(vectors, labels, num_threads=num_threads)

    def mark_deleted(self, labels) -> int:
        """Hide ``labels`` from searches; returns how many were not hidden already."""
        newly = 0
        with self._lock:
            for label in labels:
                try:
                    self._index.mark_deleted(int(label))
                    newly += 1
                    self.deleted += 1
                except RuntimeError:  # already deleted (hnswlib cannot list deleted labels)
                    pass
        return newly

    # -- queries ------------------------------------------------------------------------
    @property
    def count(self) -> int:
        return self._index.get_current_count() if self._initialised else 0

    @property
    def ef(self) -> int:
        return self._ef

    def set_ef(self, ef: int) -> None:
        with self._lock:
            self._ef = ef
            if self._initialised:
                self._index.set_ef(ef)

    def set_num_threads(self, n: int) -> None:
        self._index.set_num_threads(n)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` (labels, cosine similarities) per query row; fewer when the index is small."""
        queries = np.ascontiguousarray(np.atleast_2d(queries), dtype=np.float32)
        k = min(k, self.count - self.deleted)
        # hnswlib searches with max(ef, k) candidates itself, so a large k needs no set_ef. With
        # deleted labels it can still come up short of k and refuse: ask for fewer then.
        while k > 0:
            try:
                labels, dist = self._index.knn_query(queries, k=k, num_threads=1)
                return labels.astype(np.int64), (1.0 - dist).astype(np.float32)
            except RuntimeError:
                k //= 2
        empty = np.zeros((len(queries), 0))
        return empty.astype(np.int64), empty.astype(np.float32)

    def vectors(self, labels) -> np.ndarray:
        """The stored vectors of ``labels`` (n x dim); raises KeyError-like RuntimeError if absent."""
        if not len(labels):
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._index.get_items(list(labels)), dtype=np.float32)

    def labels(self) -> np.ndarray:
        return np.asarray(self._index.get_ids_list(), dtype=np.int64) if self._initialised else \
            np.zeros(0, dtype=np.int64)

    # -- persistence --------------------------------------------------------------------
    def save(self, path: Path) -> str:
        """Write the index atomically to ``path``; returns the file's SHA-256."""
        digest = ""

        def write(tmp: Path) -> None:
            nonlocal digest
            with self._lock:
                self._index.save_index(str(tmp))
            problem = incomplete_save(tmp)
            if problem:
                raise IndexError_(f"The vector index could not be written completely to {path} "
                                  f"({problem}); the disk is probably full. The previous index "
                                  "file is untouched.", hint="Free some disk space and build again.")
            digest = file_sha256(tmp)

        atomic_write(Path(path), write)
        return digest

    @classmethod
    def load(cls, path: Path, dim: int, *, expected_sha256: str | None, m: int = 32,
             ef_construction: int = 200, ef: int = 128, what: str = "index",
             hint: str | None = None) -> "HnswIndex":
        """Open a saved index after checking its checksum; damage raises ``IndexError_``."""
        path = Path(path)
        if not path.is_file():
            raise IndexError_(f"The vector index file {path} of {what} is missing.", hint=hint)
        if expected_sha256 is not None and file_sha256(path) != expected_sha256:
            raise IndexError_(
                f"The vector index file {path} of {what} is damaged (its checksum does not match "
                "the one recorded when it was built; it may be truncated or overwritten).",
                hint=hint,
            )
        index = cls(dim, m=m, ef_construction=ef_construction, ef=ef)
        try:
            index._index.load_index(str(path))
        except (RuntimeError, ValueError, MemoryError) as exc:
            raise IndexError_(f"The vector index file {path} of {what} cannot be loaded: {exc}",
                              hint=hint) from exc
        index._initialised = True
        index._index.set_ef(ef)
        return index
