"""FTS5 against tantivy on the same passage store (issue #18, BM25 at scale).

``python -m searchain.bench.scale.bm25_compare PASSAGES_DB [--queries N] [--build]`` (the store a
``searchain bench scale`` run wrote, or any corpus's ``passages.db``): builds the tantivy index
beside the store when ``--build`` is given (or none is there), then runs the eval sets'
multi-hop queries (questions and MuSiQue steps, a fixed sample) through both backends, FTS5 and
tantivy interleaved per query so the machine's load falls on both alike. Prints one JSON
object: build seconds, disk, p50/p99 per backend, and the gold recall@1/@10 of each (a query's
gold passages: a MuSiQue step's paragraph, a question's supporting paragraphs; a hit on any
counts), with the top-1 agreement of the two.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import time
from pathlib import Path

import numpy as np


def gold_queries(datasets) -> list[tuple[str, list[tuple[str, str]]]]:
    """``(query, [(title, text) of its gold paragraphs])``, each query once."""
    out: dict[str, list[tuple[str, str]]] = {}
    for ds in datasets:
        for q in ds.questions:
            out.setdefault(q.question, [(p.title, p.text) for p in q.supporting])
            for s in q.steps:
                if s.query.strip() and s.paragraph is not None:
                    out.setdefault(s.query, [(s.paragraph.title, s.paragraph.text)])
    return [(k, v) for k, v in out.items() if v]


def fts_bytes(conn) -> int | None:
    try:
        return conn.execute("SELECT sum(pgsize) FROM dbstat WHERE name LIKE 'passages_fts%'").fetchone()[0]
    except sqlite3.OperationalError:  # SQLite built without dbstat
        return None


def _pct(ms: list[float]) -> dict:
    s = sorted(ms)
    return {"p50_ms": round(float(np.median(s)), 2), "p99_ms": round(s[min(len(s) - 1, int(0.99 * len(s)))], 2)}


def main(argv=None) -> int:
    from ...config import Settings
    from ...corpus.ids import passage_pid
    from ...corpus.store import PassageStore
    from ...index.bm25 import tantivy_index as tv
    from ...index.bm25.fts5 import BM25Retriever
    from ...index.passages import PassageSource
    from ...index.bm25.query import keywords
    from .data import load_eval_sets

    p = argparse.ArgumentParser()
    p.add_argument("db")
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--build", action="store_true")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    db = Path(args.db)
    store = PassageStore.open(db)
    out: dict = {"passages": store.count()}
    path = tv.index_dir(db)
    if args.build or tv.read_stamp(path) is None:
        t = time.perf_counter()
        tv.build(store.conn, path, title_weight=Settings().retrieval.bm25_title_weight)
        out["tantivy_build_s"] = round(time.perf_counter() - t, 1)
    out["tantivy_bytes"] = sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
    out["fts5_bytes"] = fts_bytes(store.conn)
    out["db_bytes"] = db.stat().st_size

    r = Settings().retrieval
    queries = gold_queries(load_eval_sets())
    if len(queries) > args.queries:
        pick = np.random.default_rng(args.seed).choice(len(queries), args.queries, replace=False)
        queries = [queries[i] for i in sorted(pick)]
    gold_ids = []
    for _, golds in queries:
        ids = store.ids_of([passage_pid(ti, tx) for ti, tx in golds])
        gold_ids.append(set(ids.values()))
    fts = BM25Retriever(PassageSource(store), title_weight=r.bm25_title_weight, idf_power=r.bm25_idf_power,
                        use_tantivy=False)
    tan = tv.TantivySearcher(path)
    ms = {"fts5": [], "tantivy": []}
    hits = {"fts5": [], "tantivy": []}
    for text, _ in queries:
        t = time.perf_counter()
        hits["fts5"].append([i for i, _ in fts.scores(text, 10)])
        ms["fts5"].append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        hits["tantivy"].append([i for i, _ in tan.scores(keywords(text), 10,
                                                         idf_power=r.bm25_idf_power)])
        ms["tantivy"].append((time.perf_counter() - t) * 1000)
    with_gold = [i for i, g in enumerate(gold_ids) if g]
    out["queries"], out["queries_with_gold"] = len(queries), len(with_gold)
    for name in ms:
        out[name] = _pct(ms[name])
        for k in (1, 10):
            got = [bool(set(hits[name][i][:k]) & gold_ids[i]) for i in with_gold]
            out[name][f"gold_recall@{k}"] = round(float(np.mean(got)), 4)
    out["top1_agreement"] = round(float(np.mean([a[:1] == b[:1] for a, b in zip(hits["fts5"], hits["tantivy"])])), 4)
    from .worker import peak_rss

    out.update(peak_rss())  # this process: both backends open, FTS5's page cache included
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
