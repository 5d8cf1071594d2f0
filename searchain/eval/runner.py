"""Run a benchmark file through the answering engine and score it.

``run_eval`` takes anything with ``answer(question, mode=..., cancel=...) -> AnswerResult`` (a
``Workspace`` or a ``SearChainEngine``), answers each question, and reports: cover-EM and token F1
(max over aliases), the knowledge-source shares of the final reasoning paths (paper Table 2),
average rounds, prompt and completion tokens per question, and how often IR pushed a right
answer to a wrong one: the LLM's own first-round answer (the first branch's [Final Content])
was right but the final answer is wrong. The opposite move (wrong to right) is reported too.
"""

from __future__ import annotations

import inspect
import re
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import SearchainError
from ..events import CancelToken, EventCallback, Progress, check, emit
from ..metrics import answer_options, cover_em, options_named, token_f1
from ..reasoning.result import SOURCES, AnswerResult, honest_source
from .datasets import EvalDataset, EvalQuestion, load_dataset
from .stats import bootstrap_ci

_MARK = re.compile(r"\s*\[\d+\]")


@dataclass
class QuestionOutcome:
    """How one question went. ``first_round_right`` is None when the mode has no first
    Chain-of-Query (direct, rag) or the question failed."""

    id: str
    question: str
    golds: list[str]
    prediction: str
    cover_em: float
    f1: float
    rounds: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    sources: dict[str, int] = field(default_factory=dict)
    first_round_answer: str | None = None
    first_round_right: bool | None = None
    stop_reason: str = ""
    seconds: float = 0.0
    error: str | None = None
    # When a first answer showed (SearChain's draft), seconds from the start; None: at the end.
    first_answer_seconds: float | None = None
    # When the tree's first step showed (SearChain), seconds from the start; None without one.
    first_node_seconds: float | None = None
    # {phase: [prompt, completion]}: chain, final, reader (an LLM reader's calls), rewrite.
    tokens_by_phase: dict[str, list[int]] = field(default_factory=dict)
    # {phase: {prompt, evaluated, completion, seconds, prompt_seconds, calls}} (`bench loop`).
    costs_by_phase: dict[str, dict[str, float]] = field(default_factory=dict)
    mode: str = ""
    # What happened, compactly, for reading a run after the fact: each round's chain as written
    # (cut), the final path's nodes (query, LLM answer, reader answer, decision, passage title)
    # and the final content. Kept in the details log; not used by the figures.
    trace: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class QuestionEvaluated:
    """Event: question ``index`` (0-based) of ``total`` was answered and scored."""

    index: int
    total: int
    outcome: QuestionOutcome


@dataclass
class EvalReport:
    dataset: str
    dataset_kind: str
    mode: str
    corpus: str | None
    questions: int
    cover_em: float
    f1: float
    source_shares: dict[str, float]
    nodes_on_paths: int
    avg_rounds: float
    prompt_tokens_per_question: float
    completion_tokens_per_question: float
    first_round_right: int  # questions whose first-round answer was right
    ir_right_to_wrong: float  # share of all questions
    ir_right_to_wrong_of_first_right: float  # share of first_round_right (the paper's 6.3 %)
    ir_wrong_to_right: float  # share of all questions
    errors: int
    seconds_median: float
    seconds_total: float
    # 95% bootstrap interval over questions: how far cover-EM could move with other questions.
    cover_em_ci95: list[float] = field(default_factory=lambda: [0.0, 0.0])
    # Mean [prompt, completion] tokens per question for each phase; they add up to the totals.
    tokens_per_question_by_phase: dict[str, list[float]] = field(default_factory=dict)
    # Questions whose gold is yes/no: how many, how many answered right, and how many predictions
    # were a plain yes or no at all (a strategy may answer a comparison with a name instead).
    yes_no: dict[str, int] = field(default_factory=dict)
    # Cover-EM with predictions that name more than one option of a two-option question
    # (yes and no; the two entities of "Which is older, A or B?") scored wrong, and how many
    # questions had two options and how many predictions named several (``metrics.answer_options``).
    strict_cover_em: float = 0.0
    two_option_questions: int = 0
    several_options_named: int = 0
    outcomes: list[QuestionOutcome] = field(default_factory=list)

    def to_dict(self, *, with_questions: bool = False) -> dict[str, Any]:
        data = asdict(self)
        if not with_questions:
            data.pop("outcomes")
        return data


def prediction_text(result: AnswerResult) -> str:
    """The short answer; falls back to the final content without its [n] marks."""
    return (result.answer or _MARK.sub("", result.final_content or "")).strip()


