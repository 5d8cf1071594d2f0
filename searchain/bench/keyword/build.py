"""``searchain bench keyword-build``: the tantivy keyword index built with 1..N indexing threads
over the same passages, in the same run, and whether the indexes answer alike.

The passages are generated Wikipedia-like articles (``bench.ingest.articles``) ingested into a
fresh store, or an existing corpus's ``passages.db`` (``--store``: real text; it is only read).
Each thread count builds a fresh index (``tantivy_index.build(threads=N)``), in rotating order
when repeated; reported per count: median wall seconds, the process's CPU seconds (tantivy's
threads included), passages/s and the speed-up over the first count (the baseline). Then the
same queries (two to four words of random passages) go to every index: the share whose top 10,
scores equal the baseline's, and whose hits above the 10th score are the baseline's (ids,
scores, order; the passages tied at the 10th make the cut by segment order, which threads change).
"""

from __future__ import annotations

import json
import random
import statistics
import time
from pathlib import Path


def register(sub) -> None:
    p = sub.add_parser("keyword-build", help="tantivy keyword index built with 1..N threads, "
                       "same passages, same run")
    p.add_argument("--threads", default="",
                   help="comma-separated thread counts, the first the baseline (default: 1 and "
                        "what a build uses here)")
    p.add_argument("--articles", type=int, default=50_000,
                   help="generated articles (default 50000, ~200k passages)")
    p.add_argument("--store", metavar="PASSAGES_DB", help="index this store instead (only read)")
    p.add_argument("--repeats", type=int, default=1, help="builds per thread count (median)")
    p.add_argument("--queries", type=int, default=200, help="queries compared (default 200)")
    p.add_argument("--work", metavar="DIR", help="keep the store and indexes here (default: a temp folder)")
    p.add_argument("--json", action="store_true", help="accepted for symmetry: the output is always JSON")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    from ..workdir import in_work_folder

    print(json.dumps(in_work_folder(args.work, "searchain-bench-kwbuild-",
                                    lambda work: measure(work, args)), indent=2))
    return 0


def thread_counts(text: str) -> list[int]:
    from ...index.bm25.tantivy_schema import writer_threads

    counts = [int(x) for x in text.split(",") if x.strip()] if text.strip() else \
        list(dict.fromkeys([1, writer_threads()]))
    if not counts or min(counts) < 1:
        raise SystemExit(f"--threads wants counts of 1 or more, got {text!r}")
    return counts


def measure(work: Path, args) -> dict:
    import os
    import sqlite3

    from ...index.bm25 import tantivy_index as tv
    from ...machine import cpu_capacity, cpu_cores

    counts = thread_counts(args.threads)
    if args.store:
        conn = sqlite3.connect(f"file:{Path(args.store).resolve()}?mode=ro", uri=True)
        source = str(args.store)
    else:
        conn, source = _generated(work, args.articles)
    passages = conn.execute("SELECT count(*) FROM passages").fetchone()[0]
    runs: dict[int, list[tuple[float, float]]] = {n: [] for n in counts}
    for r in range(max(1, args.repeats)):
        order = counts[r % len(counts):] + counts[:r % len(counts)]
        for n in order:
            path = work / f"t{n}.tantivy"
            wall, cpu = time.perf_counter(), time.process_time()
            tv.build(conn, path, threads=n)
            runs[n].append((time.perf_counter() - wall, time.process_time() - cpu))
    base = statistics.median(w for w, _ in runs[counts[0]])
    rows = []
    for n in counts:
        wall = statistics.median(w for w, _ in runs[n])
        rows.append({"threads": n, "wall_s": round(wall, 3),
                     "cpu_s": round(statistics.median(c for _, c in runs[n]), 3),
                     "passages_per_s": round(passages / wall), "speedup": round(base / wall, 3),
                     "per_thread": round(base / wall / (n / counts[0]), 3)})
    logical, physical = cpu_cores()
    return {"benchmark": "keyword-build", "source": source, "passages": passages,
            "machine": {"cpus": os.cpu_count(), "physical_cores": physical, "logical": logical,
                        "capacity": round(cpu_capacity(), 2)},
            "repeats": max(1, args.repeats), "runs": rows,
            "agreement": _agreement(conn, work, counts, args.queries)}


def _generated(work: Path, articles: int):
    from ...corpus.ingest import ingest_source
    from ...corpus.store import PassageStore
    from ..ingest.articles import make_parquet

    parquet = make_parquet(work / "articles.parquet", articles, seed=3)
    store = PassageStore.open(work / "c" / "passages.db", create=True, corpus="bench")
    ingest_source(store, parquet, "parquet")
    return store.conn, str(parquet)


def _agreement(conn, work: Path, counts: list[int], queries: int) -> dict:
    """How the indexes built with more threads answer against the baseline's."""
    from ...index.bm25 import tantivy_index as tv

    rng = random.Random(7)
    top = conn.execute("SELECT max(id) FROM passages").fetchone()[0] or 0
    texts = []
    for _ in range(queries * 3):
        row = conn.execute("SELECT text FROM passages WHERE id >= ? ORDER BY id LIMIT 1",
                           (rng.randint(1, max(1, top)),)).fetchone()
        if row and row[0].split():
            texts.append(row[0].split())
        if len(texts) == queries:
            break
    asked = [rng.sample(ws, min(len(ws), rng.randint(2, 4))) for ws in texts]
    base = tv.TantivySearcher(work / f"t{counts[0]}.tantivy")
    want = [base.scores(q, 10, idf_power=1.0) for q in asked]
    out = {}
    for n in counts[1:]:
        other = tv.TantivySearcher(work / f"t{n}.tantivy")
        scores_same = above_same = 0
        for q, w in zip(asked, want):
            got = other.scores(q, 10, idf_power=1.0)
            scores_same += [s for _, s in got] == [s for _, s in w]
            # passages tied at the 10th score may make the cut in either index (segment order)
            cut = w[-1][1] if len(w) == 10 else float("-inf")
            above_same += [h for h in got if h[1] > cut] == [h for h in w if h[1] > cut]
        out[str(n)] = {"queries": len(asked),
                       "top10_scores_identical_share": round(scores_same / max(1, len(asked)), 4),
                       "above_the_cut_identical_share": round(above_same / max(1, len(asked)), 4)}
    return out
