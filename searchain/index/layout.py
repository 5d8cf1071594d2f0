"""Where a corpus's index lives on disk, and its ``meta.json`` record.

::

    <corpus dir>/index/
        meta.json          IndexMeta: embedder, dimension, counts, index spec, checksum, file sizes
        vectors.faiss      the compact index: codes of every row (compact.py)
        rows.npy           passage id of each row (rows = shard vectors in order)
        shard-table.npy    seq, rows and file size of each shard the rows come from
        deleted.npy        rows whose passage left the corpus (hidden from search)
        vectors.faiss.partial, partial.json
                           checkpoint of an unfinished index stage (a killed build resumes)
        shards/            embedding checkpoints: shard-000001.npz (ids + float32 vectors);
                           also what search reads to rescore candidates exactly
        shards/owner.json  which embedder/text format produced the shards
        second/            the same files for the optional second embedding model

Shards are the source of truth for vectors: a killed build resumes from the last complete
shard, and a damaged or missing index file is rebuilt from them without re-embedding.
Format 1 (before the compact index) kept an hnswlib graph in ``vectors.hnsw``; such an index
reads as ``outdated`` and building again converts it from the shards (``LEGACY_BACKEND``).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path

from ..files import atomic_write_text
from ..errors import IndexError_
from ..types import Passage

FORMAT_VERSION = 2
BACKEND = "compact"  # faiss codes + exact rescoring from the shards (compact.py)
LEGACY_BACKEND = "hnswlib"  # format 1: a float32 hnswlib graph in vectors.hnsw
# How a passage becomes embedding input; bump when it changes so old indexes read as stale.
DOC_FORMAT = "title-newline-text-v1"


def doc_text(passage: Passage) -> str:
    """What gets embedded for a passage (``DOC_FORMAT``): its title, then its text."""
    return f"{passage.title}\n{passage.text}" if passage.title else passage.text


def build_hint(corpus_name: str) -> str:
    """For a missing, unfinished or stale index: building again only does what is left."""
    return (f"Build it with: searchain corpus index {corpus_name} (a stopped build continues where "
            "it left off; only passages without a vector are embedded).")


def repair_hint(corpus_name: str) -> str:
    """For a damaged graph or metadata file: the saved embeddings rebuild it without re-embedding."""
    return (f"Repair it with: searchain corpus index {corpus_name} (the index is rebuilt from the "
            "saved embeddings; nothing is re-embedded).")


def rebuild_hint(corpus_name: str) -> str:
    """For an index made by another model, or damaged embeddings: every passage is re-embedded."""
    return f"Re-embed every passage with: searchain corpus index {corpus_name} --rebuild"


@dataclass(frozen=True)
class IndexLayout:
    root: Path  # <corpus dir>/index

    @property
    def second(self) -> "IndexLayout":
        """Where the index of ``retrieval.second_embedder`` lives (inside this one, so a rebuild or
        a removed corpus takes it along)."""
        return IndexLayout(self.root / "second")

    @property
    def meta_file(self) -> Path:
        return self.root / "meta.json"

    @property
    def hnsw_file(self) -> Path:
        """Format 1's graph: only looked at to recognise (and then remove) an old index."""
        return self.root / "vectors.hnsw"

    @property
    def compact_file(self) -> Path:
        return self.root / "vectors.faiss"

    @property
    def rows_file(self) -> Path:
        return self.root / "rows.npy"

    @property
    def shard_table_file(self) -> Path:
        return self.root / "shard-table.npy"

    @property
    def deleted_file(self) -> Path:
        return self.root / "deleted.npy"

    @property
    def partial_file(self) -> Path:
        return self.root / "vectors.faiss.partial"

    @property
    def partial_meta_file(self) -> Path:
        return self.root / "partial.json"

    @property
    def shards_dir(self) -> Path:
        return self.root / "shards"

    @property
    def owner_file(self) -> Path:
        return self.shards_dir / "owner.json"

    def shard_file(self, seq: int) -> Path:
        return self.shards_dir / f"shard-{seq:06d}.npz"

    def shard_files(self) -> list[Path]:
        """Complete shards in write order (temp files from a killed write are skipped)."""
        if not self.shards_dir.is_dir():
            return []
        return sorted(self.shards_dir.glob("shard-*.npz"))


@dataclass(frozen=True)
class IndexMeta:
    """What ``meta.json`` records about a built index."""

    embedder: str  # Embedder.model_id
    dim: int
    normalized: bool
    count: int  # live (searchable) vectors
    max_id: int  # highest passage id indexed: the incremental build continues after it
    checksum: str  # sha256 of vectors.faiss (format 1: of vectors.hnsw)
    hnsw_m: int = 0  # format 1 only
    hnsw_ef_construction: int = 0  # format 1 only
    doc_format: str = DOC_FORMAT
    space: str = "ip"
    format_version: int = 1  # files without the field are format 1
    backend: str = LEGACY_BACKEND  # files without the field hold an hnswlib graph
    spec: str = ""  # faiss factory string of vectors.faiss (compact.plan_spec)
    rows: int = 0  # rows in rows.npy (live + deleted)
    # Bytes of vectors.faiss, rows.npy and shard-table.npy by file name: a truncated file shows
    # without hashing gigabytes (empty in an index built before sizes were recorded).
    file_sizes: dict[str, int] = field(default_factory=dict, hash=False, compare=False)

    @property
    def outdated(self) -> bool:
        """Built by an earlier version in a format search no longer reads."""
        return self.backend != BACKEND or self.format_version < FORMAT_VERSION

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def read(cls, path: Path, corpus_name: str) -> "IndexMeta":
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            known = {f.name for f in fields(cls)}
            return cls(**{k: v for k, v in data.items() if k in known})
        except (OSError, ValueError, TypeError) as exc:
            raise IndexError_(f"The index metadata {path} of corpus '{corpus_name}' is damaged: {exc}",
                              hint=repair_hint(corpus_name)) from exc

    def write(self, path: Path) -> None:
        atomic_write_text(path, self.to_json())


OPEN_STAGE = "open-index"  # the Progress stage of opening a corpus's vector index
# faiss reads the codes into RAM when an index opens: 7.4 GB took ~23 s at 21M (BENCHMARKS.md Scale).
INDEX_READ_BYTES_PER_S = 320e6


def opening_note(corpus_dir, corpus_name: str) -> str:
    """What opening ``corpus_name``'s vector indexes costs, for a progress line: a large one (its
    codes are read into memory) takes seconds, which a user should not spend wondering."""
    from ..units import duration, size

    first = IndexLayout(Path(corpus_dir) / "index")
    n_bytes = sum(layout.compact_file.stat().st_size for layout in (first, first.second)
                  if layout.compact_file.is_file())
    note = f"opening the search index of '{corpus_name}'"
    if n_bytes < 100e6:
        return note
    seconds = n_bytes / INDEX_READ_BYTES_PER_S
    return note + f" ({size(n_bytes)}" + (f", about {duration(seconds)})" if seconds >= 3 else ")")
