"""``searchain bench warmup``: the first question of a session, with and without a warm start.

    searchain bench warmup --model M.gguf --dataset ../shared/eval/hotpotqa/dev_500.jsonl --limit 4

One model is loaded (its load time and the embedder's first search are reported once: a warm
start moves them out of the first question too). Then, for each question, twice, in alternating
order: ``cold`` forgets the KV cache and every saved state (``reset_cache``), as a freshly loaded
model has none, and answers; ``warm`` forgets them too, runs ``Workspace.warm_up`` (timed apart:
it runs while the user types), and answers. Reports per variant the median seconds to the whole
answer and to the first one shown, the prompt tokens evaluated, and warm/cold ratios.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time

from ..errors import ConfigError

VARIANTS = ("cold", "warm")


def register(sub) -> None:
    p = sub.add_parser("warmup", help="the first question of a session, with and without a warm start")
    p.add_argument("--dataset", required=True, help="HotpotQA or MuSiQue JSON-lines file (../shared/eval/...)")
    p.add_argument("--model", metavar="MODEL", help="a GGUF file, or a name from `models list [--all]` (default: the configured one)")
    p.add_argument("--limit", type=int, default=4, help="first N questions (default 4)")
    p.add_argument("--mode", default="searchain", help="the mode to answer in (default searchain)")
    p.add_argument("--set", action="append", default=[], dest="overrides", metavar="KEY=VALUE",
                   help="a setting for this run (never saved)")
    p.add_argument("--json", action="store_true", help="(always JSON; accepted for symmetry)")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    print(json.dumps(measure(ctx, args), indent=2, ensure_ascii=False))
    return 0


def _evaluated(outcome) -> int:
    return int(sum(cost.get("evaluated", 0) for cost in outcome.costs_by_phase.values()))


def measure(ctx, args) -> dict:
    from ..eval.corpus import ensure_eval_corpus
    from ..eval.datasets import load_dataset
    from ..eval.runner import answer_question
    from ..reasoning.modes import check_mode, needs_ir
    from ..workspace import Workspace
    from .loop import with_overrides

    if args.limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {args.limit}.")
    mode = check_mode(args.mode)
    settings = with_overrides(ctx.settings, args.overrides)
    if args.model:
        from ..llm.models.locate import model_option

        settings.llm.model_path = model_option(args.model, ctx.paths, settings.llm)
    dataset = load_dataset(args.dataset, limit=args.limit)
    corpus = ensure_eval_corpus(ctx.paths, settings, dataset) if needs_ir(mode) else None
    workspace = Workspace(ctx.paths, settings)
    started = time.time()
    try:
        clock = time.perf_counter()
        llm = workspace.llm()
        load_seconds = time.perf_counter() - clock
        reset = getattr(llm, "reset_cache", None)
        if reset is None:
            raise ConfigError("bench warmup needs a model whose KV cache can be reset (llama.cpp).")
        clock = time.perf_counter()
        if corpus is not None:
            workspace.retriever(corpus).search("warm up", k=1)
        first_search_seconds = time.perf_counter() - clock
        answer = workspace.engine(mode=mode, corpus=corpus).answer
        rows: dict[str, list[dict]] = {name: [] for name in VARIANTS}
        for index, question in enumerate(dataset.questions):
            order = VARIANTS if index % 2 == 0 else VARIANTS[::-1]
            for name in order:
                reset()
                warm = workspace.warm_up(mode=mode, corpus=corpus) if name == "warm" else None
                outcome = answer_question(answer, question, mode=mode)
                if outcome.error:
                    raise ConfigError(f"Question {question.id} failed: {outcome.error}")
                rows[name].append({
                    "id": question.id, "seconds": outcome.seconds, "evaluated": _evaluated(outcome),
                    "first_answer_seconds": outcome.first_answer_seconds or outcome.seconds,
                    "prediction": outcome.prediction,
                    "warm_up_seconds": warm.seconds if warm else None,
                    "warm_up_evaluated": warm.evaluated_tokens if warm else None,
                })
    finally:
        workspace.close()
    return {
        "benchmark": "warmup", "dataset": str(dataset.path), "questions": len(dataset.questions),
        "model": os.path.basename(settings.llm.model_path), "mode": mode, "corpus": corpus,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "n_threads": settings.llm.n_threads, "isolation": settings.llm.isolation},
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        "model_load_seconds": round(load_seconds, 2), "first_search_seconds": round(first_search_seconds, 2),
        **summarize(rows),
    }


def summarize(rows: dict[str, list[dict]]) -> dict:
    """Medians per variant, warm/cold ratios, and whether both gave the same predictions."""
    def median(name: str, key: str) -> float:
        return round(statistics.median(row[key] for row in rows[name]), 2)

    out = {name: {"seconds_median": median(name, "seconds"),
                  "first_answer_seconds_median": median(name, "first_answer_seconds"),
                  "evaluated_median": median(name, "evaluated")} for name in VARIANTS}
    out["warm"]["warm_up_seconds_median"] = median("warm", "warm_up_seconds")
    out["warm"]["warm_up_evaluated_median"] = median("warm", "warm_up_evaluated")
    for key in ("seconds", "first_answer_seconds"):
        cold = out["cold"][f"{key}_median"]
        out[f"warm_over_cold_{key}"] = round(out["warm"][f"{key}_median"] / cold, 3) if cold else None
    pairs = zip(rows["cold"], rows["warm"])
    out["same_predictions"] = sum(a["prediction"] == b["prediction"] for a, b in pairs)
    out["rows"] = rows
    return out
