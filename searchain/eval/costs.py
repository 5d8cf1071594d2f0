"""What each answering mode costs per question, phase by phase (`searchain bench loop`).

From scored outcomes (``runner.QuestionOutcome.costs_by_phase``): per mode, the median and mean
seconds a question, and per phase (chain, reader, final, rewrite, ...) the mean prompt tokens,
prompt tokens evaluated (not reused from the KV cache), completion tokens, seconds and prompt
seconds a question, the calls, and the decode speed (completion tokens per second of generation,
prompt evaluation excluded). ``ratio`` divides one mode's median seconds by another's, the
figure issue #37 sets a goal on (SearChain against plain RAG, same run).
"""

from __future__ import annotations

import statistics
from typing import Any, Iterable

from .runner import QuestionOutcome

_SUMMED = ("prompt", "evaluated", "completion", "seconds", "prompt_seconds", "calls")


def phase_costs(outcomes: Iterable[QuestionOutcome]) -> dict[str, Any]:
    """Per-question figures of one mode's outcomes (failed questions included, as answered)."""
    outcomes = list(outcomes)
    n = len(outcomes)
    totals: dict[str, dict[str, float]] = {}
    for outcome in outcomes:
        for phase, cost in outcome.costs_by_phase.items():
            total = totals.setdefault(phase, dict.fromkeys(_SUMMED, 0.0))
            for key in _SUMMED:
                total[key] += float(cost.get(key, 0) or 0)
    phases = {}
    for phase, total in sorted(totals.items()):
        decode = total["seconds"] - total["prompt_seconds"]
        phases[phase] = {
            **{f"{key}_per_question": round(total[key] / n, 3) for key in _SUMMED},
            "decode_tokens_per_s": round(total["completion"] / decode, 3) if decode > 0 else 0.0,
            "prompt_tokens_per_s": round(total["evaluated"] / total["prompt_seconds"], 3)
            if total["prompt_seconds"] > 0 else 0.0,
        }
    seconds = [o.seconds for o in outcomes]
    return {
        "questions": n,
        "errors": sum(1 for o in outcomes if o.error),
        "seconds_median": round(statistics.median(seconds), 3) if seconds else 0.0,
        "seconds_mean": round(statistics.fmean(seconds), 3) if seconds else 0.0,
        "prompt_tokens_per_question": _mean(o.prompt_tokens for o in outcomes),
        "evaluated_tokens_per_question": _mean(
            sum(c.get("evaluated", 0) for c in o.costs_by_phase.values()) for o in outcomes),
        "completion_tokens_per_question": _mean(o.completion_tokens for o in outcomes),
        "phases": phases,
    }


def ratio(costs: dict[str, dict[str, Any]], numerator: str, denominator: str) -> float | None:
    """``numerator``'s median seconds a question over ``denominator``'s; None if either is absent."""
    top, bottom = costs.get(numerator), costs.get(denominator)
    if not top or not bottom or not bottom["seconds_median"]:
        return None
    return round(top["seconds_median"] / bottom["seconds_median"], 3)


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return round(sum(values) / len(values), 3) if values else 0.0
