"""Exact float32 vectors for rescoring, read in place from the embedding checkpoints.

The compact index (``compact.py``) holds only short codes in memory; the exact vectors of its
candidates are read from the shards under ``index/shards`` that the embedding stage wrote anyway.
``np.savez`` stores each array uncompressed inside the ``.npz`` zip, so a shard's ``vectors``
array is a plain run of float32 bytes at a fixed offset: it is memory-mapped, never loaded. A
search touches one page per candidate (``MADV_RANDOM``: no read-ahead of pages nobody asked for),
so a 21M-passage corpus (32 GB of vectors) costs no second copy on disk and only the pages its
queries touched in memory: clean page cache the OS may drop at any time (~4 KB per candidate,
so at most ~0.2 GB after 1,000 queries of 50 candidates; BENCHMARKS.md reports both the peak
RSS and its anonymous part). A build, which reads every shard, releases each page as soon as its
rows are copied out (``release_pages``: ``MADV_DONTNEED``, the pages stay in the page cache);
serving keeps them, since re-faulting them measured 3 times slower (14 vs 5 ms a query at 1M).

Rows number the vectors in shard order (shard by shard, in each shard's order): row ``r`` is the
``r``-th vector across the shards. ``rows.npy`` gives each row's passage id (ascending, as the
shards are); ``shard-table.npy`` gives each shard's sequence number, row count and file size, so
a missing or replaced shard is caught when the index is opened, not in the middle of a search.
"""

from __future__ import annotations

import mmap
import struct
import zipfile
from pathlib import Path

import numpy as np

from ...errors import IndexError_
from ..layout import IndexLayout, rebuild_hint

_DONTNEED = getattr(mmap, "MADV_DONTNEED", None)  # not on Windows: pages then stay mapped
_RANDOM = getattr(mmap, "MADV_RANDOM", None)
_LOCAL_HEADER = struct.Struct("<4s22xHH")  # signature ... file name length, extra field length


def shard_vectors(path: Path) -> np.ndarray:
    """The ``vectors`` array of one shard, memory-mapped (loaded when it is stored compressed)."""
    return _map_shard(path)[0]


def _map_shard(path: Path) -> tuple[np.ndarray, mmap.mmap | None]:
    """``(vectors, the mapping behind them or None when they were loaded)``."""
    with zipfile.ZipFile(path) as zf:
        info = zf.getinfo("vectors.npy")
        if info.compress_type != zipfile.ZIP_STORED:
            with zf.open(info) as member:
                return np.lib.format.read_array(member), None
    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        signature, name_len, extra_len = _LOCAL_HEADER.unpack(fh.read(_LOCAL_HEADER.size))
        if signature != b"PK\x03\x04":
            raise ValueError("bad zip local header")
        fh.seek(info.header_offset + _LOCAL_HEADER.size + name_len + extra_len)
        version = np.lib.format.read_magic(fh)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else \
            np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(fh)
        offset = fh.tell()
        count = int(np.prod(shape))
        if fortran or not count:
            fh.seek(offset)
            return np.fromfile(fh, dtype=dtype, count=count).reshape(shape, order="F" if fortran else "C"), None
        start = offset - offset % mmap.ALLOCATIONGRANULARITY
        mapping = mmap.mmap(fh.fileno(), offset - start + count * dtype.itemsize,
                            access=mmap.ACCESS_READ, offset=start)
    array = np.frombuffer(mapping, dtype=dtype, count=count, offset=offset - start).reshape(shape)
    return array, mapping


class RowVectors:
    """Row -> exact vector, over the shards named in a shard table (see the module docstring)."""

    def __init__(self, layout: IndexLayout, corpus_name: str, table: np.ndarray, dim: int, *,
                 release_pages: bool = False):
        self.layout = layout
        self.corpus_name = corpus_name
        self.table = np.asarray(table, dtype=np.int64).reshape(-1, 3)  # seq, rows, file size
        self.dim = dim
        self.starts = np.concatenate([[0], np.cumsum(self.table[:, 1])]).astype(np.int64)
        self._maps: dict[int, tuple[np.ndarray, mmap.mmap | None]] = {}
        self.release_pages = release_pages  # drop pages after each read (bulk reads, builds)

    @property
    def count(self) -> int:
        return int(self.starts[-1])

    def check_files(self) -> None:
        """Raise ``IndexError_`` when a shard the index needs is missing or was replaced."""
        for seq, rows, size in self.table:
            path = self.layout.shard_file(int(seq))
            try:
                actual = path.stat().st_size
            except FileNotFoundError:
                raise IndexError_(
                    f"The vector file {path}, which search of corpus '{self.corpus_name}' reads to "
                    "rescore its results exactly, is missing.",
                    hint="Restore it from a backup, or " + rebuild_hint(self.corpus_name)) from None
            if actual != size:
                raise IndexError_(
                    f"The vector file {path} of corpus '{self.corpus_name}' has {actual} bytes, "
                    f"not the {size} it had when the index was built (replaced or damaged).",
                    hint="Restore it from a backup, or " + rebuild_hint(self.corpus_name))

    def _shard(self, k: int) -> tuple[np.ndarray, mmap.mmap | None]:
        mapped = self._maps.get(k)
        if mapped is None:
            path = self.layout.shard_file(int(self.table[k, 0]))
            try:
                mapped = _map_shard(path)
                vectors = mapped[0]
            except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError) as exc:
                raise IndexError_(f"The vector file {path} of corpus '{self.corpus_name}' cannot "
                                  f"be read: {exc}", hint=rebuild_hint(self.corpus_name)) from exc
            if vectors.shape != (self.table[k, 1], self.dim):
                raise IndexError_(f"The vector file {path} of corpus '{self.corpus_name}' holds "
                                  f"{vectors.shape} vectors, the index expects "
                                  f"({self.table[k, 1]}, {self.dim}).",
                                  hint=rebuild_hint(self.corpus_name))
            if mapped[1] is not None and _RANDOM is not None and not self.release_pages:
                mapped[1].madvise(_RANDOM)
            self._maps[k] = mapped
        return mapped

    def get(self, rows) -> np.ndarray:
        """The vectors of ``rows`` (n x dim float32), in the order given."""
        rows = np.asarray(rows, dtype=np.int64)
        out = np.empty((len(rows), self.dim), dtype=np.float32)
        if not len(rows):
            return out
        shard_of = np.searchsorted(self.starts, rows, side="right") - 1
        for k in np.unique(shard_of):
            pick = shard_of == k
            vectors, mapping = self._shard(int(k))
            out[pick] = vectors[rows[pick] - self.starts[k]]
            if self.release_pages and mapping is not None and _DONTNEED is not None:
                mapping.madvise(_DONTNEED)  # out of this process; still in the page cache
        return out

    def release(self) -> None:
        """Drop the memory maps (their pages leave this process's resident memory)."""
        self._maps.clear()
