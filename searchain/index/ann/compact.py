"""The compact vector index: short codes in RAM, exact rescoring from vectors on disk.

A float32 HNSW graph needs ~1.95 KB of RAM per 384-d passage (41 GB for the 21M passages of the
English Wikipedia). This index keeps ~350 bytes per passage in RAM instead (7.4 GB at 21M):

- **Codes** (faiss): an inverted file (``IVF<nlist>``: k-means cells; a query visits the
  ``nprobe`` closest cells) over 4-bit product-quantised vectors (``PQ<m>x4fs``: ``m`` half
  bytes each, dim/8 bytes in all, compared to the query by SIMD table look-ups, faiss's
  "fast scan"). Its ids are *rows* (see ``rowvectors.py``).
- **Refining** (``Refine(SQ6)``): the best ``REFINE_CANDIDATES`` rows by those 4-bit codes are
  re-ranked by a finer copy in RAM, 6 bits a dimension (288 bytes a 384-d vector). The 4-bit
  codes alone cannot tell apart the neighbours of a dense region: at 21M synthetic passages the
  true top 10 was only 77 % inside their best 200, but 99.95 % inside their best 3,000, and
  the 6-bit copy puts all of it in its best 50 (BENCHMARKS.md *Scale*).
- **Rescoring**: the best ``depth`` candidates are re-scored with their exact float32 vectors,
  memory-mapped from the embedding checkpoints, and the top ``k`` of those returned. Scores
  are exact cosines, so fusion with BM25 sees the same numbers as before.

Small corpora (below ``FLAT_LIMIT`` vectors) use ``Flat`` codes, the float32 vectors themselves:
search is then exact brute force, which at that size is as fast as a graph and needs no
training. It is the same class, files and search path; only the faiss factory string differs,
chosen by ``plan_spec`` from the vector count. When a corpus grows past what its codes were
trained for, or its codes predate the refining tier, the builder trains new ones from the
shards (``needs_retraining``): nothing is re-embedded.

The choice of faiss IVF-PQ over usearch (i8/b1 HNSW), faiss HNSW-SQ8 and hnswlib is measured in
``docs/retrieval.md`` (*Scale*).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from pathlib import Path

import numpy as np

from ...files import atomic_write
from ...errors import IndexError_

FLAT_LIMIT = 65_536  # below this many vectors: exact Flat codes (brute force beats a graph here)
PQ_DIMS_PER_CODE = 4  # 4-bit PQ over 4-dimension sub-vectors: dim/8 bytes (48 for 384-d)
DEFAULT_NPROBE = 32
DEFAULT_DEPTH = 50  # candidates rescored exactly per query (k is at most this, or more if asked)
UNREFINED_DEPTH = 200  # the same for indexes built before the refining codes (4-bit codes alone)
REFINE_BITS = 6  # the refining codes: faiss scalar quantiser, this many bits a dimension
REFINE = f"SQ{REFINE_BITS}"
REFINE_CANDIDATES = 3000  # rows the 4-bit codes propose to the refining codes per query
TRAIN_POINTS_PER_LIST = 40  # k-means sample per IVF cell (faiss warns below 39)
_SPEC = re.compile(r"^(?:Flat|IVF(\d+),PQ(\d+)x4fs(,Refine\(SQ[68]\))?)$")


def plan_spec(count: int, dim: int) -> str:
    """The faiss factory string for ``count`` vectors of ``dim`` dimensions.

    ``nlist`` ~ 2·sqrt(count), a power of two: cells of ~sqrt(count)/2 vectors keep both the
    coarse search and the scan of ``nprobe`` cells short (8,192 cells at 21M), and k-means
    training (``TRAIN_POINTS_PER_LIST`` samples per cell) within minutes on two cores. The
    ``Refine`` tier re-ranks the 4-bit codes' candidates (see the module docstring).
    """
    if count < FLAT_LIMIT:
        return "Flat"
    nlist = 2 ** max(8, min(16, round(math.log2(2 * math.sqrt(count)))))
    return f"IVF{nlist},PQ{pq_codes(dim)}x4fs,Refine({REFINE})"


def is_refined(spec: str) -> bool:
    """Whether codes built as ``spec`` carry the refining tier (indexes built before it do not)."""
    return ",Refine(" in spec


def unrefined(spec: str) -> bool:
    """IVF codes made by a version before the refining tier (searchable, but at 200 rows rescored
    and lower recall on large corpora; the next build retrains them from the shards)."""
    return spec.startswith("IVF") and not is_refined(spec)


def refine_bytes(dim: int) -> int:
    """Bytes of one vector's refining code."""
    return -(-dim * REFINE_BITS // 8)


def pq_codes(dim: int) -> int:
    """4-bit sub-quantisers per vector: dim/4, rounded down to an even divisor of ``dim``
    (faiss needs m | dim, and fast scan packs codes in pairs)."""
    target = max(2, dim // PQ_DIMS_PER_CODE)
    return next((m for m in range(target, 1, -1) if dim % m == 0 and m % 2 == 0), 2)


def nlist_of(spec: str) -> int:
    match = _SPEC.match(spec)
    if not match:
        raise ValueError(f"unknown compact index spec {spec!r}")
    return int(match.group(1) or 1)


def needs_retraining(spec: str, count: int, dim: int, deleted: int = 0) -> bool:
    """True when codes trained as ``spec`` no longer suit ``count`` live vectors: a Flat index
    past ``FLAT_LIMIT``, cells that would hold 4 times (or a quarter of) what they were sized
    for, more hidden (deleted) rows than live ones, or IVF codes made before the refining tier
    (their recall falls with N: 0.99 at 1M, 0.76 at 21M; the build plan says what retraining
    costs before it starts). The factor leaves room to grow, so adding a few passages never
    retrains 21M codes."""
    if deleted > max(count, 1000):
        return True
    if unrefined(spec):
        return True
    wanted = plan_spec(count, dim)
    if (spec == "Flat") != (wanted == "Flat"):
        return True
    ratio = nlist_of(wanted) / nlist_of(spec)
    return ratio >= 4 or ratio <= 0.25


def estimated_index_bytes(count: int, dim: int) -> dict[str, int]:
    """What a compact index of ``count`` ``dim``-d vectors costs (for build plans and checks).

    - ``ram_serve``: resident memory of the codes, row ids and cell centroids while searching
      (the shards are memory-mapped: their pages are cache, not process memory).
    - ``ram_build``: peak memory of building it (the codes, plus the k-means training sample
      and one shard batch).
    - ``ram_extend``: peak memory of adding rows to codes loaded from disk (a finished index
      growing, or a stopped build resuming): faiss copies the refining (or Flat) codes once
      to their new size, so for a moment they are held twice (~14 GB at 21M × 384).
    - ``disk``: the index files (``vectors.faiss``, ``rows.npy``, ``shard-table.npy``),
      *on top of* the float32 shards (4·dim bytes per vector), which the embedding stage writes
      anyway and rescoring reads in place.
    Measured against these in BENCHMARKS.md (*Scale*): within 10% at 1M and 5M.
    """
    spec = plan_spec(count, dim)
    per_row_ids = 8  # faiss's int64 ids, and rows.npy
    if spec == "Flat":
        codes = count * (4 * dim + per_row_ids)
        copied = count * 4 * dim
        centroids = train = 0
    else:
        nlist = nlist_of(spec)
        # Fast scan stores codes in blocks of 32 per cell: up to 31 padding slots per cell.
        codes = (count + 32 * nlist) * (pq_codes(dim) // 2) + count * per_row_ids + 64 * nlist
        copied = count * refine_bytes(dim)
        codes += copied
        centroids = nlist * dim * 4 + pq_codes(dim) * 16 * PQ_DIMS_PER_CODE * 4
        train = min(count, TRAIN_POINTS_PER_LIST * nlist) * dim * 4
    rows = count * 8
    batch = 65_536 * dim * 4 * 2
    serve = codes + centroids + rows
    return {"ram_serve": serve, "ram_build": serve + train + batch, "ram_extend": serve + copied + batch,
            "disk": serve}


def extension_fits(count: int, dim: int, memory_limit: int | None) -> bool:
    """Whether codes loaded from disk can grow to ``count`` rows within ``memory_limit`` bytes
    (None: no limit known). When they cannot but a fresh build can (its codes are reserved
    once, never copied), the builder trains new codes from the shards instead."""
    need = estimated_index_bytes(count, dim)
    return memory_limit is None or need["ram_extend"] <= memory_limit or \
        need["ram_build"] > memory_limit  # nothing fits: extending is no worse (the check refuses first)


class CompactIndex:
    """A faiss index over rows, with ``search`` returning candidate rows for exact rescoring."""

    def __init__(self, index, spec: str, deleted: np.ndarray | None = None):
        self.index = index
        self.spec = spec
        self.dim = index.d
        self.deleted = np.zeros(0, dtype=np.int64) if deleted is None else \
            np.asarray(deleted, dtype=np.int64)  # sorted rows hidden from searches
        self.refined = is_refined(spec)
        # Exact rescoring needs fewer candidates once the refining codes have ordered them.
        self.rescore_depth = DEFAULT_DEPTH if self.refined or spec == "Flat" else UNREFINED_DEPTH

    # -- construction -------------------------------------------------------------------
    @classmethod
    def create(cls, spec: str, dim: int) -> "CompactIndex":
        import faiss

        nlist_of(spec)  # validates
        index = faiss.index_factory(dim, spec if spec != "Flat" else "IDMap2,Flat",
                                    faiss.METRIC_INNER_PRODUCT)
        return cls(index, spec)

    @property
    def needs_training(self) -> bool:
        return not self.index.is_trained

    def training_size(self, count: int) -> int:
        """How many vectors ``train`` should be given (a random sample of the corpus)."""
        return 0 if self.spec == "Flat" else min(count, TRAIN_POINTS_PER_LIST * nlist_of(self.spec))

    def train(self, sample: np.ndarray) -> None:
        sample = np.ascontiguousarray(sample, dtype=np.float32)
        if len(sample) < nlist_of(self.spec):
            raise ValueError(f"{len(sample)} training vectors for {nlist_of(self.spec)} cells")
        self.index.train(sample)

    def add(self, vectors: np.ndarray, rows: np.ndarray) -> None:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dim:
            raise ValueError(f"expected vectors of shape (n, {self.dim}), got {vectors.shape}")
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        if self.refined:  # faiss's refine index numbers rows in the order they are added
            start = int(self.index.ntotal)
            if not np.array_equal(rows, np.arange(start, start + len(rows))):
                raise ValueError(f"rows must continue from {start} in order")
            self.index.add(vectors)
        else:
            self.index.add_with_ids(vectors, rows)

    def reserve(self, rows: int) -> None:
        """Allocate the refining codes of ``rows`` rows in one piece before adding them.

        Grown batch by batch, faiss's code vector doubles its buffer and copies the old one, so
        a fresh 21M-row build peaked at 11.8 GB for 6 GB of codes; reserved, it holds the codes
        once. (Extending a loaded index still copies them once, to the new size.)"""
        if not self.refined:
            return
        import faiss

        refine = faiss.downcast_index(self.index.refine_index)
        codes, size = refine.codes, refine.codes.size()
        wanted = int(rows) * int(refine.code_size)
        if wanted > size:
            codes.resize(wanted)  # capacity stays when shrinking back, so later adds don't move
            codes.resize(size)

    def hide_exactly(self, rows: np.ndarray) -> tuple[int, int]:
        """Hide ``rows`` (passages no longer in the corpus) from searches, and only them:
        ``(newly hidden, shown again)``. The builder passes every row whose passage is not in the
        corpus now, so a row hidden by mistake comes back (builds before the fix took passages
        committed while they ran for deleted ones). Fast-scan cells cannot drop entries in place
        (faiss's ``BlockInvertedLists::update_entries`` is not implemented), so hidden rows are
        filtered from the candidates; the builder retrains when they pile up
        (``needs_retraining``)."""
        rows = np.unique(np.asarray(rows, dtype=np.int64))
        newly = len(np.setdiff1d(rows, self.deleted))
        restored = len(np.setdiff1d(self.deleted, rows))
        self.deleted = rows
        return newly, restored

    # -- queries ------------------------------------------------------------------------
    @property
    def count(self) -> int:
        """Searchable rows (deleted ones excluded)."""
        return int(self.index.ntotal) - len(self.deleted)

    def search(self, query: np.ndarray, depth: int, *, nprobe: int = DEFAULT_NPROBE) -> np.ndarray:
        """Up to ``depth`` candidate rows for one query vector, best code score first."""
        import faiss

        depth = min(depth, self.count)
        if depth <= 0:
            return np.zeros(0, dtype=np.int64)
        q = np.ascontiguousarray(query, dtype=np.float32).reshape(1, -1)
        params = faiss.SearchParametersIVF(nprobe=nprobe) if self.spec != "Flat" else None
        if self.refined:
            params = faiss.IndexRefineSearchParameters(
                k_factor=max(1.0, REFINE_CANDIDATES / (depth + len(self.deleted))),
                base_index_params=params)
        _, rows = self.index.search(q, min(int(self.index.ntotal), depth + len(self.deleted)),
                                    params=params)
        rows = rows[0]
        rows = rows[rows >= 0]
        if len(self.deleted):
            rows = rows[~np.isin(rows, self.deleted)]
        return rows[:depth]

    # -- persistence --------------------------------------------------------------------
    def save(self, path: Path) -> str:
        """Write atomically to ``path``; returns the file's SHA-256.

        Written through Python (faiss's own writer buffers with ``fwrite`` and only prints an
        error when the final ``fclose`` fails), so a full disk is caught: it raises
        ``IndexError_`` and the previous file stays in place.
        """
        import faiss

        digest = hashlib.sha256()

        def write(tmp: Path) -> None:
            failure: list[OSError] = []
            with open(tmp, "wb") as fh:
                def sink(chunk: bytes) -> int:
                    try:
                        fh.write(chunk)
                    except OSError as exc:  # faiss turns it into RuntimeError("py err")
                        failure.append(exc)
                        raise
                    digest.update(chunk)
                    return len(chunk)

                try:
                    faiss.write_index(self.index, faiss.PyCallbackIOWriter(sink))
                except RuntimeError:
                    if failure:
                        raise failure[0] from None
                    raise
                fh.flush()
                os.fsync(fh.fileno())

        try:
            atomic_write(Path(path), write)
        except OSError as exc:  # ENOSPC, or EFBIG past a file-size limit
            raise IndexError_(f"The vector index could not be written completely to {path} "
                              f"({exc.strerror or exc}); the disk is probably full. The previous "
                              "index file is untouched.",
                              hint="Free some disk space and build again (it continues where it "
                              "stopped).") from exc
        return digest.hexdigest()

    @classmethod
    def load(cls, path: Path, spec: str, *, what: str, hint: str | None) -> "CompactIndex":
        import faiss

        path = Path(path)
        if not path.is_file():
            raise IndexError_(f"The vector index file {path} of {what} is missing.", hint=hint)
        try:
            index = faiss.read_index(str(path))
        except (RuntimeError, MemoryError) as exc:
            raise IndexError_(f"The vector index file {path} of {what} cannot be loaded: "
                              f"{str(exc).splitlines()[0][:200]}", hint=hint) from exc
        return cls(index, spec)
