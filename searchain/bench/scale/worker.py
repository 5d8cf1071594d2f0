"""The steps of ``searchain bench scale``, each run in a process of its own so that its peak
resident memory is its own: ``python -m searchain.bench.scale.worker STEP WORK_DIR``.

- ``corpus``: the passage store (gold paragraphs, then Zipfian passages) with its FTS5 index.
- ``vectors``: clustered vectors for every passage, written as embedding shards.
- ``index``: the compact vector index, through the builder's own index stage.
- ``serve``: a fresh process opens the built corpus and runs the dense, BM25 and hybrid queries.

Every step resumes where a killed run stopped. Each prints one JSON object (its timings and its
peak RSS) as its last line.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

CORPUS = "scale"
EMBEDDER_ID = "synthetic-clustered"  # stands in for a model: the vectors are generated


def peak_rss() -> dict:
    """This process's peak resident memory (VmHWM) and its current anonymous / file-backed
    parts (memory-mapped shards count as file-backed: page cache the kernel can reclaim)."""
    fields = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in ("VmHWM", "RssAnon", "RssFile"):
                fields[key] = int(value.split()[0]) * 1024
    return {"peak_rss_bytes": fields.get("VmHWM", 0), "rss_anon_bytes": fields.get("RssAnon", 0),
            "rss_file_bytes": fields.get("RssFile", 0)}


def load_state(work: Path) -> dict:
    return json.loads((work / "state.json").read_text(encoding="utf-8"))


def layout_of(work: Path):
    from ...index.layout import IndexLayout

    return IndexLayout(work / "home" / "corpora" / CORPUS / "index")


def store_path(work: Path) -> Path:
    return work / "home" / "corpora" / CORPUS / "passages.db"


def step_corpus(work: Path, state: dict) -> dict:
    from ...config import Settings
    from ...index.bm25 import tantivy_index as bm25_tantivy
    from ...corpus.ids import passage_pid
    from ...corpus.store import PassageStore
    from ...types import Passage
    from .data import BLOCK, ZipfText, gold_paragraphs, load_eval_sets

    gold = gold_paragraphs(load_eval_sets())
    n = state["passages"]
    text = ZipfText(gold, seed=state["seed"])
    gen_s = insert_s = 0.0
    with PassageStore.open(store_path(work), create=True, corpus=CORPUS) as store:
        have = store.count()
        if have < len(gold):
            t = time.perf_counter()
            store.add(Passage(CORPUS, passage_pid(ti, tx), ti, tx) for ti, tx in gold)
            insert_s += time.perf_counter() - t
        synthetic = n - len(gold)
        done = max(0, store.count() - len(gold))
        for b in range(done // BLOCK, -(-synthetic // BLOCK)):
            t = time.perf_counter()
            size = min(BLOCK, synthetic - b * BLOCK)
            batch = [Passage(CORPUS, f"s{b}-{i}", ti, tx) for i, (ti, tx) in enumerate(text.block(b, size))]
            t2 = time.perf_counter()
            store.add(batch, batch_size=BLOCK)
            gen_s += t2 - t
            insert_s += time.perf_counter() - t2
        count, top = store.count(), store.max_id()
        store.checkpoint_and_detach_wal()
        t = time.perf_counter()  # the keyword index large corpora get (bm25_tantivy.py)
        tantivy_built = bm25_tantivy.ensure_current(store, Settings().retrieval.bm25_title_weight,
                                                    min_passages=0)
        tantivy_s = time.perf_counter() - t
    if count != top:
        raise SystemExit(f"passage ids are not 1..{count} (max id {top}): remove {work} and start again")
    return {"passages": count, "generate_s": round(gen_s, 1), "bm25_build_s": round(insert_s, 1),
            "tantivy_build_s": round(tantivy_s, 1) if tantivy_built else None, **peak_rss()}


def step_vectors(work: Path, state: dict) -> dict:
    from ...index.layout import DOC_FORMAT
    from ...index.build.shards import ShardStore
    from .data import BLOCK, ClusteredVectors

    layout = layout_of(work)
    shards = ShardStore(layout, CORPUS)
    layout.root.mkdir(parents=True, exist_ok=True)
    shards.set_owner({"embedder": EMBEDDER_ID, "doc_format": DOC_FORMAT})
    gen = ClusteredVectors(state["dim"], seed=state["seed"])
    n = state["passages"]
    t = time.perf_counter()
    for b in range(shards.next_seq() - 1, -(-n // BLOCK)):
        first = b * BLOCK + 1
        ids = np.arange(first, min(n, first + BLOCK - 1) + 1, dtype=np.int64)
        shards.write(b + 1, ids, gen.block(b, len(ids)))
    return {"vectors_s": round(time.perf_counter() - t, 1), **peak_rss()}


def step_index(work: Path, state: dict) -> dict:
    from ...index.build.compact_build import build_compact

    t = time.perf_counter()
    report = build_compact(layout_of(work), CORPUS, EMBEDDER_ID, state["dim"],
                           np.arange(1, state["passages"] + 1, dtype=np.int64))
    return {"index_build_s": round(time.perf_counter() - t, 1), "spec": report.spec,
            "indexed": report.total, **peak_rss()}


class _QueryVectors:
    """An embedder stand-in: each text query maps to one of the synthetic query vectors."""

    def __init__(self, texts: list[str], vectors: np.ndarray):
        self.model_id = EMBEDDER_ID
        self._by_text = {t: vectors[i % len(vectors)] for i, t in enumerate(texts)}

    def encode(self, texts, batch_size: int = 1, **_):
        return np.stack([self._by_text[t] for t in texts])


def _percentiles(ms: list[float]) -> tuple[float, float]:
    ordered = sorted(ms)
    return (round(float(np.median(ordered)), 3),
            round(ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))], 3))


def step_serve(work: Path, state: dict) -> dict:
    import faiss

    from ...config import Settings
    from ...corpus.store import PassageStore
    from ...index.bm25.fts5 import BM25Retriever
    from ...index.dense import DenseRetriever, open_vectors
    from ...index.hybrid import HybridRetriever
    from ...index.passages import PassageSource
    from .data import ClusteredVectors, load_eval_sets, multihop_queries

    faiss.omp_set_num_threads(1)
    t = time.perf_counter()
    queries = ClusteredVectors(state["dim"], seed=state["seed"]).queries(state["queries"])
    texts = multihop_queries(load_eval_sets()) if state["bm25"] else []
    if len(texts) > state.get("text_queries", len(texts)):  # a fixed sample: same in every run
        pick = np.random.default_rng(state["seed"]).choice(len(texts), state["text_queries"], replace=False)
        texts = [texts[i] for i in sorted(pick)]
    embedder = _QueryVectors(texts, queries)
    index, _ = open_vectors(layout_of(work), CORPUS, embedder)
    open_s = time.perf_counter() - t
    dense_ms, found = [], np.full((len(queries), 10), -1, dtype=np.int64)
    for qi, q in enumerate(queries):
        t = time.perf_counter()
        ids, _ = index.search(q, 10)
        dense_ms.append((time.perf_counter() - t) * 1000)
        found[qi, :len(ids)] = ids
    np.save(work / "found.npy", found)
    out = {"open_s": round(open_s, 2), "dense_queries": len(queries)}
    out["dense_p50_ms"], out["dense_p99_ms"] = _percentiles(dense_ms)
    if texts:
        r = Settings().retrieval
        source = PassageSource(PassageStore.open(store_path(work), corpus=CORPUS))
        bm25 = BM25Retriever(source, title_weight=r.bm25_title_weight, idf_power=r.bm25_idf_power)
        dense = DenseRetriever(source, index, embedder)
        hybrid = HybridRetriever(dense, bm25, dense_weight=r.hybrid_dense_weight, depth=r.hybrid_depth,
                                 method=r.hybrid_method, title_boost=r.hybrid_title_boost)
        fts5 = BM25Retriever(source, title_weight=r.bm25_title_weight, idf_power=r.bm25_idf_power,
                             use_tantivy=False)
        bm25_ms, fts5_ms, hybrid_ms = [], [], []
        for text in texts:  # the product's path (tantivy when built) and FTS5, interleaved
            t = time.perf_counter()
            bm25.scores(text, 10)
            bm25_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            fts5.scores(text, 10)
            fts5_ms.append((time.perf_counter() - t) * 1000)
        for text in texts:
            t = time.perf_counter()
            hybrid.fused_scores(text, 10)
            hybrid_ms.append((time.perf_counter() - t) * 1000)
        out["bm25_queries"] = len(texts)
        out["bm25_p50_ms"], out["bm25_p99_ms"] = _percentiles(bm25_ms)
        out["bm25_fts5_p50_ms"], out["bm25_fts5_p99_ms"] = _percentiles(fts5_ms)
        out["bm25_backend"] = "tantivy" if bm25._tantivy is not None else "fts5"
        out["hybrid_p50_ms"], out["hybrid_p99_ms"] = _percentiles(hybrid_ms)
        # The first pass pays for cold document-frequency caches and cold pages; a second pass
        # over the same queries shows the warm figure.
        warm = []
        for text in texts:
            t = time.perf_counter()
            bm25.scores(text, 10)
            warm.append((time.perf_counter() - t) * 1000)
        out["bm25_warm_p50_ms"], out["bm25_warm_p99_ms"] = _percentiles(warm)
    return {**out, **peak_rss()}


STEPS = {"corpus": step_corpus, "vectors": step_vectors, "index": step_index, "serve": step_serve}


def main(argv: list[str] | None = None) -> int:
    step, work = (argv or sys.argv[1:])[:2]
    work = Path(work)
    result = STEPS[step](work, load_state(work))
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