def first_round_answer(result: AnswerResult) -> str | None:
    """The LLM's own answer before any IR feedback: the first branch's [Final Content], or, if
    that branch wrote none, its last answered node; None for modes without a Chain-of-Query, and
    for GenGround and GEEK, whose first branch is one hop or one strategy, not an answer before IR."""
    if not result.branches or result.mode in ("genground", "geek"):
        return None
    first = result.branches[0]
    if first.final_content:
        return _MARK.sub("", first.final_content).strip()
    answered = [n.llm_answer for n in first.nodes if n.llm_answer]
    return answered[-1] if answered else None


def score_question(question: EvalQuestion, result: AnswerResult, seconds: float = 0.0) -> QuestionOutcome:
    prediction = prediction_text(result)
    first = first_round_answer(result)
    sources = {s: 0 for s in SOURCES}
    for node in result.path:
        source = honest_source(node)  # "from the LLM" split into verified and unverifiable
        sources[source] = sources.get(source, 0) + 1
    return QuestionOutcome(
        id=question.id, question=question.question, golds=list(question.answers),
        prediction=prediction, cover_em=cover_em(prediction, question.answers),
        f1=token_f1(prediction, question.answers), rounds=result.rounds,
        prompt_tokens=result.prompt_tokens, completion_tokens=result.completion_tokens,
        sources=sources, first_round_answer=first,
        first_round_right=None if first is None else bool(cover_em(first, question.answers)),
        stop_reason=result.stop_reason, seconds=seconds,
        first_answer_seconds=getattr(result, "first_answer_seconds", None),
        first_node_seconds=getattr(result, "first_node_seconds", None),
        tokens_by_phase={phase: list(counts) for phase, counts in result.tokens_by_phase.items()},
        costs_by_phase={phase: dict(cost) for phase, cost in getattr(result, "costs_by_phase", {}).items()},
        trace=compact_trace(result),
    )


TRACE_CHARS = 600


def compact_trace(result: AnswerResult) -> dict[str, Any]:
    """The run in brief: chains as written, the path's nodes and the final content."""
    def node(n) -> dict[str, Any]:
        return {"query": n.query, "llm": n.llm_answer, "reader": n.reader_answer, "answer": n.answer,
                "decision": n.decision, "source": honest_source(n),
                "passage": n.passage.title if n.passage is not None else None,
                "pid": n.passage.pid if n.passage is not None else None}

    return {
        "chains": [b.raw_text[:TRACE_CHARS] for b in result.branches],
        "path": [node(n) for n in result.path],
        "final": (result.final_content or "")[:TRACE_CHARS],
        "references": [r.passage.title for r in result.references],
    }


def summarize(outcomes: list[QuestionOutcome], *, dataset: str = "", dataset_kind: str = "",
              mode: str = "", corpus: str | None = None) -> EvalReport:
    """Aggregate per-question outcomes (failed questions count as wrong, with zero tokens)."""
    n = len(outcomes)

    def mean(values) -> float:
        values = list(values)
        return sum(values) / len(values) if values else 0.0

    totals = {s: 0 for s in SOURCES}
    for o in outcomes:
        for source, count in o.sources.items():
            totals[source] = totals.get(source, 0) + count
    nodes = sum(totals.values())
    first_right = [o for o in outcomes if o.first_round_right]
    right_to_wrong = [o for o in first_right if not o.cover_em]
    wrong_to_right = [o for o in outcomes if o.first_round_right is False and o.cover_em]
    return EvalReport(
        dataset=dataset, dataset_kind=dataset_kind, mode=mode, corpus=corpus, questions=n,
        cover_em=mean(o.cover_em for o in outcomes), f1=mean(o.f1 for o in outcomes),
        source_shares={s: (c / nodes if nodes else 0.0) for s, c in totals.items()},
        nodes_on_paths=nodes, avg_rounds=mean(o.rounds for o in outcomes),
        prompt_tokens_per_question=mean(o.prompt_tokens for o in outcomes),
        completion_tokens_per_question=mean(o.completion_tokens for o in outcomes),
        first_round_right=len(first_right),
        ir_right_to_wrong=len(right_to_wrong) / n if n else 0.0,
        ir_right_to_wrong_of_first_right=len(right_to_wrong) / len(first_right) if first_right else 0.0,
        ir_wrong_to_right=len(wrong_to_right) / n if n else 0.0,
        errors=sum(1 for o in outcomes if o.error),
        seconds_median=statistics.median([o.seconds for o in outcomes]) if outcomes else 0.0,
        seconds_total=sum(o.seconds for o in outcomes),
        cover_em_ci95=list(bootstrap_ci([o.cover_em for o in outcomes])), outcomes=outcomes,
        tokens_per_question_by_phase=_phase_means(outcomes), yes_no=_yes_no_counts(outcomes),
        **_strict_counts(outcomes),
    )


