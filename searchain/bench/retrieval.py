"""``searchain bench retrieval --dataset PATH [--json]``: recall@k of each retriever.

The dataset's paragraphs are pooled into one corpus (through the corpus ingest code, in a
temporary home unless ``--work`` names a folder to keep and reuse), the index is built and
timed, then every query is run against dense, BM25 and hybrid retrieval (plus plain RRF
fusion, the usual baseline). Queries, as in ``../shared/eval/README.md``:

- MuSiQue: each gold decomposition step, ``#n`` replaced by earlier answers; gold = the
  step's supporting paragraph.
- HotpotQA: each question, once per supporting paragraph (recall of each paragraph).

Prints ONE JSON object: ``{"default": ..., "dense": {"recall@1": ..}, "bm25": .., "hybrid": ..,
"corpus_size": .., "queries": .., "index_build_s": .., ...}``.

Each row also carries ``recall@1_ci95``, a 95% bootstrap interval over *questions* (a few hundred
questions leave several points of sampling error), and ``paired_recall@1`` gives the hybrid's
recall@1 gain over each other row on the same queries, with its interval: the figure to read when
comparing two settings.

With a second embedding model (``--second-embedder NAME``, or the one ``retrieval.second_embedder``
puts in use, ``auto`` resolved) the pool is indexed by it too, and two rows are added from the same run:
``dense_2nd`` (that model alone) and ``hybrid+2nd`` (the hybrid with both models), with its
paired gain over ``hybrid``.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

KS = (1, 5, 10)


def register(sub) -> None:
    p = sub.add_parser("retrieval", help="recall@1/5/10 of dense, BM25 and hybrid retrieval")
    p.add_argument("--dataset", required=True, help="a MuSiQue or HotpotQA JSON-lines file")
    p.add_argument("--json", action="store_true", help="print only the JSON object (default too)")
    p.add_argument("--limit", type=int, default=None, help="use the first N questions")
    p.add_argument("--work", help="keep the pooled corpus and index in this folder and reuse them")
    p.add_argument("--rrf-baseline", action=argparse_bool(), default=True,
                   help="also score plain (unweighted, title-blind) RRF fusion as a baseline")
    p.add_argument("--reranker", metavar="NAME|PATH",
                   help="also score the default retriever re-ranked by this cross-encoder "
                        "(default: the retrieval.reranker setting, if any)")
    p.add_argument("--second-embedder", metavar="NAME|PATH",
                   help="also score hybrid retrieval with this second embedding model "
                        "(default: the retrieval.second_embedder setting, if any)")
    p.set_defaults(func=run)


def argparse_bool():
    import argparse

    return argparse.BooleanOptionalAction


def _eval_items(dataset):
    """``(question id, query, gold pid)`` for each scored pair (see module docstring)."""
    from ..corpus.ids import passage_pid
    from ..eval.datasets import MUSIQUE

    for q in dataset.questions:
        if dataset.kind == MUSIQUE:
            for step in q.steps:
                if step.paragraph is not None and step.query.strip():
                    yield q.id, step.query, passage_pid(step.paragraph.title, step.paragraph.text)
        else:
            for p in q.supporting:
                yield q.id, q.question, passage_pid(p.title, p.text)


def eval_queries(dataset) -> list[tuple[str, str]]:
    """``[(query, gold pid)]`` for the dataset (see module docstring)."""
    return [(query, gold) for _, query, gold in _eval_items(dataset)]


def eval_question_ids(dataset) -> list[str]:
    """The question each of ``eval_queries(dataset)`` comes from, in the same order: the
    bootstrap resamples whole questions."""
    return [qid for qid, _, _ in _eval_items(dataset)]


def gold_ranks(retriever, pairs: list[tuple[str, str]], depth: int = max(KS)) -> list[int | None]:
    """1-based rank of each pair's gold passage in the retriever's top ``depth`` (None: not there).
    A query asked twice (HotpotQA: once per supporting paragraph) is searched once."""
    cache: dict[str, list[str]] = {}
    ranks: list[int | None] = []
    for query, gold in pairs:
        if query not in cache:
            cache[query] = [h.passage.pid for h in retriever.search(query, depth)]
        ranked = cache[query]
        ranks.append(ranked.index(gold) + 1 if gold in ranked else None)
    return ranks


def recall_from_ranks(ranks: list[int | None], ks=KS) -> dict[str, float]:
    """Share of pairs whose gold passage is in the top k, for each k."""
    n = max(1, len(ranks))
    return {f"recall@{k}": round(sum(1 for r in ranks if r is not None and r <= k) / n, 4) for k in ks}


def top1_hits(ranks: list[int | None]) -> list[float]:
    return [1.0 if r == 1 else 0.0 for r in ranks]


def scored_row(ranks: list[int | None], questions: list[str]) -> dict:
    """A retriever's row: recall@1/5/10 plus the 95% question-bootstrap interval of recall@1."""
    from ..eval.stats import bootstrap_ci

    row: dict = recall_from_ranks(ranks)
    row["recall@1_ci95"] = list(bootstrap_ci(top1_hits(ranks), questions))
    return row


