"""A built corpus vector index, opened for search: codes in RAM, rows on disk, exact scores.

``VectorIndex.search`` asks the compact codes for ``depth`` candidate rows, reads their exact
vectors from the memory-mapped shards, and returns the best ``k`` by exact cosine, as passage
ids. ``similarities`` gives exact cosines for any passage ids (hybrid fusion scores BM25's
candidates with them). ``open_vector_index`` checks everything a search will touch first: the
metadata, the format, the checksum of the codes, the row files and every shard, so a damaged or
missing file is a clear error at open time, never a crash mid-search.
"""

from __future__ import annotations

import numpy as np

from ...errors import IndexError_
from ..layout import IndexLayout, IndexMeta, build_hint, repair_hint
from .compact import DEFAULT_NPROBE, CompactIndex
from .rowvectors import RowVectors

UPGRADE_HINT = ("Upgrade it with: searchain corpus index {name} (the new index is made from the "
                "saved embeddings; nothing is re-embedded).")


def outdated_message(corpus_name: str, meta: IndexMeta) -> str:
    return (f"The vector index of corpus '{corpus_name}' is in an older format ({meta.backend} "
            f"graph, format {meta.format_version}), which needs ~2 KB of memory per passage; this "
            "version searches a compact index instead.")


def read_array(path, what: str, hint: str) -> np.ndarray:
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        raise IndexError_(f"The index file {path} of {what} is missing.", hint=hint) from None
    except (OSError, ValueError, EOFError) as exc:
        raise IndexError_(f"The index file {path} of {what} is damaged: {exc}", hint=hint) from exc


class VectorIndex:
    """Search over one embedder's index of a corpus (see the module docstring)."""

    def __init__(self, codes: CompactIndex, row_ids: np.ndarray, vectors: RowVectors, *,
                 nprobe: int = DEFAULT_NPROBE, depth: int | None = None):
        self.codes = codes
        self.row_ids = row_ids  # passage id of each row, ascending
        self.vectors = vectors
        self.nprobe = nprobe
        self.depth = codes.rescore_depth if depth is None else depth

    @property
    def count(self) -> int:
        return self.codes.count

    @property
    def dim(self) -> int:
        return self.codes.dim

    def search(self, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-``k`` ``(passage ids, exact cosines)`` for one query vector, best first."""
        query = np.asarray(query, dtype=np.float32).ravel()
        rows = self.codes.search(query, max(k, self.depth), nprobe=self.nprobe)
        if not len(rows):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        sims = self.vectors.get(rows) @ query
        order = np.argsort(-sims, kind="stable")[:k]
        return self.row_ids[rows[order]], sims[order]

    def rows_of(self, ids) -> tuple[np.ndarray, np.ndarray]:
        """``(ids found, their rows)`` for the passage ids that have a live row."""
        ids = np.asarray(ids, dtype=np.int64)
        if not len(ids) or not len(self.row_ids):
            return ids[:0], ids[:0]
        pos = np.minimum(np.searchsorted(self.row_ids, ids), len(self.row_ids) - 1)
        found = self.row_ids[pos] == ids
        if len(self.codes.deleted):
            found &= ~np.isin(pos, self.codes.deleted)
        return ids[found], pos[found]

    def similarities(self, query: np.ndarray, ids) -> dict[int, float]:
        """Exact cosine of the query with the stored vectors of ``ids`` (those indexed)."""
        found, rows = self.rows_of(ids)
        if not len(found):
            return {}
        sims = self.vectors.get(rows) @ np.asarray(query, dtype=np.float32).ravel()
        return {int(i): float(s) for i, s in zip(found, sims)}


def open_vector_index(layout: IndexLayout, corpus_name: str, meta: IndexMeta, *,
                      verify_checksum: bool = True) -> VectorIndex:
    """Load the index ``meta`` describes; any missing, damaged or stale file raises ``IndexError_``."""
    from ...files import file_sha256

    what = f"corpus '{corpus_name}'"
    if meta.outdated:
        raise IndexError_(outdated_message(corpus_name, meta),
                          hint=UPGRADE_HINT.format(name=corpus_name))
    hint = repair_hint(corpus_name)
    path = layout.compact_file
    if not path.is_file():
        raise IndexError_(f"The vector index file {path} of {what} is missing.", hint=hint)
    if verify_checksum and file_sha256(path) != meta.checksum:
        raise IndexError_(f"The vector index file {path} of {what} is damaged (its checksum does "
                          "not match the one recorded when it was built).", hint=hint)
    codes = CompactIndex.load(path, meta.spec, what=what, hint=hint)
    row_ids = read_array(layout.rows_file, what, hint)
    table = read_array(layout.shard_table_file, what, hint)
    deleted = read_array(layout.deleted_file, what, hint) if layout.deleted_file.exists() else None
    if codes.dim != meta.dim or int(codes.index.ntotal) != meta.rows or len(row_ids) != meta.rows:
        raise IndexError_(f"The vector index files of {what} do not agree with each other "
                          f"({int(codes.index.ntotal)} codes, {len(row_ids)} row ids, "
                          f"{meta.rows} rows recorded).", hint=hint)
    vectors = RowVectors(layout, corpus_name, table, meta.dim)
    if vectors.count != meta.rows:
        raise IndexError_(f"The shard table of {what} lists {vectors.count} rows, the index "
                          f"{meta.rows}.", hint=hint)
    vectors.check_files()
    if deleted is not None:
        codes.deleted = np.asarray(deleted, dtype=np.int64)
    return VectorIndex(codes, row_ids, vectors)


def read_meta(layout: IndexLayout, corpus_name: str) -> IndexMeta:
    """``meta.json``, or ``IndexError_`` (with the build hint) when the index was never finished."""
    if not layout.meta_file.exists():
        raise IndexError_(f"Corpus '{corpus_name}' has no finished vector index.",
                          hint=build_hint(corpus_name) + " Keyword search (--retriever bm25) "
                          "needs no vector index.")
    return IndexMeta.read(layout.meta_file, corpus_name)