def _strict_counts(outcomes: list[QuestionOutcome]) -> dict[str, Any]:
    """``strict_cover_em`` and its counts, from each outcome's question, golds and prediction (so
    details logs written before the strict column existed are scored the same way)."""
    strict, two_options, several = [], 0, 0
    for o in outcomes:
        options = answer_options(o.question, o.golds)
        named_several = options is not None and options_named(o.prediction, options) > 1
        two_options += options is not None
        several += named_several
        strict.append(0.0 if named_several else o.cover_em)
    return {"strict_cover_em": sum(strict) / len(strict) if strict else 0.0,
            "two_option_questions": two_options, "several_options_named": several}


_YES_NO_START = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


def _yes_no_counts(outcomes: list[QuestionOutcome]) -> dict[str, int]:
    asked = [o for o in outcomes if o.golds and o.golds[0].strip().lower() in ("yes", "no")]
    if not asked:
        return {}
    return {"questions": len(asked), "right": sum(1 for o in asked if o.cover_em),
            "answered_yes_or_no": sum(1 for o in asked if _YES_NO_START.match(o.prediction or ""))}


def _phase_means(outcomes: list[QuestionOutcome]) -> dict[str, list[float]]:
    totals: dict[str, list[int]] = {}
    for o in outcomes:
        for phase, (prompt, completion) in o.tokens_by_phase.items():
            counts = totals.setdefault(phase, [0, 0])
            counts[0] += prompt
            counts[1] += completion
    n = len(outcomes) or 1
    return {phase: [prompt / n, completion / n] for phase, (prompt, completion) in sorted(totals.items())}


def run_eval(
    workspace_or_parts: Any,
    dataset_path: str | Path | EvalDataset,
    *,
    mode: str,
    limit: int | None = None,
    corpus: str | None = None,
    on_event: EventCallback | None = None,
    cancel: CancelToken | None = None,
) -> EvalReport:
    """Answer every question of the dataset with ``workspace_or_parts.answer`` and score it.

    A question whose answering raises a ``SearchainError`` is recorded with its error and scored
    wrong, and the run goes on; ``Cancelled`` stops the run. ``corpus`` is passed to ``answer``
    when it accepts one (a Workspace does).
    """
    dataset = dataset_path if isinstance(dataset_path, EvalDataset) else load_dataset(dataset_path, limit=limit)
    questions = list(dataset.questions[:limit] if limit else dataset.questions)
    answer = workspace_or_parts.answer
    extra = answer_kwargs(answer, corpus)
    outcomes: list[QuestionOutcome] = []
    for index, question in enumerate(questions):
        check(cancel)
        emit(on_event, Progress("eval", index, len(questions), question.id))
        outcome = answer_question(answer, question, mode=mode, cancel=cancel, **extra)
        outcomes.append(outcome)
        emit(on_event, QuestionEvaluated(index, len(questions), outcome))
    emit(on_event, Progress("eval", len(questions), len(questions), "done"))
    return summarize(outcomes, dataset=str(dataset.path), dataset_kind=dataset.kind, mode=mode, corpus=corpus)


def answer_kwargs(answer, corpus: str | None) -> dict[str, Any]:
    """``{"corpus": corpus}`` when ``answer`` accepts a corpus (a Workspace does), else ``{}``."""
    accepted = inspect.signature(answer).parameters
    return {"corpus": corpus} if corpus is not None and "corpus" in accepted else {}


def answer_question(answer, question: EvalQuestion, *, mode: str, cancel: CancelToken | None = None,
                    **extra) -> QuestionOutcome:
    """Answer and score one question; a ``SearchainError`` is recorded as the outcome's error
    (scored wrong) rather than raised, and ``Cancelled`` propagates."""
    started = time.perf_counter()
    try:
        result = answer(question.question, mode=mode, cancel=cancel, **extra)
        outcome = score_question(question, result, time.perf_counter() - started)
    except SearchainError as exc:
        outcome = QuestionOutcome(
            id=question.id, question=question.question, golds=list(question.answers),
            prediction="", cover_em=0.0, f1=0.0, seconds=time.perf_counter() - started,
            error=str(exc),
        )
    outcome.mode = mode
    return outcome
