"""PDF ingest throughput: our folder ingest against pypdfium2's bare text extraction of the
same files.

The bare run opens each file and takes every page's text, nothing else: the floor any PDF
ingest built on PDFium pays. Ours walks the folder, reads and hashes each file, extracts the
pages, cuts them into passages and commits them to a fresh SQLite + FTS5 store: as shipped
(files parsed ahead on a reader thread while the passages before are chunked and stored) and
on one thread (``read_ahead=0``), which shows what chunking and storage cost in themselves.
With ``workers`` above 1, ours also runs with N worker processes (``corpus/parallel.py``: files
parsed and chunked in the workers, stored by the one writer) against bare extraction spread
over N processes (the fair floor for N: a pool of the same size, started the same way, with
the files dealt out in chunks); CPU seconds then include the processes' own (children's rusage,
and the fork server's with its children). ``auto`` times what ``corpus.ingest_workers`` = 0
picks for the folder (``parallel.worker_plan``) when that is worker processes: on first use
(the fork server stopped before, as in a fresh ``searchain corpus add``) and with the server
already loaded (a second ingest in the app, or one after ``processes.warm_up_workers``).

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
    return bare_files(sorted(folder.glob("*.pdf")))


def bare_files(paths: list[Path]) -> int:
    """Pages of the PDFs ``paths``, each page's text taken straight from pypdfium2."""
    import pypdfium2 as pdfium

    pages = 0
    for path in paths:
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


