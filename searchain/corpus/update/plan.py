"""What an update will read, said before it starts (the index side adds what embedding costs:
``searchain.library.update``).

A folder re-sync is measured by a walk that opens no file (``folders.scan``): the files whose
size or time changed and the new ones are read, so their bytes are known, and the passages
they will give are estimated from the corpus's own passages per byte. A snapshot update reads
the whole new source; how many articles changed is known only once it is read, so the plan
gives the cost per 1 % of articles changed beside the cost of reading.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from ..store import PassageStore
from .folders import folder_sources, scan
from .job import what_to_update

# Reading speed (bytes/s, one core) by source format, for the estimate: rough figures. The one
# measured is the dump's: `searchain bench update` read and compared a 1.16 MB dump in 0.58 s on
# the loaded 2-core VM (BENCHMARKS.md, *Updating a corpus in place*); PDFs read slower than text.
# parquet: a full ingest of 24.8 MB of generated articles took 4.69 CPU s in one process
# (BENCHMARKS.md, *Parallel ingest ...*, parquet by row group).
READ_BYTES_PER_S = {"folder": 2_000_000, "document": 2_000_000, "mediawiki": 2_000_000,
                    "zim": 3_000_000, "tsv": 20_000_000, "jsonl": 20_000_000, "parquet": 5_000_000}
DEFAULT_READ_BYTES_PER_S = 4_000_000


@dataclass(frozen=True)
class ReadPlan:
    corpus: str
    unit: str  # files | articles
    source: str  # the snapshot (or ""): a folder re-sync reads its recorded folders
    bytes_to_read: int
    read_seconds: float
    passages_now: int
    unchanged: int | None = None  # folders: files whose size and time are the same (not read)
    to_read: int | None = None  # folders: changed or new files
    removed: int | None = None  # folders: files gone
    est_passages: int | None = None  # folders: passages the files read will give (estimate)

    def to_dict(self) -> dict:
        return asdict(self)


def plan_read(store: PassageStore, source: str | Path | None = None, fmt: str | None = None) -> ReadPlan:
    """The reading side of ``job.update_corpus(..., source, fmt)`` (nothing is written)."""
    target = what_to_update(store, source, fmt)
    count = store.count()
    if target is not None:
        path, fmt = target
        size = path.stat().st_size if path.is_file() else 0
        rate = READ_BYTES_PER_S.get(fmt, DEFAULT_READ_BYTES_PER_S)
        return ReadPlan(store.corpus, "articles", str(path), size, size / rate, count)
    scans = scan(store, folder_sources(store))
    records = store.documents()
    read_bytes = sum(s.bytes_to_read for s in scans)
    stored_bytes = sum(r.size for r in records if r.passages)
    per_byte = (sum(r.passages for r in records) / stored_bytes) if stored_bytes else 0.0
    return ReadPlan(store.corpus, "files", "", read_bytes,
                    read_bytes / READ_BYTES_PER_S["folder"], count,
                    unchanged=sum(len(s.same) for s in scans),
                    to_read=sum(len(s.new) + len(s.touched) for s in scans),
                    removed=sum(len(s.gone) for s in scans),
                    est_passages=round(read_bytes * per_byte))
