"""``searchain bench keyword-left``: a large ingest with workers, from nothing to keyword search,
with FTS5 left to tantivy (today) against FTS5 built at its end (before), same source, same run.

Before, an ingest that deferred its FTS5 index built it at the end (one thread), and the index
stage then built tantivy, which answers every keyword search of a corpus that large: FTS5 was
used only in between. Now such an ingest leaves FTS5 unbuilt (``corpus.fts_build.
TANTIVY_SERVES_FROM``) and tantivy is built first (``index.bm25.ready``). Each variant ingests
into a fresh store and then builds tantivy as the index stage does; variants alternate when
repeated. Reported per variant (medians): storing (until the keyword stage), FTS5's build, tantivy's
build, their sum (the time to keyword search), the store's and tantivy's bytes on disk; and
before / today for the time and the disk. ``before`` is today's code with FTS5's threshold set
out of reach (this benchmark's own switch), so both run the same ingest otherwise.
"""

from __future__ import annotations

import json
import shutil
import statistics
import time
from pathlib import Path

VARIANTS = ("before", "today")


def register(sub) -> None:
    p = sub.add_parser("keyword-left", help="a large ingest to keyword search: FTS5 left to tantivy "
                       "against FTS5 built at its end, same run")
    p.add_argument("--source", metavar="FILE", help="the file to ingest (default: generated articles)")
    p.add_argument("--format", default=None, help="its format (default: from the name)")
    p.add_argument("--articles", type=int, default=60_000,
                   help="generated articles without --source (default 60000, ~240k passages)")
    p.add_argument("--workers", type=int, default=2, help="ingest worker processes (default 2)")
    p.add_argument("--always-defer", action="store_true",
                   help="defer FTS5 whatever the workers' rate (as 8+ cores do for a dump)")
    p.add_argument("--repeats", type=int, default=1, help="ingests per variant (median)")
    p.add_argument("--work", metavar="DIR", help="keep the files here (default: a temp folder)")
    p.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    from ..workdir import in_work_folder

    print(json.dumps(in_work_folder(args.work, "searchain-bench-kwleft-",
                                    lambda work: measure(work, args)), indent=2))
    return 0


def measure(work: Path, args) -> dict:
    import os

    from ...machine import cpu_capacity, cpu_cores
    from ..ingest.articles import make_parquet

    source = Path(args.source) if args.source else make_parquet(work / "articles.parquet",
                                                                 args.articles, seed=3)
    fmt = args.format
    runs: dict[str, list[dict]] = {v: [] for v in VARIANTS}
    for r in range(max(1, args.repeats)):
        for variant in (VARIANTS if r % 2 == 0 else VARIANTS[::-1]):
            runs[variant].append(_one(work / f"{variant}-{r}", source, fmt, variant, args))
    rows = {v: _median(runs[v]) for v in VARIANTS}
    logical, physical = cpu_cores()
    before, today = rows["before"], rows["today"]
    return {"benchmark": "keyword-left", "source": str(source), "workers": args.workers,
            "always_defer": args.always_defer, "repeats": max(1, args.repeats),
            "machine": {"cpus": os.cpu_count(), "physical_cores": physical, "logical": logical,
                        "capacity": round(cpu_capacity(), 2)},
            "variants": rows,
            "to_keyword_search_before_over_today": round(before["to_keyword_search_s"]
                                                         / today["to_keyword_search_s"], 3),
            "disk_before_over_today": round(before["disk_bytes"] / today["disk_bytes"], 3)}


def _one(folder: Path, source: Path, fmt: str | None, variant: str, args) -> dict:
    from ...corpus import fts_build
    from ...corpus.ingest import FTS_STAGE, ingest_source
    from ...corpus.sources.detect import detect_format
    from ...corpus.store import PassageStore
    from ...events import Progress
    from ...index.bm25 import tantivy_index as tv
    from ...index.bm25.ready import make_ready

    saved = fts_build.TANTIVY_SERVES_FROM, fts_build.DEFER_FROM_PASSAGES_PER_S
    if variant == "before":
        fts_build.TANTIVY_SERVES_FROM = 1 << 62  # this benchmark's own switches, restored below
    if args.always_defer:
        fts_build.DEFER_FROM_PASSAGES_PER_S = 0
    try:
        with PassageStore.open(folder / "passages.db", create=True, corpus="bench") as store:
            keyword_at: list[float] = []

            def on_event(e) -> None:
                if isinstance(e, Progress) and e.stage == FTS_STAGE and not keyword_at:
                    keyword_at.append(time.perf_counter())
            started = time.perf_counter()
            ingest_source(store, source, fmt or detect_format(source), workers=args.workers,
                          on_event=on_event)
            ingested = time.perf_counter()
            deferred = fts_build.indexed_to(store.conn) is not None or bool(keyword_at)
            left = fts_build.left_to_tantivy(store.conn)
            make_ready(store, 2.0)  # before the first search: tantivy, FTS5 left
            tv.ensure_current(store, 2.0)  # the index stage's first step (nothing when built)
            done = time.perf_counter()
            passages = store.count()
            store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        stored_at = keyword_at[0] if keyword_at else ingested
        store_bytes = sum(p.stat().st_size for p in folder.glob("passages.db*"))
        tantivy_bytes = sum(p.stat().st_size for p in tv.index_dir(folder / "passages.db").rglob("*")
                            if p.is_file())
        return {"passages": passages, "fts5_deferred": deferred, "fts5_left_unbuilt": left,
                "store_s": stored_at - started, "fts5_build_s": ingested - stored_at,
                "tantivy_build_s": done - ingested, "to_keyword_search_s": done - started,
                "store_bytes": store_bytes, "tantivy_bytes": tantivy_bytes,
                "disk_bytes": store_bytes + tantivy_bytes}
    finally:
        fts_build.TANTIVY_SERVES_FROM, fts_build.DEFER_FROM_PASSAGES_PER_S = saved
        shutil.rmtree(folder, ignore_errors=True)


def _median(runs: list[dict]) -> dict:
    out = {}
    for key, value in runs[0].items():
        if isinstance(value, bool) or key == "passages":
            out[key] = value
        elif isinstance(value, float):
            out[key] = round(statistics.median(r[key] for r in runs), 3)
        else:
            out[key] = int(statistics.median(r[key] for r in runs))
    out["bytes_per_passage"] = round(out["disk_bytes"] / max(1, out["passages"]), 1)
    out["store_bytes_per_passage"] = round(out["store_bytes"] / max(1, out["passages"]), 1)
    return out
