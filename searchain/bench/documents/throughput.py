"""PDF ingest throughput: our folder ingest against pypdfium2's bare text extraction of the
same files.

The bare run opens each file and takes every page's text, nothing else: the floor any PDF
ingest built on PDFium pays. Ours walks the folder, reads and hashes each file, extracts the
pages, cuts them into passages and commits them to a fresh SQLite + FTS5 store: as shipped
(files parsed ahead on a reader thread while the passages before are chunked and stored) and
on one thread (``read_ahead=0``), which shows what chunking and storage cost in themselves.
The runs alternate (the first round is a warm-up) and medians are compared, so a busy machine
slows all alike; CPU seconds are reported beside wall seconds, and the load average with them.
Goal (#34): ours / bare >= 0.9 in pages per second.
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from pathlib import Path


def bare_extract(folder: Path) -> int:
    """Pages of every PDF in ``folder``, each page's text taken straight from pypdfium2."""
    import pypdfium2 as pdfium

    pages = 0
    for path in sorted(folder.glob("*.pdf")):
        pdf = pdfium.PdfDocument(path)
        for index in range(len(pdf)):
            page = pdf[index]
            textpage = page.get_textpage()
            textpage.get_text_range()
            textpage.close()
            page.close()
            pages += 1
        pdf.close()
    return pages


def ingest(folder: Path, work: Path, read_ahead: int) -> tuple[int, int]:
    """(passages, files) of a full folder ingest into a new store under ``work``."""
    from ...corpus.ingest import ingest_source
    from ...corpus.sources import SourceOptions
    from ...corpus.store import PassageStore

    with tempfile.TemporaryDirectory(dir=work) as tmp:
        with PassageStore.open(Path(tmp) / "passages.db", create=True, corpus="bench") as store:
            report = ingest_source(store, folder, "folder", options=SourceOptions(read_ahead=read_ahead))
    return report.added, report.files


def _clock(fn) -> tuple[float, float, object]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def measure(folder: Path, work: Path, repeats: int, total_bytes: int) -> dict:
    runs: dict[str, list[tuple[float, float]]] = {"bare": [], "ours": [], "one_thread": []}
    pages = passages = files = 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    for i in range(repeats + 1):
        bare_wall, bare_cpu, pages = _clock(lambda: bare_extract(folder))
        ours_wall, ours_cpu, (passages, files) = _clock(lambda: ingest(folder, work, 2))
        one_wall, one_cpu, _ = _clock(lambda: ingest(folder, work, 0))
        if i:  # the first round warms the page cache and the imports
            runs["bare"].append((bare_wall, bare_cpu))
            runs["ours"].append((ours_wall, ours_cpu))
            runs["one_thread"].append((one_wall, one_cpu))
    wall = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in runs.items()}

    def figures(key: str) -> dict:
        return {"seconds": round(wall[key], 3), "cpu_seconds": round(cpu[key], 3),
                "pages_per_s": round(pages / wall[key], 1)}

    return {
        "files": files, "pages": pages, "passages": passages,
        "megabytes": round(total_bytes / 1e6, 2), "repeats": repeats,
        "cpus": os.cpu_count(), "load_average_at_start": round(load, 2) if load is not None else None,
        "bare_pypdfium2": figures("bare"),
        "our_ingest": {**figures("ours"), "passages_per_s": round(passages / wall["ours"], 1)},
        "our_ingest_one_thread": figures("one_thread"),
        "ratio": round(wall["bare"] / wall["ours"], 3),  # ours over bare, in pages per second
        "ratio_one_thread": round(wall["bare"] / wall["one_thread"], 3),
        "cpu_ratio": round(cpu["bare"] / cpu["ours"], 3),  # what chunking and storage cost in CPU
        "goal": ">= 0.9",
    }