def bare_processes(folder: Path, workers: int) -> int:
    """``bare_extract`` over ``workers`` processes started as the ingest's are (forks of the
    fork server), the files dealt out in chunks (a few per process, as the ingest's items
    are), pool start and stop included."""
    from concurrent.futures import ProcessPoolExecutor

    paths = sorted(folder.glob("*.pdf"))
    size = max(1, len(paths) // (workers * 4))
    chunks = [paths[i:i + size] for i in range(0, len(paths), size)]
    from ...corpus.processes import worker_context

    with ProcessPoolExecutor(workers, mp_context=worker_context()) as pool:
        return sum(pool.map(bare_files, chunks))


def ingest(folder: Path, work: Path, read_ahead: int, workers: int = 1) -> tuple[int, int]:
    """(passages, files) of a full folder ingest into a new store under ``work``."""
    from ...corpus.ingest import ingest_source
    from ...corpus.sources import SourceOptions
    from ...corpus.store import PassageStore

    with tempfile.TemporaryDirectory(dir=work) as tmp:
        with PassageStore.open(Path(tmp) / "passages.db", create=True, corpus="bench") as store:
            report = ingest_source(store, folder, "folder", options=SourceOptions(read_ahead=read_ahead),
                                   workers=workers)
    return report.added, report.files


def _children_cpu() -> float:
    from ...corpus.processes import workers_cpu_seconds

    return workers_cpu_seconds()  # processes ended and waited for, and the fork server's


def _clock(fn) -> tuple[float, float, object]:
    wall, cpu, children = time.perf_counter(), time.process_time(), _children_cpu()
    result = fn()
    return (time.perf_counter() - wall, time.process_time() - cpu + _children_cpu() - children,
            result)


def _server_ready() -> None:
    """The fork server running and loaded (a worker forked from it and gone)."""
    from ...corpus.processes import worker_context

    process = worker_context().Process(target=os.getpid)
    process.start()
    process.join()


def auto_plan(folder: Path) -> tuple[int, bool]:
    """``(workers, head_start)``: what ``corpus.ingest_workers`` = 0 (auto) gives ``folder``."""
    from ...corpus.parallel import worker_plan
    from ...corpus.problems import ProblemLog
    from ...corpus.sources import open_source

    return worker_plan(open_source(folder, "folder", "bench", ProblemLog()), 0)


def measure(folder: Path, work: Path, repeats: int, total_bytes: int,
            workers: tuple[int, ...] = (1,)) -> dict:
    """Each side timed in turn, ``repeats`` rounds after a warm-up. Runs with worker processes
    find the fork server loaded (as a second ingest does, or a first after ``warm_up_workers``), except
    ``auto_first``: auto's pick, with the server stopped before (a fresh process's first)."""
    from ...corpus.processes import stop_fork_server

    many = [n for n in workers if n > 1]
    auto_n, head_start = auto_plan(folder)
    runs: dict[str, list[tuple[float, float]]] = {"bare": [], "ours": [], "one_thread": []}
    for n in many:
        runs[f"ours_{n}"], runs[f"bare_{n}"] = [], []
    if auto_n > 1:
        runs["auto_warm"], runs["auto_first"] = [], []
    pages = passages = files = 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    for i in range(repeats + 1):
        timed = {"bare": _clock(lambda: bare_extract(folder)),
                 "ours": _clock(lambda: ingest(folder, work, 2)),
                 "one_thread": _clock(lambda: ingest(folder, work, 0))}
        for n in many:
            _server_ready()
            timed[f"ours_{n}"] = _clock(lambda: ingest(folder, work, 2, n))
            _server_ready()
            timed[f"bare_{n}"] = _clock(lambda: bare_processes(folder, n))
        if auto_n > 1:
            _server_ready()
            timed["auto_warm"] = _clock(lambda: ingest(folder, work, 2, 0))
            stop_fork_server()
            timed["auto_first"] = _clock(lambda: ingest(folder, work, 2, 0))
        pages, (passages, files) = timed["bare"][2], timed["ours"][2]
        for key, (_, _, got) in timed.items():  # every side read the same pages and passages
            expected = pages if key.startswith("bare") else (passages, files)
            if got != expected:
                raise RuntimeError(f"bench documents: {key} read {got}, not {expected}")
        if i:  # the first round warms the page cache and the imports
            for key, (wall_s, cpu_s, _) in timed.items():
                runs[key].append((wall_s, cpu_s))
    wall = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in runs.items()}

    def figures(key: str) -> dict:
        return {"seconds": round(wall[key], 3), "cpu_seconds": round(cpu[key], 3),
                "pages_per_s": round(pages / wall[key], 1)}

    return {
        "files": files, "pages": pages, "passages": passages,
        "megabytes": round(total_bytes / 1e6, 2), "repeats": repeats,
        "cpus": os.cpu_count(), "usable_cpus": _usable_cpus(),
        "load_average_at_start": round(load, 2) if load is not None else None,
        "bare_pypdfium2": figures("bare"),
        "our_ingest": {**figures("ours"), "passages_per_s": round(passages / wall["ours"], 1)},
        "our_ingest_one_thread": figures("one_thread"),
        "ratio": round(wall["bare"] / wall["ours"], 3),  # ours over bare, in pages per second
        "ratio_one_thread": round(wall["bare"] / wall["one_thread"], 3),
        "cpu_ratio": round(cpu["bare"] / cpu["ours"], 3),  # what chunking and storage cost in CPU
        "with_workers": [{
            "workers": n,
            "our_ingest": figures(f"ours_{n}"),
            "bare_pypdfium2_processes": figures(f"bare_{n}"),
            "ratio": round(wall[f"bare_{n}"] / wall[f"ours_{n}"], 3),  # against bare in N processes
            "ratio_to_bare_one_process": round(wall["bare"] / wall[f"ours_{n}"], 3),
            "cpu_ratio": round(cpu[f"bare_{n}"] / cpu[f"ours_{n}"], 3),
        } for n in many],
        "auto": _auto_figures(auto_n, head_start, wall, cpu, figures),
        "load_average_at_end": round(os.getloadavg()[0], 2) if load is not None else None,
        "goal": ">= 0.9",
    }


def _auto_figures(workers: int, head_start: bool, wall: dict, cpu: dict, figures) -> dict:
    """What auto picks for this folder, and ours under it against bare extraction in one
    process: first use (the fork server started by this ingest) and with the server loaded."""
    out: dict = {"workers": workers, "head_start": head_start}
    if workers == 1:
        return {**out, "in_process": True, "ratio": round(wall["bare"] / wall["ours"], 3)}
    for key, name in (("auto_first", "first_use"), ("auto_warm", "server_loaded")):
        out[name] = {**figures(key), "ratio": round(wall["bare"] / wall[key], 3),
                     "cpu_ratio": round(cpu["bare"] / cpu[key], 3)}
    return out


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
