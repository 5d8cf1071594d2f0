"""``searchain eval``: answer a benchmark file and report cover-EM, F1 and SearChain's statistics.

    searchain eval --dataset ../shared/eval/musique/dev_200.jsonl --model M.gguf --mode searchain --limit 20 --json

Modes with IR (searchain, rag) search the pooled corpus built from the same file (created and
indexed on first use, reused afterwards) unless ``--corpus`` names another. Progress goes to
stderr, one line per question; stdout gets the report (``--json``: one JSON object).
"""

from __future__ import annotations

import json
import sys
from typing import Any

from ..reasoning.modes import MODES


def register(sub) -> None:
    p = sub.add_parser("eval", help="evaluate on a MuSiQue or HotpotQA file (cover-EM, F1, IR statistics)")
    p.add_argument("--dataset", required=True, metavar="PATH",
                   help="JSON-lines benchmark file, e.g. ../shared/eval/musique/dev_200.jsonl")
    p.add_argument("--model", metavar="PATH", help="GGUF model file (default: the configured one)")
    p.add_argument("--mode", choices=MODES, default=None, help="answering mode (default: the configured one)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N questions")
    p.add_argument("--corpus", metavar="NAME",
                   help="search this corpus instead of the pooled corpus built from the dataset")
    p.add_argument("--reader", choices=("auto", "dpr", "llm"), default=None, help="reader for IR verification")
    p.add_argument("--details", metavar="PATH", help="also write one JSON line per question to PATH")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    from ..config import atomic_write_text
    from ..errors import ConfigError
    from ..eval.corpus import ensure_eval_corpus
    from ..eval.datasets import load_dataset
    from ..eval.runner import run_eval
    from ..reasoning.modes import needs_ir
    from ..workspace import Workspace

    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {args.limit}.")
    settings = ctx.settings  # changed for this run only; never saved
    if args.model:
        settings.llm.model_path = args.model
    if args.reader:
        settings.reasoning.reader = args.reader
    mode = args.mode or settings.reasoning.mode
    progress = None if args.quiet else _progress
    dataset = load_dataset(args.dataset, limit=args.limit)
    corpus = None
    if needs_ir(mode):
        corpus = args.corpus or ensure_eval_corpus(ctx.paths, settings, dataset, on_event=progress)
    workspace = Workspace(ctx.paths, settings)
    try:
        engine = workspace.engine(mode=mode, corpus=corpus)
        report = run_eval(engine, dataset, mode=mode, corpus=corpus, on_event=progress)
    finally:
        workspace.close()
    if args.details:
        lines = [json.dumps(o, ensure_ascii=False) for o in report.to_dict(with_questions=True)["outcomes"]]
        atomic_write_text(_path(args.details), "\n".join(lines) + "\n")
    if args.json:
        print(json.dumps(report.to_dict(), ensure_ascii=False, indent=2))
    else:
        print(render_text(report.to_dict()))
    return 0


def _path(text: str):
    from pathlib import Path

    return Path(text).expanduser()


def _progress(event: Any) -> None:
    from ..eval.runner import QuestionEvaluated
    from ..events import Progress

    if isinstance(event, QuestionEvaluated):
        o = event.outcome
        status = f"error: {o.error.splitlines()[0]}" if o.error else (
            f"EM {o.cover_em:.0f} F1 {o.f1:.2f} rounds {o.rounds} {o.seconds:.1f}s")
        print(f"[{event.index + 1}/{event.total}] {o.id}: {status}", file=sys.stderr)
    elif isinstance(event, Progress) and event.stage != "eval" and event.total:
        print(f"{event.stage}: {event.done}/{event.total} {event.message}", file=sys.stderr)


def render_text(report: dict) -> str:
    shares = ", ".join(f"{k} {v:.1%}" for k, v in report["source_shares"].items())
    rows = [
        ("dataset", f"{report['dataset']} ({report['dataset_kind']})"),
        ("mode / corpus", f"{report['mode']} / {report['corpus'] or '-'}"),
        ("questions", f"{report['questions']} ({report['errors']} failed)"),
        ("cover-EM", f"{report['cover_em']:.2%} (95% interval over questions "
                     f"{report['cover_em_ci95'][0]:.1%} to {report['cover_em_ci95'][1]:.1%})"),
        ("token F1", f"{report['f1']:.2%}"),
        ("knowledge sources", f"{shares} of {report['nodes_on_paths']} nodes"),
        ("rounds / question", f"{report['avg_rounds']:.2f}"),
        ("tokens / question", f"{report['prompt_tokens_per_question']:.0f} prompt, "
                              f"{report['completion_tokens_per_question']:.0f} completion"),
        ("  by phase", ", ".join(f"{phase} {p:.0f}+{c:.0f}" for phase, (p, c)
                                 in report.get("tokens_per_question_by_phase", {}).items()) or "-"),
        ("IR right -> wrong", f"{report['ir_right_to_wrong']:.1%} of all, "
                              f"{report['ir_right_to_wrong_of_first_right']:.1%} of {report['first_round_right']} "
                              "first-round right"),
        ("IR wrong -> right", f"{report['ir_wrong_to_right']:.1%}"),
        ("seconds / question", f"{report['seconds_median']:.2f} median, {report['seconds_total']:.0f} total"),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)
