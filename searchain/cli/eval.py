"""``searchain eval``: answer a benchmark file and report cover-EM, F1 and SearChain's statistics.

    searchain eval --dataset ../shared/eval/musique/dev_200.jsonl --model M.gguf --mode searchain --limit 20 --json
    searchain eval --dataset ../shared/eval/hotpotqa/dev_500.jsonl --mode rag,searchain --limit 100 \
        --details run.jsonl --resume

Several modes (comma-separated) are run question by question, side by side, and compared on the
same questions; ``--details`` logs each outcome as it is scored and ``--resume`` continues a run
that was stopped, from that log.

Modes with IR (searchain, rag) search the pooled corpus built from the same file (created and
indexed on first use, reused afterwards) unless ``--corpus`` names another. Progress goes to
stderr, one line per question; stdout gets the report (``--json``: one JSON object).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..reasoning.modes import MODES
from ..units import duration


def register(sub) -> None:
    p = sub.add_parser("eval", help="evaluate on a MuSiQue or HotpotQA file (cover-EM, F1, IR statistics)")
    p.add_argument("--dataset", required=True, metavar="PATH",
                   help="JSON-lines benchmark file, e.g. ../shared/eval/musique/dev_200.jsonl")
    p.add_argument("--model", metavar="MODEL", help="a GGUF file, or a name from `models list [--all]` (default: the configured one)")
    p.add_argument("--mode", type=_modes, default=None, metavar="MODE[,MODE...]",
                   help=f"answering mode, or several to compare side by side ({', '.join(MODES)}; "
                        "default: the configured one)")
    p.add_argument("--limit", type=int, default=None, metavar="N", help="only the first N questions")
    p.add_argument("--yes-no", action="store_true",
                   help="only the questions whose gold answer is yes or no (HotpotQA's comparison "
                        "questions); --limit then counts those")
    p.add_argument("--corpus", metavar="NAME",
                   help="search this corpus instead of the pooled corpus built from the dataset")
    p.add_argument("--reader", choices=("auto", "dpr", "llm"), default=None, help="reader for IR verification")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", dest="overrides",
                   help="a setting for this run only, e.g. --set reasoning.question_passages=2 "
                        "(checked like `searchain config set`; never saved); may be repeated")
    p.add_argument("--details", metavar="PATH",
                   help="also write one JSON line per question and mode to PATH, as each is scored")
    p.add_argument("--resume", action="store_true",
                   help="keep the outcomes already in --details and answer only the missing ones")
    p.add_argument("--report-only", action="store_true",
                   help="answer nothing: report on the questions --details holds in every mode "
                        "(a stopped or running run)")
    p.add_argument("--replay-final", metavar="LOG",
                   help="answer nothing but the final step: re-write each searchain answer in the "
                        "details log LOG over its logged path, under this run's settings, and "
                        "compare with the logged answers (prints JSON; --details gets the rows)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    p.add_argument("--quiet", action="store_true", help="no progress on stderr")
    p.set_defaults(func=handle)


def handle(ctx, args) -> int:
    from ..errors import ConfigError
    from ..eval.compare import run_comparison
    from ..eval.corpus import ensure_eval_corpus
    from ..eval.datasets import load_dataset, only_yes_no
    from ..reasoning.modes import needs_ir
    from ..workspace import Workspace

    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit must be at least 1, got {args.limit}.")
    if (args.resume or args.report_only) and not args.details:
        raise ConfigError(f"{'--resume' if args.resume else '--report-only'} needs --details: the log it reads.")
    settings = with_overrides(ctx.settings, args.overrides)  # changed for this run only; never saved
    if args.model:
        from ..llm.models.locate import model_option

        settings.llm.model_path = model_option(args.model, ctx.paths, settings.llm)
    if args.reader:
        settings.reasoning.reader = args.reader
    modes = args.mode or [settings.reasoning.mode]
    progress = None if args.quiet else ProgressLines()
    dataset = load_dataset(args.dataset, limit=None if args.yes_no else args.limit)
    if args.yes_no:
        dataset = only_yes_no(dataset, args.limit)
    corpus = None
    if args.replay_final:
        return _replay(ctx, args, settings, dataset)
    if args.report_only:
        comparison = run_comparison(None, dataset, modes=modes, details=_path(args.details), report_only=True)
        return _print(comparison, modes, args.json)
    if any(needs_ir(mode) for mode in modes):
        corpus = args.corpus or ensure_eval_corpus(ctx.paths, settings, dataset, on_event=progress)
    workspace = Workspace(ctx.paths, settings)  # one model, shared by every mode's engine
    try:
        def answer_for(mode: str):
            return workspace.engine(mode=mode, corpus=corpus if needs_ir(mode) else None).answer

        comparison = run_comparison(answer_for, dataset, modes=modes, corpus=corpus,
                                    details=_path(args.details) if args.details else None,
                                    resume=args.resume, setup=run_setup(settings, dataset),
                                    on_event=progress)
    finally:
        workspace.close()
    return _print(comparison, modes, args.json)


def _replay(ctx, args, settings, dataset) -> int:
    """``--replay-final``: the final step again over each logged path (see ``eval/replay.py``)."""
    from pathlib import Path

    from ..eval.corpus import ensure_eval_corpus
    from ..eval.replay import logged_paths, replay_final, store_lookup
    from ..eval.runner import prediction_text
    from ..workspace import Workspace

    records = logged_paths(Path(args.replay_final).expanduser())
    wanted = {q.id for q in dataset.questions}
    records = [r for r in records if r.get("id") in wanted]
    corpus = args.corpus or ensure_eval_corpus(ctx.paths, settings, dataset)
    workspace = Workspace(ctx.paths, settings)
    store = workspace.corpora.open_store(corpus)
    try:
        engine = workspace.engine(mode="searchain", corpus=corpus)

        def progress(done: int, row: dict) -> None:
            if not args.quiet:
                print(f"[{done}/{len(records)}] {row['id']}: EM {row['logged_cover_em']:.0f} -> {row['cover_em']:.0f}",
                      file=sys.stderr, flush=True)

        report = replay_final(records, lambda q, path: prediction_text(engine.rewrite_final(q, path)),
                              lookup=store_lookup(store), on_progress=progress)
    finally:
        store.close()
        workspace.close()
    rows = report.pop("outcomes")
    if args.details:
        with open(_path(args.details), "w", encoding="utf-8") as out:
            out.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    print(json.dumps({"replayed_from": str(args.replay_final), **report}, ensure_ascii=False, indent=2))
    return 0


def run_setup(settings, dataset) -> dict[str, Any]:
    """What a comparison's figures depend on besides the code: the model file, the settings that
    steer answering and retrieval, the dataset; kept beside the log and checked on --resume."""
    from dataclasses import asdict
    from pathlib import Path

    from .. import __version__

    model = Path(settings.llm.model_path).expanduser() if settings.llm.model_path else None
    llm = {k: v for k, v in asdict(settings.llm).items() if k not in ("n_threads", "isolation", "model_path")}
    return {
        "model": f"{model.name} ({model.stat().st_size} bytes)" if model and model.is_file() else str(model),
        "llm": llm, "reasoning": asdict(settings.reasoning), "retrieval": asdict(settings.retrieval),
        "dataset": f"{dataset.kind} {dataset.fingerprint}", "searchain": __version__,
    }


def _print(comparison, modes: list[str], as_json: bool) -> int:
    if len(modes) == 1:
        report = comparison.reports[modes[0]].to_dict()
        print(json.dumps(report, ensure_ascii=False, indent=2) if as_json else render_text(report))
    else:
        data = comparison.to_dict()
        print(json.dumps(data, ensure_ascii=False, indent=2) if as_json else render_comparison(data))
    return 0


def with_overrides(settings, overrides: list[str]):
    """``settings`` with each ``KEY=VALUE`` applied, each checked as `config set` checks it."""
    from ..errors import ConfigError
    from ..settings_schema import get_value, parse_value, with_value

    for item in overrides:
        key, sep, text = item.partition("=")
        if not sep:
            raise ConfigError(f"--set takes KEY=VALUE, got {item!r}.",
                              hint="For example: --set reasoning.question_passages=2")
        key = key.strip()
        settings = with_value(settings, key, parse_value(text.strip(), get_value(settings, key)))
    return settings


def _modes(text: str) -> list[str]:
    """``--mode rag,searchain`` -> ["rag", "searchain"], each checked against the known modes."""
    modes = [m.strip() for m in text.split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise argparse.ArgumentTypeError(
            f"unknown mode {', '.join(unknown) or repr(text)}: use one or more of {', '.join(MODES)}")
    return modes


def _path(text: str):
    from pathlib import Path

    return Path(text).expanduser()


class ProgressLines:
    """One stderr line per scored question and mode, with the time left: the median seconds a
    question has taken so far (all modes together) times the questions still to answer."""

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.per_question: dict[int, float] = {}

    def __call__(self, event: Any) -> None:
        from ..eval.runner import QuestionEvaluated
        from ..events import Progress

        if isinstance(event, QuestionEvaluated):
            o = event.outcome
            self.per_question[event.index] = self.per_question.get(event.index, 0.0) + o.seconds
            status = f"error: {o.error.splitlines()[0]}" if o.error else (
                f"EM {o.cover_em:.0f} F1 {o.f1:.2f} rounds {o.rounds} {o.seconds:.1f}s")
            print(f"[{event.index + 1}/{event.total}] {o.mode} {o.id}: {status}{self._left(event)}",
                  file=self.stream)
        elif isinstance(event, Progress) and event.stage != "eval" and event.total:
            print(f"{event.stage}: {event.done}/{event.total} {event.message}", file=self.stream)

    def _left(self, event) -> str:
        import statistics

        remaining = event.total - event.index - 1
        timed = [s for s in self.per_question.values() if s > 0]
        if not remaining or not timed:
            return ""
        return f" (about {duration(statistics.median(timed) * remaining)} left)"


def render_text(report: dict) -> str:
    shares = ", ".join(f"{k} {v:.1%}" for k, v in report["source_shares"].items())
    rows = [
        ("dataset", f"{report['dataset']} ({report['dataset_kind']})"),
        ("mode / corpus", f"{report['mode']} / {report['corpus'] or '-'}"),
        ("questions", f"{report['questions']} ({report['errors']} failed)"),
        ("cover-EM", f"{report['cover_em']:.2%} (95% interval over questions "
                     f"{report['cover_em_ci95'][0]:.1%} to {report['cover_em_ci95'][1]:.1%})"),
        ("strict cover-EM", f"{report.get('strict_cover_em', 0.0):.2%} ("
                            f"{report.get('several_options_named', 0)} of "
                            f"{report.get('two_option_questions', 0)} two-option answers named "
                            "more than one option: scored wrong)"),
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
    if report.get("yes_no"):
        yn = report["yes_no"]
        rows.append(("yes/no questions", f"{yn['right']} of {yn['questions']} right, "
                                         f"{yn['answered_yes_or_no']} answered with a plain yes or no"))
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def render_comparison(data: dict) -> str:
    """The modes side by side (one row each), then each mode against the first, paired."""
    header = ("mode", "cover-EM (95% CI)", "strict", "several", "F1", "rounds", "tokens/q", "s/q median", "failed", "path sources")
    rows = [header]
    for mode, r in data["reports"].items():
        shares = " ".join(f"{k} {v:.0%}" for k, v in r["source_shares"].items() if v) or "-"
        rows.append((
            mode, f"{r['cover_em']:.3f} [{r['cover_em_ci95'][0]:.2f}, {r['cover_em_ci95'][1]:.2f}]",
            f"{r.get('strict_cover_em', 0.0):.3f}",
            f"{r.get('several_options_named', 0)}/{r.get('two_option_questions', 0)}",
            f"{r['f1']:.3f}", f"{r['avg_rounds']:.2f}",
            f"{r['prompt_tokens_per_question'] + r['completion_tokens_per_question']:.0f}",
            f"{r['seconds_median']:.1f}", str(r["errors"]), shares,
        ))
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [f"{data['dataset']} ({data['dataset_kind']}), corpus {data['corpus'] or '-'}, "
             f"{next(iter(data['reports'].values()))['questions']} questions"
             + (f" ({data['resumed']} outcomes resumed from the log)" if data.get("resumed") else "")]
    lines += ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.append("strict: cover-EM with answers naming more than one option scored wrong; several: "
                 "such answers / questions with two options (yes and no, or \"A or B?\")")
    for mode, r in data["reports"].items():
        if r.get("yes_no"):
            yn = r["yes_no"]
            lines.append(f"{mode} on yes/no questions: {yn['right']} of {yn['questions']} right, "
                         f"{yn['answered_yes_or_no']} answered with a plain yes or no")
    for mode, kinds in data.get("diagnosis", {}).items():
        lines.append(f"{mode}, where wrong answers went wrong: " + ", ".join(
            f"{kind.replace('_', ' ')} {count}" for kind, count in kinds.items() if kind != "right"))
    for p in data["paired"]:
        lines.append(f"{p['b']} vs {p['a']}: both right {p['both_right']}, only {p['b']} {p['only_b_right']}, "
                     f"only {p['a']} {p['only_a_right']} (McNemar p = {p['p_value']:.3f})")
    return "\n".join(lines)
