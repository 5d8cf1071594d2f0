"""How a GenGround or GEEK answer was reached, as plain text lines (CLI, app panel, exports).

Everything is read back from the ``AnswerResult`` alone (branches, nodes, each branch's
``feedback`` log and ``final_content``), so a reopened or imported answer reads the same as a
live one. SearChain's own tree has its views already; for other modes ``describe`` returns [].
"""

from __future__ import annotations

from collections import Counter

from ...metrics import normalize_answer
from ..modes import MODE_GEEK, MODE_GENGROUND
from ..result import AnswerResult, Branch
from .events import StrategyStep, VotesCounted


def votes(result: AnswerResult) -> list[tuple[str, int]]:
    """GEEK's vote: (answer as first written, branches that reached it), most votes first."""
    shown: dict[str, str] = {}
    counts: Counter = Counter()
    for branch in result.branches:
        key = normalize_answer(branch.final_content or "")
        if key:
            shown.setdefault(key, (branch.final_content or "").strip())
            counts[key] += 1
    return [(shown[k], c) for k, c in sorted(counts.items(), key=lambda kc: -kc[1])]


def format_votes(tally: list[tuple[str, int]] | tuple, winner: str) -> str:
    parts = ", ".join(f"{answer} {count}" for answer, count in tally)
    tied = len(tally) > 1 and tally[0][1] == tally[1][1]
    note = " (tied: the answer with more passage-backed facts, then the earliest branch, wins)" if tied else ""
    return f"Votes: {parts or 'none'} -> {winner or '(no answer)'}{note}"


def _origin(branch: Branch) -> str:
    if branch.parent is None:
        return "from the question"
    return f"after step {branch.parent[0]}.{branch.parent[1] + 1}"


def describe(result: AnswerResult) -> list[str]:
    """Plain-text lines: GenGround's hops and batches tried, or GEEK's branches, actions and votes."""
    lines: list[str] = []
    if result.mode == MODE_GENGROUND:
        lines.append(f"GenGround: {len(result.branches)} hop(s), stopped: {result.stop_reason}")
        for branch in result.branches:
            kept = branch.nodes[-1] if branch.nodes else None
            if kept is None:
                continue
            lines.append(f"Hop {branch.round}: {kept.query}")
            lines.append(f"  generated: {kept.llm_answer or '?'}; kept: {kept.answer or '?'} [{kept.decision}]")
            lines += [f"  {entry}" for entry in (branch.feedback or "").splitlines()]
    elif result.mode == MODE_GEEK:
        lines.append(f"GEEK: {len(result.branches)} branch(es), stopped: {result.stop_reason}")
        for branch in result.branches:
            lines.append(f"Branch {branch.round} ({_origin(branch)}): answer {branch.final_content or '(none)'}")
            lines += [f"  {entry}" for entry in (branch.feedback or "").splitlines()]
        lines.append(format_votes(votes(result), result.answer))
    return lines


def describe_event(event) -> str | None:
    """One live log line for a strategy event, or None for events that are not the strategies'."""
    if isinstance(event, StrategyStep):
        return f"[{event.round}] {event.action}: {event.detail}"
    if isinstance(event, VotesCounted):
        return format_votes(event.votes, event.winner)
    return None
