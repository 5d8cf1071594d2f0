"""``searchain bench ingest --source FILE --workers 1,2,... [--repeats R] --json``: ingest
throughput of one dump or ZIM file with N worker processes, against wikiextractor on the same
file in the same run (where it is installed and the file is a MediaWiki dump).

Each run is a full ingest (parse in the workers, store in SQLite with its FTS5 index in the
parent) into a new store; the figure is the median of ``repeats`` runs. ``pages`` counts every
page the file holds (articles, redirects, other namespaces): wikiextractor reads them all too.
wikiextractor runs as its command (``python -m wikiextractor.WikiExtractor FILE -o DIR
--processes N``), with its defaults (templates expanded), once per worker count, timed wall to wall.
Prints ``{"runs": [{"workers", "pages_per_s", "passages_per_s", ...}], "wikiextractor":
{"pages_per_s", "runs": [...]}, ...}``.

CPU seconds are reported beside wall time (``parent_cpu_s``: the writer, and in a run with one
worker the parser too; ``workers_cpu_s``: the worker processes; wikiextractor's ``cpu_s``: all
its processes), since on a shared machine wall time says more about the neighbours than about
the code. ``core_check`` says whether the machine gave the runs their cores: the same pure-Python
loop timed alone and in N spawned processes at once (N = the most workers, up to the cores),
before and after the runs; ``parallel_vs_alone`` near 1.0 means free cores and wall times that
show scaling, near N a machine busy with other work. ``free_cores_pages_per_s`` is what the CPU
seconds allow with a free core per process: pages / max(writer CPU while the workers parse, workers' CPU / N) plus the keyword index's
build after them. Where the workers parse fast enough, the FTS5 index is built at the end
(``corpus.fts_build``): ``fts_build_cpu_s`` is that build's share of ``parent_cpu_s`` (0 where
each batch is indexed as it is stored), ``writer_store_cpu_s`` the rest. From 200,000 passages
such an ingest leaves FTS5 unbuilt and keyword search needs the tantivy index instead
(``index.bm25.ready``): the run then builds it, and its time (threads, in the parent) counts
as the build's; ``keyword_index`` says which of the three a run did.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def parse_workers(text: str) -> list[int]:
    from ...errors import SearchainError

    try:
        counts = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        counts = []
    if not counts or any(n < 1 for n in counts):
        raise SearchainError(f"--workers takes worker counts like 1,2,4; got {text!r}.")
    return counts


def measure(source: Path, counts: list[int], repeats: int, wikiextractor: bool = True,
            wikiextractor_counts: list[int] | None = None, writer_watch: str = "on") -> dict:
    from ...corpus.sources.detect import detect_format

    source = Path(source)
    fmt = detect_format(source)
    parallel = min(max(counts), os.cpu_count() or 1)
    checks = [core_check(parallel)]
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        watches = ("off", "on") if writer_watch == "both" else (writer_watch,)
        runs = [_ours(source, fmt, n, repeats, Path(tmp), watch) for n in counts for watch in watches]
        checks.append(core_check(parallel))
        pages = runs[0].pop("_pages")
        for run in runs[1:]:
            run.pop("_pages")
        out = {"benchmark": "ingest-workers", "source": str(source), "format": fmt,
               "bytes": source.stat().st_size, "pages": pages, "articles": runs[0]["articles"],
               "passages": runs[0]["passages"], "repeats": repeats, "cores": os.cpu_count(),
               "runs": runs, "core_check": {"processes": parallel, "before": checks[0], "after": checks[1]}}
        base = runs[0]["pages_per_s"] / counts[0]
        for run in runs:
            run["per_worker_vs_first"] = round(run["pages_per_s"] / run["workers"] / base, 2)
        if wikiextractor and fmt == "mediawiki" and _has_wikiextractor():
            wx = [_wikiextractor(source, n, repeats, pages, Path(tmp)) for n in wikiextractor_counts or counts]
            out["wikiextractor"] = {"pages_per_s": wx[-1]["pages_per_s"], "runs": wx}
            theirs_at = {theirs["processes"]: theirs for theirs in wx}
            for run in runs:  # compared at the same number of processes only
                if run["workers"] in theirs_at:
                    run["vs_wikiextractor"] = round(run["pages_per_s"] / theirs_at[run["workers"]]["pages_per_s"], 2)
        else:
            out["wikiextractor"] = None
    return out


def core_check(processes: int, loops: int = 8_000_000) -> dict:
    """Seconds of one CPU-bound loop alone, and of ``processes`` copies at once (spawned, started
    together at a barrier, the slowest taken): their ratio is ~1 when each has a core of its own."""
    import multiprocessing

    alone = _spin(loops)
    ctx = multiprocessing.get_context("spawn")
    start, results = ctx.Barrier(processes), ctx.Queue()
    procs = [ctx.Process(target=_spin_at, args=(start, loops, results)) for _ in range(processes)]
    for proc in procs:
        proc.start()
    together = max(results.get(timeout=600) for _ in procs)
    for proc in procs:
        proc.join()
    return {"alone_s": round(alone, 3), "parallel_s": round(together, 3),
            "parallel_vs_alone": round(together / alone, 2)}


def _spin_at(start, loops: int, results) -> None:
    start.wait()
    results.put(_spin(loops))


def _spin(loops: int) -> float:
    started = time.perf_counter()
    total = 0
    for i in range(loops):
        total += i
    return time.perf_counter() - started


def _ours(source: Path, fmt: str, workers: int, repeats: int, tmp: Path, watch: str = "on") -> dict:
    """Full ingests of ``source`` with ``workers``; ``watch`` "off" keeps the writer's watch from
    ever deciding (``fts_build.WriterWatch``: the keyword index then stays per batch unless the
    rule before the start defers it), to time what it changes on the same machine."""
    from ...corpus import fts_build

    watched = fts_build.WATCH_PASSAGES
    if watch == "off":
        fts_build.WATCH_PASSAGES = 1 << 62  # a benchmark's own switch, restored below
    try:
        return {**_timed(source, fmt, workers, repeats, tmp), "writer_watch": watch}
    finally:
        fts_build.WATCH_PASSAGES = watched


def _timed(source: Path, fmt: str, workers: int, repeats: int, tmp: Path) -> dict:
    from ...corpus import fts_build
    from ...corpus.ingest import FTS_STAGE, ingest_source
    from ...corpus.store import PassageStore
    from ...events import Progress
    from ...index.bm25.ready import make_ready

    times, cpus, report, articles, builds, keyword = [], [], None, 0, [], []
    for r in range(repeats):
        folder = tmp / f"ours-{workers}-{r}"
        with PassageStore.open(folder / "passages.db", create=True, corpus="bench") as store:
            at_build: list[float] = []

            def on_event(e) -> None:
                if isinstance(e, Progress) and e.stage == FTS_STAGE and not at_build:
                    at_build.append(_cpu()[0])
            before = _cpu()
            started = time.perf_counter()
            report = ingest_source(store, source, fmt, workers=workers, on_event=on_event)
            left = fts_build.left_to_tantivy(store.conn)
            if left:  # keyword search needs tantivy then: built here, and timed with the ingest
                make_ready(store, 2.0)
            times.append(time.perf_counter() - started)
            cpus.append(tuple(b - a for a, b in zip(before, _cpu())))
            builds.append(before[0] + cpus[-1][0] - at_build[0] if at_build else 0.0)
            keyword.append("tantivy (FTS5 left unbuilt)" if left else "FTS5 at the end" if at_build
                           else "FTS5 per batch")
            articles = store.conn.execute("SELECT count(DISTINCT doc_id) FROM passages").fetchone()[0]
        shutil.rmtree(folder)
    seconds = statistics.median(times)
    pages = articles + report.ignored + report.skipped
    parent = statistics.median(c[0] for c in cpus)
    children = statistics.median(c[1] for c in cpus)
    build = statistics.median(builds)
    # On a machine with a free core per worker and one for the writer, the wall time would be
    # the larger of the writer's CPU time and the workers' CPU time shared among them, then the
    # keyword index's build (which starts once they are done).
    bound = max(parent - build, children / workers) + build if workers > 1 else parent
    return {"workers": workers, "seconds": round(seconds, 3), "pages_per_s": round(pages / seconds, 1),
            "passages_per_s": round(report.added / seconds, 1), "articles": articles,
            "passages": report.added, "times": [round(t, 3) for t in times],
            "parent_cpu_s": round(parent, 3), "workers_cpu_s": round(children, 3),
            "writer_store_cpu_s": round(parent - build, 3), "fts_build_cpu_s": round(build, 3),
            "keyword_index": keyword[-1],
            "free_cores_pages_per_s": round(pages / bound, 1), "_pages": pages}


def _cpu() -> tuple[float, float]:
    """CPU seconds (user + system) of this process and of its finished children and workers."""
    import resource

    from ...corpus.processes import workers_cpu_seconds

    me = resource.getrusage(resource.RUSAGE_SELF)
    return me.ru_utime + me.ru_stime, workers_cpu_seconds()


def _has_wikiextractor() -> bool:
    import importlib.util

    return importlib.util.find_spec("wikiextractor") is not None


def _wikiextractor(source: Path, processes: int, repeats: int, pages: int, tmp: Path) -> dict:
    times, cpus = [], []
    for r in range(repeats):
        out = tmp / f"wx-{processes}-{r}"
        before = _cpu()[1]
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "wikiextractor.WikiExtractor", str(source), "-o", str(out),
                        "--processes", str(processes), "-q"], check=True, capture_output=True)
        times.append(time.perf_counter() - started)
        cpus.append(_cpu()[1] - before)
        shutil.rmtree(out, ignore_errors=True)
    seconds = statistics.median(times)
    return {"processes": processes, "seconds": round(seconds, 3), "pages_per_s": round(pages / seconds, 1),
            "cpu_s": round(statistics.median(cpus), 3), "times": [round(t, 3) for t in times]}
