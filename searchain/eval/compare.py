"""Several answering modes on the same questions, interleaved, with a log that survives a kill.

A comparison of strategies with a local model takes hours on a CPU. Running the modes one after
another would leave, after an interruption, one mode measured on 100 questions and the other on
none; ``run_comparison`` instead answers question 1 in every mode, then question 2, and so on, so
whatever is done is a fair side-by-side on the same questions. Each outcome is appended to the
details log (one JSON line, with its ``mode``) as soon as it is scored; ``resume=True`` reads the
log back and answers only what is missing, so a killed run continues where it stopped.

The report holds one ``EvalReport`` per mode plus a paired count for every mode against the
first: on how many questions both were right, only one was, and the exact McNemar p-value of
that split (two modes that differ on few questions are not shown apart by a gap in averages);
and, for modes with a reasoning path, where their wrong answers went wrong (``diagnose``).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

from ..errors import ConfigError
from ..events import CancelToken, EventCallback, Progress, check, emit
from .datasets import EvalDataset, load_dataset
from .diagnose import diagnose
from .runner import EvalReport, QuestionEvaluated, QuestionOutcome, answer_kwargs, answer_question, summarize
from .stats import mcnemar_exact


@dataclass
class PairedCount:
    """Mode ``a`` (the first mode) against mode ``b`` on the questions both answered."""

    a: str
    b: str
    questions: int
    both_right: int
    only_a_right: int
    only_b_right: int
    neither_right: int
    p_value: float  # exact two-sided McNemar test on the questions only one got right


@dataclass
class ComparisonReport:
    dataset: str
    dataset_kind: str
    corpus: str | None
    modes: list[str]
    reports: dict[str, EvalReport]
    paired: list[PairedCount] = field(default_factory=list)
    resumed: int = 0  # outcomes read back from the details log instead of answered again
    # For modes with a reasoning path: where their wrong answers went wrong (``diagnose``).
    diagnosis: dict[str, dict[str, int]] = field(default_factory=dict)

    def to_dict(self, *, with_questions: bool = False) -> dict[str, Any]:
        return {
            "dataset": self.dataset, "dataset_kind": self.dataset_kind, "corpus": self.corpus,
            "modes": list(self.modes), "resumed": self.resumed,
            "reports": {m: r.to_dict(with_questions=with_questions) for m, r in self.reports.items()},
            "paired": [asdict(p) for p in self.paired], "diagnosis": self.diagnosis,
        }


def paired_counts(first: str, reports: dict[str, EvalReport]) -> list[PairedCount]:
    """Every other mode against ``first``, question by question (matched by id)."""
    base = {o.id: bool(o.cover_em) for o in reports[first].outcomes}
    return [pair(first, mode, base, {o.id: bool(o.cover_em) for o in report.outcomes})
            for mode, report in reports.items() if mode != first]


def pair(a: str, b: str, right_a: dict, right_b: dict) -> PairedCount:
    """``a`` against ``b`` on the questions (keys) both have: who was right (True) where."""
    ids = [i for i in right_a if i in right_b]
    both = sum(1 for i in ids if right_a[i] and right_b[i])
    only_a = sum(1 for i in ids if right_a[i] and not right_b[i])
    only_b = sum(1 for i in ids if right_b[i] and not right_a[i])
    return PairedCount(a, b, len(ids), both, only_a, only_b, len(ids) - both - only_a - only_b,
                       mcnemar_exact(only_a, only_b))


def outcome_lines(path: Path, what: str = "an eval outcome"):
    """``(line number, raw dict, QuestionOutcome)`` for each line of a details log. A last line
    cut short by a kill is dropped (and cut from the file, so appends start on a clean line); any
    other unreadable line is an error that names it."""
    raw = path.read_bytes()
    lines = raw.split(b"\n")
    if not raw.endswith(b"\n"):  # the kill came mid-line: keep everything before it
        with open(path, "r+b") as handle:
            handle.truncate(len(raw) - len(lines[-1]))
    known = {f.name for f in fields(QuestionOutcome)}
    for number, line in enumerate(lines[:-1], start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            outcome = QuestionOutcome(**{k: v for k, v in data.items() if k in known})
        except (ValueError, TypeError) as exc:
            raise ConfigError(f"Line {number} of the details log {path} is not {what} ({exc}).",
                              hint="Pass a new --details file, or remove that line.") from exc
        yield number, data, outcome


def read_details(path: Path, dataset: EvalDataset, modes: list[str]) -> dict[tuple[str, str], QuestionOutcome]:
    """Outcomes already in the details log, keyed by (mode, question id) (see ``outcome_lines``);
    a question the dataset does not hold is an error that names the line: the log belongs to
    another run."""
    if not path.exists():
        return {}
    ids = {q.id for q in dataset.questions}
    done: dict[tuple[str, str], QuestionOutcome] = {}
    for number, _, outcome in outcome_lines(path):
        if outcome.id not in ids:
            raise ConfigError(f"Line {number} of the details log {path} is question {outcome.id!r}, "
                              f"which {dataset.path} does not hold: the log is from another dataset.",
                              hint="Pass the dataset it was written for, or a new --details file.")
        if outcome.mode in modes:
            done[(outcome.mode, outcome.id)] = outcome
    return done


def run_comparison(
    answer_for: Callable[[str], Callable[..., Any]],
    dataset_path: str | Path | EvalDataset,
    *,
    modes: list[str],
    limit: int | None = None,
    corpus: str | None = None,
    details: str | Path | None = None,
    resume: bool = False,
    report_only: bool = False,
    setup: dict[str, Any] | None = None,
    on_event: EventCallback | None = None,
    cancel: CancelToken | None = None,
) -> ComparisonReport:
    """Answer each question in every mode (question by question), log and score each outcome.

    ``answer_for(mode)`` returns the ``answer`` callable for a mode (an engine's, built once).
    Without ``resume`` an existing details log is replaced; with it, its outcomes are kept and
    only the missing (mode, question) pairs are answered. ``setup`` (model, settings, dataset) is
    kept beside the log (``<log>.setup.json``), and a resume under another setup is refused: one
    comparison must not mix two models or two settings. ``report_only`` answers nothing: the
    report covers the questions the log has in every mode (a stopped run, read while it waits).
    """
    if not modes:
        raise ConfigError("No answering mode to evaluate.", hint="Pass --mode, e.g. --mode rag,searchain.")
    if len(set(modes)) != len(modes):
        raise ConfigError(f"A mode is named twice in {','.join(modes)}.")
    dataset = dataset_path if isinstance(dataset_path, EvalDataset) else load_dataset(dataset_path, limit=limit)
    questions = list(dataset.questions[:limit] if limit else dataset.questions)
    log = Path(details).expanduser() if details else None
    if report_only and not log:
        raise ConfigError("A report from the log needs the log: pass --details.")
    done = read_details(log, dataset, modes) if (log and (resume or report_only)) else {}
    if report_only:
        questions = [q for q in questions if all((m, q.id) in done for m in modes)]
        if not questions:
            raise ConfigError(f"The details log {log} has no question answered in every mode of "
                              f"{','.join(modes)}.")
    if log:
        log.parent.mkdir(parents=True, exist_ok=True)
        if resume and setup is not None:
            check_setup(log, setup)
        if not (resume or report_only):
            log.write_text("", encoding="utf-8")
        if setup is not None and not report_only:
            setup_path(log).write_text(json.dumps(setup, indent=1, sort_keys=True), encoding="utf-8")
    answers = {}
    outcomes: dict[str, list[QuestionOutcome]] = {m: [] for m in modes}
    total = len(questions) * len(modes)
    step = 0
    for index, question in enumerate(questions):
        for mode in modes:
            check(cancel)
            outcome = done.get((mode, question.id))
            if outcome is None:
                emit(on_event, Progress("eval", step, total, f"{mode} {question.id}"))
                if mode not in answers:
                    answer = answer_for(mode)
                    answers[mode] = (answer, answer_kwargs(answer, corpus))
                answer, extra = answers[mode]
                outcome = answer_question(answer, question, mode=mode, cancel=cancel, **extra)
                if log:
                    _append(log, outcome)
            outcomes[mode].append(outcome)
            step += 1
            emit(on_event, QuestionEvaluated(index, len(questions), outcome))
    emit(on_event, Progress("eval", total, total, "done"))
    reports = {m: summarize(outcomes[m], dataset=str(dataset.path), dataset_kind=dataset.kind, mode=m,
                            corpus=corpus) for m in modes}
    resumed = sum(1 for m in modes for q in questions if (m, q.id) in done)
    diagnosis = {m: diagnose(outcomes[m], dataset) for m in modes
                 if any(o.trace.get("path") for o in outcomes[m])}
    return ComparisonReport(str(dataset.path), dataset.kind, corpus, list(modes), reports,
                            paired_counts(modes[0], reports), resumed, diagnosis)


def setup_path(log: Path) -> Path:
    return log.with_name(log.name + ".setup.json")


def check_setup(log: Path, setup: dict[str, Any]) -> None:
    """Refuse to resume ``log`` under a setup other than the one it was written with."""
    path = setup_path(log)
    if not path.exists():
        return  # a log from before setups were kept: nothing to compare against
    if not log.exists() or log.stat().st_size == 0:
        return  # that run answered nothing (say its model was missing): nothing would be mixed
    try:
        written = json.loads(path.read_text(encoding="utf-8"))
    except ValueError:
        return
    current = json.loads(json.dumps(setup))  # the same types the file has (tuples -> lists)
    changed = sorted(k for k in set(written) | set(current) if written.get(k) != current.get(k))
    if changed:
        raise ConfigError(
            f"The details log {log} was written with another {', '.join(changed)} than this run's; "
            "resuming would mix the two in one comparison.",
            hint="Resume with the same model and settings, or pass a new --details file.")


def _append(log: Path, outcome: QuestionOutcome) -> None:
    """One line per outcome, flushed and synced, so a kill loses at most the question in flight."""
    with open(log, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(asdict(outcome), ensure_ascii=False) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
