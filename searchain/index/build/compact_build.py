"""The index stage of a build: compact codes for every shard vector, resumable, atomic.

1. Open what exists: a finished index whose codes still suit the corpus is extended (only rows
   of shards it has not seen are added); an unfinished one (``vectors.faiss.partial`` and
   ``partial.json``, written every ``CHECKPOINT_ROWS`` rows) is resumed; anything else (no
   index, format 1, damaged, or codes trained for a much smaller corpus) starts afresh from the
   shards. Nothing here ever embeds: the shards hold every vector.
2. Train (fresh IVF codes only): k-means cells and PQ codebooks from a random sample of rows.
3. Add the rows of the new shards, in shard order, in bounded batches.
4. Hide rows whose passage left the corpus (``deleted.npy``).
5. Save: the codes, row files and deleted rows, each atomically, then ``meta.json`` last; the
   checkpoint goes only after ``meta.json`` is written. A kill or a full disk at any point
   leaves the previous finished index usable and the work done so far resumable.

Memory stays bounded: the codes (~350 bytes a row: 4-bit and 6-bit codes, row id), the
training sample and one shard at a time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...files import atomic_write, atomic_write_text
from ...errors import IndexError_
from ...events import CancelToken, EventCallback, Progress, check, emit
from ...files import file_sha256
from ..ann.compact import CompactIndex, extension_fits, needs_retraining, plan_spec
from ..ann.rowvectors import RowVectors
from ..layout import BACKEND, DOC_FORMAT, FORMAT_VERSION, IndexLayout, IndexMeta, rebuild_hint
from .shards import ShardStore

CHECKPOINT_ROWS = 2_000_000  # rows added between two checkpoints of an unfinished build
TRAIN_SEED = 100


@dataclass(frozen=True)
class StageReport:
    added: int  # rows added to the codes by this call
    removed: int  # rows newly hidden because their passage left the corpus
    total: int  # live (searchable) rows now
    rebuilt: bool  # the codes were made from scratch
    spec: str


def shard_table(layout: IndexLayout, shards: ShardStore) -> tuple[np.ndarray, list[np.ndarray]]:
    """``(table, ids per shard)`` of every shard on disk: rows [seq, count, file size]."""
    rows, ids = [], []
    for path in layout.shard_files():
        shard_ids = shards.load_ids(path)
        rows.append((int(path.stem.split("-")[1]), len(shard_ids), path.stat().st_size))
        ids.append(shard_ids)
    return np.asarray(rows, dtype=np.int64).reshape(-1, 3), ids


def build_compact(layout: IndexLayout, corpus_name: str, embedder_id: str, dim: int,
                  live_ids: np.ndarray, *, stage: str = "index", on_event: EventCallback | None = None,
                  cancel: CancelToken | None = None,
                  checkpoint_rows: int = CHECKPOINT_ROWS, memory_limit: int | None = None) -> StageReport:
    """Bring ``layout``'s compact index up to date with its shards (see the module docstring).

    ``memory_limit`` (bytes): codes loaded from disk that could not grow within it (they are
    copied once, ``compact.extension_fits``) are trained afresh instead, which needs less."""
    shards = ShardStore(layout, corpus_name)
    table, shard_ids = shard_table(layout, shards)
    row_ids = np.concatenate(shard_ids) if shard_ids else np.zeros(0, dtype=np.int64)
    if len(row_ids) > 1 and np.any(np.diff(row_ids) <= 0):
        raise IndexError_(f"The embedding checkpoints of corpus '{corpus_name}' hold passage ids "
                          "out of order or twice.", hint=rebuild_hint(corpus_name))
    live = np.isin(row_ids, live_ids)
    n_live = int(live.sum())

    def too_big_to_grow(rows_held: int) -> bool:
        if rows_held >= len(row_ids) or extension_fits(len(row_ids), dim, memory_limit):
            return False
        emit(on_event, Progress(stage, 0, 0, "adding to the saved codes would copy them once, more "
                                "than the memory here allows; training new ones from the saved vectors"))
        return True

    codes, done_rows, meta = _finished(layout, corpus_name, embedder_id, dim, table)
    rebuilt = codes is None or needs_retraining(codes.spec, n_live, dim, len(codes.deleted)) or \
        too_big_to_grow(done_rows)
    if rebuilt:
        codes, done_rows = _resume_partial(layout, corpus_name, embedder_id, dim, table, n_live)
        if codes is not None and too_big_to_grow(done_rows):
            codes, done_rows = None, 0
    if codes is None:
        codes = CompactIndex.create(plan_spec(n_live, dim), dim)
        done_rows = 0
    vectors = RowVectors(layout, corpus_name, table, dim, release_pages=True)
    if codes.needs_training:
        _train(codes, vectors, live, stage, on_event, cancel)
        _checkpoint(layout, codes, 0, embedder_id)

    # -- add the rows no code holds yet, shard by shard ----------------------------------
    pending = len(row_ids) - done_rows
    emit(on_event, Progress(stage, 0, pending, f"indexing {pending:,} vectors ({codes.spec})"))
    added, since_checkpoint = 0, 0
    codes.reserve(len(row_ids))
    for k in range(len(table)):
        start, end = int(vectors.starts[k]), int(vectors.starts[k + 1])
        if end <= done_rows:
            continue
        check(cancel)
        first = max(start, done_rows)
        codes.add(np.asarray(vectors.get(np.arange(first, end))), np.arange(first, end))
        added += end - first
        since_checkpoint += end - first
        emit(on_event, Progress(stage, added, pending))
        if since_checkpoint >= checkpoint_rows and end < len(row_ids):
            _checkpoint(layout, codes, end, embedder_id)
            since_checkpoint = 0
    vectors.release()

    removed, restored = codes.hide_exactly(np.flatnonzero(~live))
    if added or removed or restored or rebuilt or meta is None:
        _save(layout, codes, row_ids, table, embedder_id, dim, n_live)
    return StageReport(added=added, removed=removed, total=codes.count, rebuilt=rebuilt,
                       spec=codes.spec)


def _finished(layout, corpus_name, embedder_id, dim, table):
    """``(codes, rows they hold, meta)`` of a finished index that can be extended, else Nones."""
    from ..ann.vector_index import read_array

    if not layout.meta_file.exists():
        return None, 0, None
    try:
        meta = IndexMeta.read(layout.meta_file, corpus_name)
    except IndexError_:
        return None, 0, None
    if meta.outdated or (meta.embedder, meta.doc_format, meta.dim) != (embedder_id, DOC_FORMAT, dim):
        return None, 0, None
    try:
        old_table = read_array(layout.shard_table_file, corpus_name, "")
        rows = np.load(layout.rows_file, mmap_mode="r", allow_pickle=False)
        if not _is_prefix(old_table, table) or len(rows) != meta.rows or \
                file_sha256(layout.compact_file) != meta.checksum:
            return None, 0, None
        codes = CompactIndex.load(layout.compact_file, meta.spec, what=corpus_name, hint=None)
        if layout.deleted_file.exists():
            codes.deleted = read_array(layout.deleted_file, corpus_name, "").astype(np.int64)
    except (IndexError_, OSError, ValueError):
        return None, 0, None
    if int(codes.index.ntotal) != meta.rows:
        return None, 0, None
    return codes, meta.rows, meta


def _resume_partial(layout, corpus_name, embedder_id, dim, table, n_live):
    """``(codes, rows they hold)`` from the checkpoint of a killed build, or ``(None, 0)``."""
    try:
        info = json.loads(layout.partial_meta_file.read_text(encoding="utf-8"))
        if (info["embedder"], info["doc_format"], info["dim"]) != (embedder_id, DOC_FORMAT, dim) or \
                info["spec"] != plan_spec(n_live, dim) or info["rows"] > int(table[:, 1].sum()) or \
                file_sha256(layout.partial_file) != info["checksum"]:
            return None, 0
        codes = CompactIndex.load(layout.partial_file, info["spec"], what=corpus_name, hint=None)
    except (OSError, ValueError, KeyError, TypeError, IndexError_):
        return None, 0
    if int(codes.index.ntotal) != info["rows"]:
        return None, 0
    return codes, int(info["rows"])


def _is_prefix(old: np.ndarray, new: np.ndarray) -> bool:
    old = np.asarray(old, dtype=np.int64).reshape(-1, 3)
    return len(old) <= len(new) and bool(np.array_equal(old, new[:len(old)]))


def _train(codes: CompactIndex, vectors: RowVectors, live: np.ndarray, stage: str,
           on_event, cancel) -> None:
    live_rows = np.flatnonzero(live)
    size = codes.training_size(len(live_rows))
    emit(on_event, Progress(stage, 0, None, f"training {codes.spec} on {size:,} vectors"))
    check(cancel)
    sample = np.sort(np.random.default_rng(TRAIN_SEED).choice(live_rows, size, replace=False))
    codes.train(vectors.get(sample))
    check(cancel)


def _checkpoint(layout: IndexLayout, codes: CompactIndex, rows: int, embedder_id: str) -> None:
    """Save an unfinished index so that a killed build resumes from ``rows``."""
    checksum = codes.save(layout.partial_file)
    atomic_write_text(layout.partial_meta_file, json.dumps({
        "embedder": embedder_id, "doc_format": DOC_FORMAT, "dim": codes.dim, "spec": codes.spec,
        "rows": rows, "checksum": checksum}))


def _save_array(path: Path, array: np.ndarray) -> None:
    def write(tmp: Path) -> None:
        with open(tmp, "wb") as fh:
            np.save(fh, array, allow_pickle=False)

    atomic_write(path, write)


def _save(layout, codes, row_ids, table, embedder_id, dim, n_live) -> None:
    checksum = codes.save(layout.compact_file)
    _save_array(layout.rows_file, row_ids)
    _save_array(layout.shard_table_file, table)
    _save_array(layout.deleted_file, codes.deleted)
    top = int(row_ids[-1]) if len(row_ids) else 0
    sizes = {f.name: f.stat().st_size for f in (layout.compact_file, layout.rows_file,
                                                 layout.shard_table_file)}
    IndexMeta(embedder=embedder_id, dim=dim, normalized=True, count=n_live, max_id=top,
              checksum=checksum, format_version=FORMAT_VERSION, backend=BACKEND, spec=codes.spec,
              rows=len(row_ids), file_sizes=sizes).write(layout.meta_file)
    for leftover in (layout.partial_file, layout.partial_meta_file, layout.hnsw_file):
        leftover.unlink(missing_ok=True)
