"""``searchain bench loop``: what SearChain's loop costs against plain RAG, phase by phase.

    searchain bench loop --model M.gguf --dataset ../shared/eval/hotpotqa/dev_500.jsonl --limit 10 \
        --mode rag,searchain [--variant off:llm.prompt_lookup=0 --variant on:llm.prompt_lookup=10] --json

Every question is answered in every variant and mode before the next question (variant A's rag
and searchain, then variant B's, ...), so a noisy shared CPU slows all of them alike. Each variant
and mode has a workspace and model process of its own (one model shared by rag and searchain, as
`searchain eval` shares it, leaves RAG's prompt in the KV cache for SearChain's final answer,
which asks over RAG's passages: it looked 360 prompt tokens cheaper than alone). A variant is
a name and settings (``KEY=VALUE`` as `searchain config set` takes them) applied to its
workspaces; the pseudo-setting ``cold=true`` empties the model's KV cache and saved
states before each question (no cross-question prefix reuse). Without ``--variant`` there is one,
``default``.

The JSON: per variant and mode, cover-EM, strict cover-EM, F1, and ``eval/costs.py``'s figures
(median s/question; per phase prompt / evaluated / completion tokens, seconds, decode tokens/s);
per variant the median-seconds ratio of each mode to the first (SearChain/RAG); per mode, every
variant against the first: paired wins and losses, and how many predictions are identical.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from ..errors import ConfigError

COLD = "cold"


@dataclass
class Variant:
    name: str
    overrides: list[str] = field(default_factory=list)
    cold: bool = False


def parse_variant(text: str) -> Variant:
    """``NAME:KEY=VALUE,KEY=VALUE`` (or ``NAME`` alone) -> ``Variant``."""
    name, _, rest = text.partition(":")
    name = name.strip()
    if not name:
        raise ConfigError(f"--variant {text!r} has no name.", hint="For example --variant off:llm.prompt_lookup=0")
    variant = Variant(name)
    for item in (part.strip() for part in rest.split(",") if part.strip()):
        key, sep, value = item.partition("=")
        if not sep:
            raise ConfigError(f"--variant {name}: {item!r} is not KEY=VALUE.",
                              hint="For example --variant on:llm.prompt_lookup=10,cold=true")
        if key.strip() == COLD:
            variant.cold = value.strip().lower() in ("1", "true", "yes", "on")
        else:
            variant.overrides.append(f"{key.strip()}={value.strip()}")
    return variant


def register(sub) -> None:
    p = sub.add_parser("loop", help="SearChain's loop against RAG per phase: tokens evaluated, seconds, ratio")
    p.add_argument("--dataset", required=True, help="HotpotQA or MuSiQue JSON-lines file (../shared/eval/...)")
    p.add_argument("--model", metavar="MODEL", help="a GGUF file, or a name from `models list [--all]` (default: the configured one)")
    p.add_argument("--limit", type=int, default=10, help="first N questions (default 10)")
    p.add_argument("--skip", type=int, default=0, metavar="N",
                   help="start after the first N questions (a split not used before; the corpus "
                        "is the whole file's either way)")
    p.add_argument("--mode", default="rag,searchain",
                   help="modes, the first being the baseline of the ratio (default rag,searchain)")
    p.add_argument("--variant", action="append", default=[], metavar="NAME:KEY=VALUE,...",
                   help="settings to compare, interleaved question by question; may be repeated; "
                        "cold=true resets the KV cache before each question")
    p.add_argument("--set", action="append", default=[], dest="overrides", metavar="KEY=VALUE",
                   help="a setting for every variant (never saved)")
    p.add_argument("--details", metavar="PATH", help="also write one JSON line per question, variant and mode")
    p.add_argument("--resume", action="store_true",
                   help="keep the outcomes already in --details and answer only the missing ones")
    p.add_argument("--from-details", metavar="PATH",
                   help="answer nothing: report on the questions a --details log holds in every "
                        "variant and mode (a stopped or running run); --variant and --mode as given then")
    p.add_argument("--json", action="store_true", help="(always JSON; accepted for symmetry)")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    report = from_details(args) if args.from_details else measure(ctx, args)
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


def read_details(path, keys) -> tuple[dict[tuple[str, str], dict[str, Any]], list[str]]:
    """Outcomes in a details log by (variant, mode) and question id, for the ``keys`` wanted, and
    the question ids in the order first seen. A last line cut short by a kill is cut from the
    file (appends then start on a clean line); any other bad line is an error naming it."""
    from pathlib import Path

    from ..eval.compare import outcome_lines

    rows: dict[tuple[str, str], dict[str, Any]] = {key: {} for key in keys}
    path = Path(path).expanduser()
    if not path.is_file():
        raise ConfigError(f"Cannot read the details log {path}: no such file.",
                          hint="Pass the --details file a bench loop run wrote.")
    order: list[str] = []
    for _, data, outcome in outcome_lines(path, "a bench loop outcome"):
        key = (data.get("variant", ""), outcome.mode)
        if key in rows:
            rows[key][outcome.id] = outcome
            if outcome.id not in order:
                order.append(outcome.id)
    return rows, order


def from_details(args) -> dict[str, Any]:
    """The report over a details log: the questions answered in every variant and mode."""
    modes = [m.strip() for m in args.mode.split(",") if m.strip()]
    variants = [parse_variant(v) for v in args.variant] or [Variant("default")]
    rows, order = read_details(args.from_details, [(v.name, m) for v in variants for m in modes])
    complete = [i for i in order if all(i in got for got in rows.values())]
    if not complete:
        raise ConfigError(f"{args.from_details} has no question answered in every variant and mode given.",
                          hint="Pass the --variant and --mode the run was started with.")
    outcomes = {key: [got[i] for i in complete] for key, got in rows.items()}
    return {"benchmark": "loop", "from_details": str(args.from_details), "questions": len(complete), "modes": modes,
            **summarize_loop(outcomes, modes, variants)}


def with_overrides(settings, overrides: list[str]):
    from ..settings_schema import get_value, parse_value, with_value

    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep:
            raise ConfigError(f"--set takes KEY=VALUE, got {item!r}.")
        settings = with_value(settings, key.strip(), parse_value(text.strip(), get_value(settings, key.strip())))
    return settings


def measure(ctx, args) -> dict[str, Any]:
    from ..eval.corpus import ensure_eval_corpus
    from ..reasoning.modes import check_mode, needs_ir

    if args.limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {args.limit}.")
    modes = [check_mode(m.strip()) for m in args.mode.split(",") if m.strip()]
    if not modes:
        raise ConfigError("--mode names no mode.", hint="For example --mode rag,searchain.")
    variants = [parse_variant(v) for v in args.variant] or [Variant("default")]
    if len({v.name for v in variants}) != len(variants):
        raise ConfigError("Two variants have the same name.")
    base = with_overrides(ctx.settings, args.overrides)
    if args.model:
        from ..llm.models.locate import model_option

        base.llm.model_path = model_option(args.model, ctx.paths, base.llm)
    settings = {v.name: with_overrides(base, v.overrides) for v in variants}  # bad keys fail here
    dataset = load_window(args.dataset, int(getattr(args, "skip", 0) or 0), args.limit)
    corpus = None
    if any(needs_ir(m) for m in modes):
        corpus = ensure_eval_corpus(ctx.paths, base, dataset)
    outcomes, started = run_interleaved(ctx, dataset, modes, variants, settings, corpus, args)
    report = summarize_loop(outcomes, modes, variants)
    return {
        "benchmark": "loop", "dataset": str(dataset.path), "questions": len(dataset.questions),
        "model": os.path.basename(base.llm.model_path), "corpus": corpus, "modes": modes,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "n_threads": base.llm.n_threads, "isolation": base.llm.isolation},
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)),
        "seconds_total": round(time.time() - started, 1), **report,
    }


def load_window(path, skip: int, limit: int):
    """Questions ``skip + 1`` .. ``skip + limit`` of a dataset file (its pooled corpus is the whole
    file's either way, so a later split is answered over the same passages)."""
    from ..eval.datasets import load_dataset

    if skip < 0:
        raise ConfigError(f"--skip must be 0 or more, got {skip}.")
    dataset = load_dataset(path, limit=skip + limit)
    if skip >= len(dataset.questions):
        raise ConfigError(f"--skip {skip} leaves no question: {dataset.path} has {len(dataset.questions)}.")
    return replace(dataset, questions=dataset.questions[skip:]) if skip else dataset


def run_interleaved(ctx, dataset, modes, variants, settings, corpus, args):
    """Answer question 1 in every variant and mode, then question 2, ...; returns the outcomes
    by (variant, mode) and the start time."""
    from ..eval.runner import answer_question
    from ..reasoning.modes import needs_ir
    from ..workspace import Workspace

    # A model of its own per variant and mode: in one model, RAG's prompt would leave SearChain's
    # final-answer prompt (RAG's own passages) in the KV cache, and make it look cheaper.
    workspaces = {(v.name, m): Workspace(ctx.paths, settings[v.name]) for v in variants for m in modes}
    outcomes: dict[tuple[str, str], list] = {(v.name, m): [] for v in variants for m in modes}
    engines: dict[tuple[str, str], Any] = {}
    started = time.time()
    resume = bool(getattr(args, "resume", False) and args.details and os.path.exists(args.details))
    done = read_details(args.details, list(outcomes))[0] if resume else {key: {} for key in outcomes}
    details = open(args.details, "a" if resume else "w", encoding="utf-8") if args.details else None
    try:
        for index, question in enumerate(dataset.questions):
            for variant in variants:
                for mode in modes:
                    key = (variant.name, mode)
                    if question.id in done[key]:
                        outcomes[key].append(done[key][question.id])
                        continue
                    workspace = workspaces[key]
                    if variant.cold:
                        reset = getattr(workspace.llm(), "reset_cache", None)
                        if reset is None:
                            raise ConfigError("cold=true needs a model whose KV cache can be reset (llama.cpp).")
                        reset()
                    if key not in engines:
                        engines[key] = workspace.engine(mode=mode, corpus=corpus if needs_ir(mode) else None).answer
                    outcome = answer_question(engines[key], question, mode=mode)
                    outcomes[key].append(outcome)
                    if details:
                        details.write(json.dumps({"variant": variant.name, **asdict(outcome)}, ensure_ascii=False) + "\n")
                        details.flush()
                    if not args.quiet:
                        print(f"[{index + 1}/{len(dataset.questions)}] {variant.name} {mode} {question.id}: "
                              f"EM {outcome.cover_em:.0f} {outcome.seconds:.1f} s "
                              f"{_evaluated(outcome)} evaluated / {outcome.prompt_tokens} prompt tokens"
                              + (f" ERROR {outcome.error}" if outcome.error else ""),
                              file=sys.stderr, flush=True)
    finally:
        if details:
            details.close()
        for workspace in workspaces.values():
            workspace.close()
    return outcomes, started


def _evaluated(outcome) -> int:
    return int(sum(c.get("evaluated", 0) for c in outcome.costs_by_phase.values()))


def first_answer_median(outcomes) -> float:
    """Median seconds until a first answer showed: the draft's time where there was one, else
    the whole answer's."""
    times = [o.first_answer_seconds if o.first_answer_seconds is not None else o.seconds for o in outcomes]
    return round(statistics.median(times), 3) if times else 0.0


def summarize_loop(outcomes: dict[tuple[str, str], list], modes: list[str], variants: list[Variant]) -> dict[str, Any]:
    """The report's figures from outcomes by (variant name, mode)."""
    from ..eval.compare import pair
    from ..eval.costs import phase_costs, ratio
    from ..eval.runner import summarize

    by_variant: dict[str, Any] = {}
    for variant in variants:
        costs, quality = {}, {}
        for mode in modes:
            mode_outcomes = outcomes[(variant.name, mode)]
            costs[mode] = phase_costs(mode_outcomes)
            report = summarize(mode_outcomes, mode=mode)
            quality[mode] = {"cover_em": round(report.cover_em, 4), "strict_cover_em": round(report.strict_cover_em, 4),
                             "f1": round(report.f1, 4), "several_options_named": report.several_options_named}
            costs[mode]["first_answer_seconds_median"] = first_answer_median(mode_outcomes)
            nodes = [o.first_node_seconds for o in mode_outcomes if o.first_node_seconds is not None]
            if nodes:  # SearChain: when the tree's first step showed
                costs[mode]["first_node_seconds_median"] = round(statistics.median(nodes), 3)
        firsts = {m: costs[m]["first_answer_seconds_median"] for m in modes}
        by_variant[variant.name] = {
            "settings": variant.overrides, "cold": variant.cold,
            "modes": {m: {**quality[m], **costs[m]} for m in modes},
            "ratio_to_first_mode": {f"{m}/{modes[0]}": ratio(costs, m, modes[0]) for m in modes[1:]},
            # The same ratio for the time until a first answer shows (a SearChain draft).
            "first_answer_ratio_to_first_mode": {
                f"{m}/{modes[0]}": round(firsts[m] / firsts[modes[0]], 3) if firsts[modes[0]] else None
                for m in modes[1:]},
        }
    against_first = {}
    first = variants[0].name
    for mode in modes:
        base = {o.id: o for o in outcomes[(first, mode)]}
        rows = {}
        for variant in variants[1:]:
            other = {o.id: o for o in outcomes[(variant.name, mode)]}
            counts = asdict(pair(first, variant.name, {i: bool(o.cover_em) for i, o in base.items()},
                                 {i: bool(o.cover_em) for i, o in other.items()}))
            counts["identical_predictions"] = sum(1 for i, o in other.items()
                                                  if i in base and base[i].prediction == o.prediction)
            rows[variant.name] = counts
        if rows:
            against_first[mode] = rows
    return {"variants": by_variant, "paired_against_first_variant": against_first}
