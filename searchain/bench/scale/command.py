"""``searchain bench scale --passages N``: the whole retrieval stack at Wikipedia scale.

Synthesises N Wikipedia-like passages (``data.py``: Zipfian text holding the eval sets'
real paragraphs, clustered vectors; nothing is embedded), builds the BM25 store and the compact
vector index through the product's own code, then a fresh process opens the corpus and runs:

- dense: ``--queries`` synthetic query vectors (1 thread); recall@10 and top-1 agreement against
  exact float32 search (brute force streamed over the shards, the baseline of the same run);
- BM25 and hybrid: the real multi-hop queries (every MuSiQue and HotpotQA question and every
  MuSiQue decomposition step). ``bm25_*`` time the product's path (the tantivy index the corpus
  step builds, ``index/bm25/tantivy_index.py``), ``bm25_fts5_*`` SQLite FTS5 on the same queries, interleaved.

Prints one JSON object: ``passages``, ``serve_rss_bytes`` (peak RSS of the serving process),
``build_rss_bytes`` (the largest of the build steps), ``build_seconds``, ``disk_bytes`` (and
``disk`` per part), ``dense_recall_at_10``, ``dense_top1_agreement``, ``dense_p50_ms``,
``dense_p99_ms``, ``bm25_p50_ms``, ``bm25_p99_ms``, ``hybrid_p50_ms``, and more.

``--work DIR`` keeps everything there and resumes a killed run (each step continues where it
stopped: the 21M point takes hours); ``--vectors-only`` skips the passage store (the vector side
alone, for sizes whose text would not fit on the disk). Without ``--work`` a temporary folder is
used and removed. Steps run in child processes, so each peak RSS is that step's own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from ...config import source_root

DEFAULT_QUERIES = 1000


def register(sub) -> None:
    p = sub.add_parser("scale", help="build and search N synthetic Wikipedia-like passages: "
                       "memory, disk, latency and recall of the compact index vs exact search")
    p.add_argument("--passages", type=int, required=True, help="N, e.g. 1000000")
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--queries", type=int, default=DEFAULT_QUERIES, help="dense query vectors")
    p.add_argument("--text-queries", type=int, default=300,
                   help="BM25/hybrid queries: a fixed sample of the eval sets' questions and steps")
    p.add_argument("--work", help="keep the corpus here and resume a stopped run")
    p.add_argument("--vectors-only", action="store_true", help="no passage store or BM25")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="accepted for symmetry: output is JSON")
    p.set_defaults(func=run)


def _worker(step: str, work: Path) -> dict:
    """Run one step in a child process; its last stdout line is its JSON result."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(source_root())] + [p for p in [os.environ.get("PYTHONPATH")] if p])}
    done = subprocess.run([sys.executable, "-m", "searchain.bench.scale.worker", step, str(work)],
                          stdout=subprocess.PIPE, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"bench scale: step {step!r} failed (exit {done.returncode}); run the "
                         f"same command again to resume it")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _du(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.exists() else 0


def _truth(work: Path, state: dict) -> np.ndarray:
    """Exact top-10 by brute force over every shard (cached in the work folder)."""
    from ...index.build.shards import ShardStore
    from .data import ClusteredVectors, exact_top_k_streamed
    from .worker import CORPUS, layout_of

    path = work / f"truth-{state['queries']}.npy"
    if path.exists():
        return np.load(path)
    queries = ClusteredVectors(state["dim"], seed=state["seed"]).queries(state["queries"])
    truth = exact_top_k_streamed(ShardStore(layout_of(work), CORPUS).iter_shards(), queries, 10)
    np.save(path, truth)
    return truth


def _open_state(work: Path, args) -> dict:
    state = {"passages": args.passages, "dim": args.dim, "queries": args.queries,
             "text_queries": args.text_queries,
             "seed": args.seed, "bm25": not args.vectors_only, "steps": {}}
    path = work / "state.json"
    if path.exists():
        old = json.loads(path.read_text(encoding="utf-8"))
        same = {k: old.get(k) for k in ("passages", "dim", "seed", "bm25")}
        if same != {k: state[k] for k in same}:
            raise SystemExit(f"bench scale: {work} holds a run with {same}; use another --work "
                             "folder or remove this one")
        state["steps"] = old.get("steps", {})
    _save_state(work, state)
    return state


def _save_state(work: Path, state: dict) -> None:
    (work / "state.json").write_text(json.dumps(state, indent=2), encoding="utf-8")


def measure(work: Path, args) -> dict:
    from ...index.bm25 import tantivy_index as bm25_tantivy
    from ...index.ann.compact import estimated_index_bytes
    from .worker import layout_of, store_path

    work.mkdir(parents=True, exist_ok=True)
    state = _open_state(work, args)
    steps = ["corpus", "vectors", "index"] if state["bm25"] else ["vectors", "index"]
    for step in steps:
        if step not in state["steps"]:  # a finished step is not run (or timed) again
            state["steps"][step] = _worker(step, work)
            _save_state(work, state)
    t = time.perf_counter()
    truth = _truth(work, state)
    exact_s = time.perf_counter() - t
    serve = _worker("serve", work)
    found = np.load(work / "found.npy")
    recall = float(np.mean([len(set(f[f >= 0]) & set(t)) / 10 for f, t in zip(found, truth)]))
    s = state["steps"]
    layout = layout_of(work)
    disk = {"shards": _du(layout.shards_dir),
            "vector_index": sum(_du(p) for p in (layout.compact_file, layout.rows_file,
                                                 layout.shard_table_file, layout.deleted_file)),
            "passages_db": _du(store_path(work)) if state["bm25"] else 0,
            "bm25_tantivy": _du(bm25_tantivy.index_dir(store_path(work))) if state["bm25"] else 0}
    build_s = sum(s[k].get(f) or 0 for k in s for f in ("bm25_build_s", "tantivy_build_s", "index_build_s"))
    estimate = estimated_index_bytes(args.passages, args.dim)
    result = {
        "passages": args.passages, "dim": args.dim, "spec": s["index"]["spec"],
        "serve_rss_bytes": serve["peak_rss_bytes"], "serve_rss_anon_bytes": serve["rss_anon_bytes"],
        "serve_rss_file_bytes": serve["rss_file_bytes"],
        "build_rss_bytes": max(s[k]["peak_rss_bytes"] for k in ("corpus", "index") if k in s),
        "index_build_rss_bytes": s["index"]["peak_rss_bytes"],
        "build_seconds": round(build_s, 1), "index_build_seconds": s["index"]["index_build_s"],
        "bm25_build_seconds": s.get("corpus", {}).get("bm25_build_s"),
        "tantivy_build_seconds": s.get("corpus", {}).get("tantivy_build_s"),
        "disk_bytes": sum(disk.values()), "disk": disk,
        "estimated_index_bytes": estimate,
        "dense_recall_at_10": round(recall, 4),
        "dense_top1_agreement": round(float(np.mean(found[:, 0] == truth[:, 0])), 4),
        "exact_search_seconds": round(exact_s, 1),
        **{k: v for k, v in serve.items()
           if k.endswith("_ms") or k.endswith("queries") or k in ("open_s", "bm25_backend")},
    }
    for key in ("bm25_p50_ms", "bm25_p99_ms", "hybrid_p50_ms"):
        result.setdefault(key, None)  # --vectors-only: no text side
    return result


def run(ctx, args) -> int:
    if args.passages < 1:
        raise SystemExit("bench scale: --passages must be positive")
    from ..workdir import in_work_folder

    result = in_work_folder(args.work, "searchain-scale-", lambda work: measure(work, args))
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0