def paired_top1(treatment: list[int | None], baseline: list[int | None], questions: list[str]) -> dict:
    """recall@1 of ``treatment`` minus ``baseline`` on the same queries, with its interval."""
    from ..eval.stats import paired_bootstrap_delta

    return paired_bootstrap_delta(top1_hits(treatment), top1_hits(baseline), questions)


def _source_file(path: Path, limit: int | None, work: Path) -> Path:
    """The dataset file, or a copy of its first ``limit`` records (the pooled corpus of a
    ``--limit`` run holds only the paragraphs of the questions it asks)."""
    if not limit:
        return path
    out = work / f"first{limit}-{path.name}"
    with open(path, encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        kept = 0
        for line in src:
            if line.strip():
                dst.write(line)
                kept += 1
                if kept >= limit:
                    break
    return out


def _second_rows(ctx, paths, settings, name, second_name, embedder, pairs, questions, ranks,
                 result, timings, paired) -> None:
    """Index the pool with the second model and add its rows. The model comes from the user's
    home (a packaged one is unpacked there once), not the bench's scratch home."""
    from ..index.build.builder import build_index
    from ..index.embed.embedder import Embedder
    from ..index.retrievers import open_retriever

    second = Embedder.for_settings(settings.retrieval, second_name, models_dir=ctx.paths.models_dir)
    with_second = replace(settings, retrieval=replace(settings.retrieval, second_embedder=second_name))
    t0 = time.perf_counter()
    build_index(paths, with_second, name, embedder=embedder, second_embedder=second)
    build_s = time.perf_counter() - t0
    hybrid = open_retriever(paths, with_second, name, "hybrid", embedder=embedder, rerank=False,
                            second_embedder=second)
    if hybrid.second is None:
        raise RuntimeError("the second model's index could not be opened right after building it")
    for row, retriever in (("dense_2nd", hybrid.second), ("hybrid+2nd", hybrid)):
        t = time.perf_counter()
        ranks[row] = gold_ranks(retriever, pairs)
        result[row] = scored_row(ranks[row], questions)
        timings[row] = round((time.perf_counter() - t) * 1000 / max(1, len(pairs)), 2)
    result["second_embedder"] = second.model_id
    result["second_index_build_s"] = round(build_s, 2)
    paired["hybrid+2nd_vs_hybrid"] = paired_top1(ranks["hybrid+2nd"], ranks["hybrid"], questions)


def run(ctx, args) -> int:
    from ..config import AppPaths, Settings
    from ..corpus.manager import CorpusManager
    from ..eval.datasets import load_dataset
    from ..index.build.builder import build_index
    from ..index.embed.embedder import Embedder
    from ..index.cross_encoder import CrossEncoderReranker
    from ..index.retrievers import BM25Retriever, HybridRetriever, open_retriever
    from ..index.embed.second import second_embedder_name

    dataset = load_dataset(args.dataset, limit=args.limit)
    pairs = eval_queries(dataset)
    questions = eval_question_ids(dataset)
    work = Path(args.work).expanduser() if args.work else Path(tempfile.mkdtemp(prefix="searchain-bench-"))
    try:
        paths = AppPaths.resolve(work).ensure()
        settings = replace(Settings(), retrieval=replace(ctx.settings.retrieval))
        in_use = second_embedder_name(ctx.settings.retrieval, ctx.paths.models_dir)
        second_name = (args.second_embedder or in_use).strip()
        # The plain rows score the first model alone; the second gets rows of its own below.
        settings.retrieval.second_embedder = ""
        manager = CorpusManager(paths, settings)
        name = dataset.corpus_name + (f"-first{args.limit}" if args.limit else "")
        if not manager.exists(name):
            manager.add(name, _source_file(dataset.path, args.limit, work), dataset.kind)
        embedder = Embedder.for_settings(settings.retrieval, models_dir=ctx.paths.models_dir)
        t0 = time.perf_counter()
        report = build_index(paths, settings, name, embedder=embedder)
        build_s = time.perf_counter() - t0

        result: dict = {"default": settings.retrieval.retriever}
        timings: dict[str, float] = {}
        ranks: dict[str, list[int | None]] = {}
        for kind in ("dense", "bm25", "hybrid"):
            retriever = open_retriever(paths, settings, name, kind, embedder=embedder, rerank=False)
            t = time.perf_counter()
            ranks[kind] = gold_ranks(retriever, pairs)
            result[kind] = scored_row(ranks[kind], questions)
            timings[kind] = round((time.perf_counter() - t) * 1000 / max(1, len(pairs)), 2)
        # recall@1 differences on the same queries: far tighter intervals than each row's own.
        paired = {"hybrid_vs_dense": paired_top1(ranks["hybrid"], ranks["dense"], questions),
                  "hybrid_vs_bm25": paired_top1(ranks["hybrid"], ranks["bm25"], questions)}
        settings.retrieval.reranker = (args.reranker or settings.retrieval.reranker).strip()
        if settings.retrieval.reranker:
            # Same first stage as the default's row above, so the two rows are a paired comparison.
            # The re-ranker is installed in the user's home, not in the bench's scratch home.
            reranker = CrossEncoderReranker(settings.retrieval.reranker, models_dir=ctx.paths.models_dir)
            retriever = open_retriever(paths, settings, name, None, embedder=embedder, reranker=reranker)
            t = time.perf_counter()
            ranks[retriever.name] = gold_ranks(retriever, pairs)
            result[retriever.name] = scored_row(ranks[retriever.name], questions)
            timings[retriever.name] = round((time.perf_counter() - t) * 1000 / max(1, len(pairs)), 2)
            result["reranker"] = retriever.reranker.name
            paired[f"{retriever.name}_vs_hybrid"] = paired_top1(ranks[retriever.name], ranks["hybrid"],
                                                                 questions)
            if ctx.settings.retrieval.reranker.strip():  # on in the settings: it is the default
                result["default"] = retriever.name
        if second_name:
            _second_rows(ctx, paths, settings, name, second_name, embedder, pairs, questions,
                         ranks, result, timings, paired)
            if in_use:  # on in the settings (or by ``auto``): it is the default
                result["default"] = "hybrid+2nd"
        if args.rrf_baseline:
            dense = open_retriever(paths, settings, name, "dense", embedder=embedder, rerank=False)
            plain = HybridRetriever(dense, BM25Retriever(dense.source, title_weight=1.0, idf_power=0.0),
                                    dense_weight=0.5, method="rrf", depth=60)
            ranks["rrf_plain"] = gold_ranks(plain, pairs)
            result["rrf_plain"] = scored_row(ranks["rrf_plain"], questions)
            paired["hybrid_vs_rrf_plain"] = paired_top1(ranks["hybrid"], ranks["rrf_plain"], questions)
        result["paired_recall@1"] = paired
        with manager.open_store(name) as store:
            corpus_size = store.count()
        r = settings.retrieval
        result.update({
            "dataset": str(dataset.path), "kind": dataset.kind, "corpus_size": corpus_size,
            "queries": len(pairs), "index_build_s": round(build_s, 2),
            "index_build_fresh": report.embedded == corpus_size,
            "embedder": embedder.model_id, "ms_per_query": timings,
            "params": {"bm25_title_weight": r.bm25_title_weight, "bm25_idf_power": r.bm25_idf_power,
                       "hybrid_dense_weight": r.hybrid_dense_weight, "hybrid_depth": r.hybrid_depth,
                       "hybrid_method": r.hybrid_method,
                       "hybrid_title_boost": r.hybrid_title_boost, "hnsw_m": r.hnsw_m,
                       "reranker": r.reranker, "rerank_depth": r.rerank_depth,
                       "hnsw_ef_search": r.hnsw_ef_search},
        })
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
    return 0
