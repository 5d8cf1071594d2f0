"""``searchain bench cluster [--passages N] [--workers 1,2]``: the embedding stage on Ray.

One corpus (the first N passages of a MuSiQue/HotpotQA file, default the demo corpus) is indexed
from scratch, in the same run and interleaved (``--repeats`` rounds of: a local build, then each
worker count), by ``build_index`` in this process (the baseline: torch on every core) and through
a private local Ray instance with each worker count of ``--workers`` (one CPU and one torch thread
per worker). Reported per variant: the embedding stage's seconds (median; on Ray this includes
starting the actors and loading the model in each, which is what a user waits for), the steady
rate (passages/s from the first finished block to the last: the actors' start left out), the
speed-ups over one Ray worker and over the local build, the largest cosine distance between a
Ray vector and the local build's vector of the same passage, and the load average around the
run (a shared machine's other work shows up there). Needs the ``cluster`` extra.
"""

from __future__ import annotations

import json
import os
import statistics
import tempfile
import time
from dataclasses import replace

import numpy as np


def register(sub) -> None:
    p = sub.add_parser("cluster", help="embedding on a local Ray instance with 1..N workers vs a local build")
    p.add_argument("--dataset", metavar="PATH", help="MuSiQue/HotpotQA file whose passages to embed "
                   "(default: the bundled demo corpus)")
    p.add_argument("--passages", type=int, default=2000, help="passages to embed (default 2000)")
    p.add_argument("--workers", default="1,2", help="Ray worker counts to measure (default 1,2)")
    p.add_argument("--block-size", type=int, default=256,
                   help="passages per Ray Data block (default 256: enough blocks for every worker)")
    p.add_argument("--repeats", type=int, default=1)
    p.add_argument("--json", action="store_true", help="print only the JSON object (default too)")
    p.set_defaults(func=run)


def run(ctx, args) -> int:
    from ..config import AppPaths
    from ..corpus.manager import CorpusManager
    from ..corpus.store import PassageStore
    from ..events import Progress
    from ..index.build.builder import build_index
    from ..index.embed.embedder import Embedder
    from ..index.build.ray_embed import RayEmbedding, RayOptions, ray_temp_dir

    counts = [int(w) for w in args.workers.split(",") if w.strip()]
    settings = replace(ctx.settings, retrieval=replace(ctx.settings.retrieval, second_embedder=""))
    r = settings.retrieval
    embedder = Embedder.for_settings(r, models_dir=ctx.paths.models_dir)
    result: dict = {"benchmark": "cluster", "cpus": os.cpu_count(), "embedder": embedder.model_id}
    with tempfile.TemporaryDirectory(prefix="searchain-ray-bench-") as tmp:
        paths = AppPaths.resolve(tmp).ensure()
        manager = CorpusManager(paths, settings)
        source, fmt = _source(args.dataset)
        manager.add("full", source, fmt)
        with manager.open_store("full") as full:
            passages = [p for batch in full.iter_batches(batch_size=args.passages)
                        for _, p in batch][:args.passages]
        with PassageStore.open(manager.corpus_dir("c") / "passages.db", create=True, corpus="c") as st:
            st.add(passages)
        result.update(passages=len(passages), source=str(source),
                      precision=embedder.effective_precision)

        def build(**kw) -> tuple[float, float, np.ndarray]:
            """Embed-stage seconds, steady passages/s (from the first block to the last) and the
            vectors, of one build from scratch."""
            marks = []

            def on_event(event):
                if isinstance(event, Progress) and event.stage == "embed" and event.done:
                    marks.append((time.monotonic(), event.done))

            report = build_index(paths, settings, "c", embedder=embedder, rebuild=True,
                                 on_event=on_event, **kw)
            (t0, d0), (t1, d1) = marks[0], marks[-1]
            steady = (d1 - d0) / (t1 - t0) if t1 > t0 else 0.0
            return report.embed_s, steady, _vectors(paths, manager)

        result["load_average_before"] = _load()
        started = time.perf_counter()
        on_ray = RayEmbedding(RayOptions(local_cpus=max(counts), block_size=args.block_size), temp_dir=ray_temp_dir(ctx.paths),
                              corpus_name="c")
        times: dict = {"local": []}
        busy: dict = {}  # worker count -> how many workers actually embedded, per run
        with on_ray:
            result["ray_start_s"] = round(time.perf_counter() - started, 2)
            # Interleaved repeats: a load that comes and goes (a shared machine) hits every variant.
            for _ in range(max(1, args.repeats)):
                seconds, steady, local_vectors = build()
                times["local"].append((seconds, steady, 0.0))
                for workers in counts:
                    on_ray.options = replace(on_ray.options, workers=workers)
                    seconds, steady, vectors = build(embed_missing=on_ray)
                    distance = float(1 - (vectors * local_vectors).sum(1).min())
                    times.setdefault(workers, []).append((seconds, steady, distance))
                    busy.setdefault(workers, set()).add(len(on_ray.workers_seen))
        result["load_average_after"] = _load()
    n = len(passages)
    local_s = statistics.median(t[0] for t in times["local"])
    result["local"] = _summary(times["local"], n)
    runs = [{"workers": w, **_summary(times[w], n)} for w in counts]
    one = next((x for x in runs if x["workers"] == 1), None)
    for x in runs:
        x["max_cosine_distance_to_local"] = max(t[2] for t in times[x["workers"]])
        x["workers_that_embedded"] = sorted(busy[x["workers"]])
        x["speedup_vs_local"] = round(local_s / x["embed_s"], 2)
        if one:
            x["speedup_vs_1_worker"] = round(one["embed_s"] / x["embed_s"], 2)
            x["steady_speedup_vs_1_worker"] = round(x["steady_passages_per_s"] / one["steady_passages_per_s"], 2)
    result["ray"] = runs
    print(json.dumps(result, indent=2))
    return 0


def _summary(runs: list[tuple[float, float, float]], n: int) -> dict:
    seconds = statistics.median(r[0] for r in runs)
    return {"embed_s": round(seconds, 2), "passages_per_s": round(n / seconds, 1),
            "steady_passages_per_s": round(statistics.median(r[1] for r in runs), 1),
            "runs_s": [round(r[0], 2) for r in runs]}


def _load() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _source(dataset: str | None):
    if dataset:
        from ..eval.datasets import load_dataset

        ds = load_dataset(dataset)
        return ds.path, ds.kind
    from ..library.demo import demo_articles_dir

    return demo_articles_dir(), "folder"


def _vectors(paths, manager) -> np.ndarray:
    from ..index.layout import IndexLayout
    from ..index.build.shards import ShardStore

    shards = ShardStore(IndexLayout(manager.corpus_dir("c") / "index"), "c")
    return np.concatenate([v for _, v in shards.iter_shards()])
