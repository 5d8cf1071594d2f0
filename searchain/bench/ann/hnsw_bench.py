"""``searchain bench index --n N --dim D [--json]``: HNSW quality and speed, and encode overhead.

Vectors (``--dist``):

- ``clustered`` (default): shaped like sentence embeddings. 100 topic directions are drawn
  from a Gaussian whose per-dimension scale decays as a power law (real embedding spectra do:
  a few directions carry most variance); each topic has 100 overlapping sub-centres around
  it; points are a sub-centre plus isotropic noise of a per-cluster scale, L2-normalised.
  Queries are fresh draws from the same mixture. (Calibrated against MiniLM embeddings of the
  HotpotQA passages: similar nearest-neighbour cosines at equal n.)
- ``uniform``: uniform on the unit sphere (Gaussian then normalised) -- the hardest case.
- ``--real CORPUS`` (repeatable: the corpora's vectors are pooled): the built indexes' own
  passage vectors (from their checkpoints); 500 of them are held out of the graph and used
  as queries.

Ground truth is exact brute-force inner product (numpy). Latency is per single query on one
thread (``set_num_threads(1)``). ``encode_overhead`` is the build pipeline's embedding stage
(store read + encode + checkpoint writes, ``build_index``) over bare
``SentenceTransformer.encode`` of the same texts, same model, same precision
(``retrieval.embed_precision``), same run (median of repeats); under bfloat16 one float32 pass
adds ``precision_speedup``.
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def register(sub) -> None:
    p = sub.add_parser("index", help="HNSW recall/latency vs exact search, and encode overhead")
    p.add_argument("--n", type=int, default=100_000, help="vectors in the index (default 100000)")
    p.add_argument("--dim", type=int, default=384)
    p.add_argument("--dist", choices=("clustered", "uniform"), default="clustered")
    p.add_argument("--queries", type=int, default=1000)
    p.add_argument("--m", type=int, default=None, help="HNSW M (default: retrieval.hnsw_m)")
    p.add_argument("--ef-construction", type=int, default=None)
    p.add_argument("--ef", type=int, default=None, help="query ef (default: retrieval.hnsw_ef_search)")
    p.add_argument("--ef-sweep", default="", help="also measure these query ef values, e.g. 64,256")
    p.add_argument("--real", metavar="CORPUS", action="append", default=[],
                   help="also measure on this corpus's real passage vectors (repeat to pool corpora)")
    p.add_argument("--encode-dataset", metavar="PATH",
                   help="measure encode overhead on this MuSiQue/HotpotQA file's passages "
                   "(default: the bundled demo corpus)")
    p.add_argument("--encode-limit", type=int, default=512, help="passages for the overhead test")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--no-encode", action="store_true", help="skip the encode-overhead measurement")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", action="store_true", help="print only the JSON object (default too)")
    p.set_defaults(func=run)


# -- vectors -------------------------------------------------------------------------------
def clustered_vectors(n: int, dim: int, rng: np.random.Generator, *, topics: int = 100,
                      subtopics: int = 100, centres: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """``(vectors, centres)``: see the module docstring. Generated in chunks to bound memory.

    Two-level mixture: ``topics`` broad directions, each with ``subtopics`` overlapping
    sub-centres around it, and points scattered around a sub-centre. Neighbouring clusters
    overlap as real topics do, which makes the graph's job harder than separated blobs.
    """
    if centres is None:
        spectrum = (np.arange(1, dim + 1) ** -0.5).astype(np.float32)  # power-law variance decay
        spectrum /= np.sqrt((spectrum ** 2).mean())
        top = rng.normal(size=(topics, dim)).astype(np.float32) * spectrum
        top /= np.linalg.norm(top, axis=1, keepdims=True)
        sub = np.repeat(top, subtopics, axis=0) + \
            rng.normal(size=(topics * subtopics, dim)).astype(np.float32) * spectrum * (0.8 / np.sqrt(dim))
        centres = sub / np.linalg.norm(sub, axis=1, keepdims=True)
    spread = rng.uniform(0.6, 1.0, size=len(centres)).astype(np.float32) / np.sqrt(dim)
    out = np.empty((n, dim), dtype=np.float32)
    for s in range(0, n, 100_000):
        e = min(n, s + 100_000)
        which = rng.integers(0, len(centres), e - s)
        block = centres[which] + rng.normal(size=(e - s, dim)).astype(np.float32) * spread[which, None]
        out[s:e] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out, centres


def uniform_vectors(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    out = np.empty((n, dim), dtype=np.float32)
    for s in range(0, n, 100_000):
        e = min(n, s + 100_000)
        block = rng.normal(size=(e - s, dim)).astype(np.float32)
        out[s:e] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def exact_top_k(data: np.ndarray, queries: np.ndarray, k: int) -> np.ndarray:
    """Brute-force top-k row indices by inner product (chunked over the data)."""
    best_s = np.full((len(queries), k), -np.inf, dtype=np.float32)
    best_i = np.zeros((len(queries), k), dtype=np.int64)
    for s in range(0, len(data), 200_000):
        sims = queries @ data[s:s + 200_000].T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k] if sims.shape[1] > k else \
            np.tile(np.arange(sims.shape[1]), (len(queries), 1))
        cand_s = np.concatenate([best_s, np.take_along_axis(sims, top, 1)], axis=1)
        cand_i = np.concatenate([best_i, top + s], axis=1)
        order = np.argsort(-cand_s, axis=1)[:, :k]
        best_s, best_i = np.take_along_axis(cand_s, order, 1), np.take_along_axis(cand_i, order, 1)
    return best_i


# -- HNSW measurement -------------------------------------------------------------------------
def measure_hnsw(data: np.ndarray, queries: np.ndarray, *, m: int, ef_construction: int, ef: int,
                 k: int = 10, ef_sweep: tuple[int, ...] = ()) -> dict:
    from .hnsw import HnswIndex

    labels = np.arange(len(data), dtype=np.int64)
    t0 = time.perf_counter()
    index = HnswIndex(data.shape[1], m=m, ef_construction=ef_construction, ef=ef)
    index.init_empty(len(data))
    index.add(data, labels)
    build_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        size = Path(tmp, "v.hnsw")
        index.save(size)
        file_bytes = size.stat().st_size

    truth = exact_top_k(data, queries, k)
    index.set_num_threads(1)
    main = _query_stats(index, data, queries, truth, k, ef)
    result = {
        "n": len(data), "dim": int(data.shape[1]), "queries": len(queries), **main,
        "build_s": round(build_s, 2), "bytes_per_vector": round(file_bytes / len(data), 1),
        "hnsw": {"M": m, "ef_construction": ef_construction, "ef": ef},
    }
    if ef_sweep:
        result["ef_sweep"] = {str(e): _query_stats(index, data, queries, truth, k, e) for e in ef_sweep}
    return result


def tie_aware_recall(data: np.ndarray, queries: np.ndarray, found: np.ndarray, truth: np.ndarray,
                     eps: float = 1e-5) -> float:
    """Share of the true top-k that ``found`` matches, where a found vector counts when it is as
    close as the k-th true neighbour (ANN-benchmarks' rule). With duplicate vectors, as in real
    corpora holding the same paragraph twice, the k-th place can be a tie that exact search and
    the graph break differently; counting ids would call an equally good answer a miss."""
    k = truth.shape[1]
    hits = 0
    for q, f, t in zip(queries, found, truth):
        kth = float(np.min(data[t] @ q))
        valid = f[f >= 0]
        hits += min(k, int(np.sum(data[valid] @ q >= kth - eps)))
    return hits / (k * len(queries))


def _query_stats(index, data: np.ndarray, queries: np.ndarray, truth: np.ndarray, k: int,
                 ef: int) -> dict:
    """Recall vs exact and single-query latency percentiles at query-time ``ef``."""
    index.set_ef(ef)
    found = np.empty((len(queries), k), dtype=np.int64)
    lat = []
    for qi, q in enumerate(queries):
        t = time.perf_counter()
        ids, _ = index.search(q, k)
        lat.append((time.perf_counter() - t) * 1000)
        found[qi] = ids[0]
    recall = tie_aware_recall(data, queries, found, truth)
    lat_sorted = sorted(lat)
    return {f"recall@{k}_vs_exact": round(recall, 4),
            "query_p50_ms": round(statistics.median(lat), 3),
            "query_p99_ms": round(lat_sorted[min(len(lat) - 1, int(0.99 * len(lat)))], 3)}


def real_vectors(paths, corpus_name: str) -> np.ndarray:
    from ...corpus.manager import CorpusManager
    from ...index.layout import IndexLayout
    from ...index.build.shards import ShardStore

    layout = IndexLayout(CorpusManager(paths, None).corpus_dir(corpus_name) / "index")
    parts = [v for _, v in ShardStore(layout, corpus_name).iter_shards()]
    if not parts:
        from ...errors import IndexError_

        raise IndexError_(f"Corpus '{corpus_name}' has no embedded passages to measure.",
                          hint=f"Build its index first: searchain corpus index {corpus_name}")
    return np.concatenate(parts)


# -- encode overhead --------------------------------------------------------------------------
def measure_encode_overhead(settings, dataset: str | None, limit: int, repeats: int, *,
                            models_dir: Path | None = None) -> dict:
    """Median embed-stage time of ``build_index`` over bare ``encode`` on the same texts
    (``models_dir``: where a packaged embedder is unpacked, the user's, not the scratch home's)."""
    from dataclasses import replace

    from ...config import AppPaths
    from ...corpus.manager import CorpusManager
    from ...index.build.builder import build_index
    from ...index.layout import doc_text
    from ...index.embed.embedder import Embedder
    from ...index.embed.precision import precision_context

    r = settings.retrieval
    embedder = Embedder.for_settings(r, models_dir=models_dir)
    with tempfile.TemporaryDirectory(prefix="searchain-enc-") as tmp:
        paths = AppPaths.resolve(tmp).ensure()
        manager = CorpusManager(paths, settings)
        if dataset:
            from ...eval.datasets import load_dataset

            ds = load_dataset(dataset)
            source, fmt = ds.path, ds.kind
        else:
            from ...library.demo import demo_articles_dir

            source, fmt = demo_articles_dir(), "folder"
        manager.add("enc-full", source, fmt)
        # Keep the first ``limit`` passages in a second corpus, so both sides see the same texts.
        with manager.open_store("enc-full") as full:
            passages = [p for batch in full.iter_batches(batch_size=limit) for _, p in batch][:limit]
        from ...corpus.store import PassageStore

        with PassageStore.open(manager.corpus_dir("enc") / "passages.db", create=True, corpus="enc") as st:
            st.add(passages)
        texts = [doc_text(p) for p in passages]
        model, precision = embedder.model, embedder.effective_precision

        def bare_encode(in_precision: str) -> float:
            # The baseline runs in the pipeline's own precision, so the ratio is the pipeline's cost.
            t = time.perf_counter()
            with precision_context(in_precision, embedder.effective_device):
                model.encode(texts, batch_size=embedder.batch_size, convert_to_numpy=True,
                             normalize_embeddings=True, show_progress_bar=False)
            return time.perf_counter() - t

        with precision_context(precision, embedder.effective_device):
            model.encode(texts[:64], batch_size=embedder.batch_size)  # warm-up: first calls allocate
        bare, pipe = [], []
        for _ in range(max(1, repeats)):
            bare.append(bare_encode(precision))
            report = build_index(paths, replace(settings, retrieval=replace(r, second_embedder="")), "enc",
                                 embedder=embedder, rebuild=True)
            pipe.append(report.embed_s)
        fp32 = bare_encode("fp32") if precision != "fp32" else None
    b, p = statistics.median(bare), statistics.median(pipe)
    result = {"encode_overhead": round(p / b, 3), "encode_bare_s": round(b, 3),
              "encode_pipeline_s": round(p, 3), "encode_passages": len(texts),
              "passages_per_s": round(len(texts) / p, 1), "encode_repeats": len(bare),
              "encode_precision": precision, "encode_source": str(source)}
    if fp32 is not None:  # what the precision itself buys, from one float32 pass
        result["encode_bare_fp32_s"] = round(fp32, 3)
        result["precision_speedup"] = round(fp32 / b, 2)
    return result


def run(ctx, args) -> int:
    r = ctx.settings.retrieval
    m, efc, ef = args.m or r.hnsw_m, args.ef_construction or r.hnsw_ef_construction, args.ef or r.hnsw_ef_search
    rng = np.random.default_rng(args.seed)
    if args.dist == "clustered":
        data, centres = clustered_vectors(args.n, args.dim, rng)
        queries, _ = clustered_vectors(args.queries, args.dim, rng, centres=centres)
    else:
        data, queries = uniform_vectors(args.n, args.dim, rng), uniform_vectors(args.queries, args.dim, rng)
    sweep = tuple(int(x) for x in args.ef_sweep.split(",") if x.strip())
    result = {"vectors": args.dist, **measure_hnsw(data, queries, m=m, ef_construction=efc, ef=ef,
                                                   ef_sweep=sweep)}
    del data
    if args.real:
        vecs = np.concatenate([real_vectors(ctx.paths, name) for name in args.real])
        held = np.random.default_rng(args.seed).permutation(len(vecs))
        nq = min(500, len(vecs) // 10)
        result["real"] = {"corpus": ",".join(args.real), "queries_are": "held-out passage vectors",
                          **measure_hnsw(vecs[held[nq:]], vecs[held[:nq]], m=m,
                                         ef_construction=efc, ef=ef, ef_sweep=sweep)}
    if not args.no_encode:
        result.update(measure_encode_overhead(ctx.settings, args.encode_dataset, args.encode_limit,
                                              args.repeats, models_dir=ctx.paths.models_dir))
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0
