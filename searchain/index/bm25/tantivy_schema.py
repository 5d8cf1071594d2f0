"""The tantivy keyword index's layout: its schema and analyzer, how it is opened, and the stamp
(``searchain.json``) recording which passages it holds. Shared by the full build
(``tantivy_index``) and the update (``tantivy_update``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ...errors import IndexError_

STAMP = "searchain.json"
FORMAT = 1
ANALYZER = "searchain_en"
WRITER_HEAP = 256 * 1024 * 1024  # tantivy flushes a segment when its in-memory part reaches this
# Indexing threads: tantivy gives each its own segment, so the build runs on as many cores
# (2 threads on the 2-core dev VM: 1.74-2.03x one thread, BENCHMARKS.md "The keyword index on
# every core"). Capped where each thread's share of the heap stays >= 32 MB (tantivy needs 15).
MAX_WRITER_THREADS = 8
# One indexing thread's passages/s (the build's Python side reads and feeds them far faster),
# on the dev VM: 24,000-26,000 over 77k real dump passages and 200k generated ones, 19,400 over
# 1M (a larger index merges more); on the safe side of those for Wikipedia's 21M.
PASSAGES_PER_THREAD_S = 17_000
DISK_BYTES_PER_PASSAGE = 170  # 184 MB at 1M passages (BENCHMARKS.md, "BM25 at scale")


def _tantivy():
    try:
        import tantivy
    except ImportError as exc:  # a dependency: only a broken install lacks it
        raise IndexError_("The 'tantivy' package is not installed",
                          hint="pip install tantivy (a dependency of searchain)") from exc
    return tantivy


def _analyzer():
    """Words of letters and digits, lower-cased, accents folded, English-stemmed: the closest
    tantivy has to FTS5's ``porter unicode61 remove_diacritics 2``."""
    t = _tantivy()
    return (t.TextAnalyzerBuilder(t.Tokenizer.simple()).filter(t.Filter.remove_long(40))
            .filter(t.Filter.lowercase()).filter(t.Filter.ascii_fold())
            .filter(t.Filter.stemmer("english")).build())


def _schema():
    t = _tantivy()
    b = t.SchemaBuilder()
    b.add_unsigned_field("id", indexed=True, fast=True)
    # freq, not positions: the queries are bags of words, and positions would double the size
    b.add_text_field("body", tokenizer_name=ANALYZER, index_option="freq")
    return b.build()


def writer_threads(cpus: int | None = None) -> int:
    """How many indexing threads a build or an update uses here: one per logical CPU, at most
    ``MAX_WRITER_THREADS``."""
    return max(1, min(MAX_WRITER_THREADS, cpus if cpus is not None else (os.cpu_count() or 1)))


def build_cost(passages: int) -> tuple[float, int]:
    """(seconds, disk bytes) of indexing ``passages`` here, for the plans."""
    return build_seconds(passages), DISK_BYTES_PER_PASSAGE * passages


def build_seconds(passages: int, capacity: float | None = None) -> float:
    """About how long indexing ``passages`` takes here, for plans: a thread's rate times the
    cores' worth of work the threads get (``machine.cpu_capacity``: hyperthreads count for less)."""
    from ...machine import cpu_capacity

    cores = min(float(writer_threads()), capacity if capacity is not None else cpu_capacity())
    return passages / (PASSAGES_PER_THREAD_S * max(1.0, cores))


def _open_index(path: Path):
    t = _tantivy()
    index = t.Index(_schema(), path=str(path), reuse=True)
    index.register_tokenizer(ANALYZER, _analyzer())
    return index


def read_stamp(path: Path, fix: str = "rebuild it: searchain corpus index <corpus>") -> dict | None:
    """The build record of the index at ``path``, or None when there is no index there."""
    try:
        return json.loads((path / STAMP).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise IndexError_(f"The keyword index {path} is damaged ({exc})", hint=fix) from exc


def title_repeat(title_weight: float) -> int:
    return max(0, int(round(title_weight)))


def store_stamp(conn, title_weight: float) -> dict:
    """What a current index records: the store's passage count and largest id (a passage added
    or deleted since changes one of them), and the title repeat count."""
    count, top = conn.execute("SELECT count(*), coalesce(max(id), 0) FROM passages").fetchone()
    return {"format": FORMAT, "passages": int(count), "max_id": int(top),
            "title_repeat": title_repeat(title_weight)}
