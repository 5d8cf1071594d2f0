"""Read the GenGround and GEEK formats back, with or without a grammar.

Under a grammar the output is exactly the format; without one a small model may add a preamble,
lower-case a marker or wander on after the answer, so every reader here looks for the markers
anywhere, takes the first occurrence, and cuts each field at the end of its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_EMPTY = re.compile(r"^\W*(empty|none|no evidence|nothing|unknown)\W*$", re.IGNORECASE)


def field(text: str, marker: str) -> str | None:
    """The rest of the line after the first ``[marker]:`` (``marker`` is a regex), or None."""
    m = re.search(r"\[\s*" + marker + r"\s*\]\s*:?[ \t]*([^\n]*)", text or "", re.IGNORECASE)
    if m is None:
        return None
    return m.group(1).strip()


def is_empty(value: str | None) -> bool:
    return value is None or not value.strip() or bool(_EMPTY.match(value))


@dataclass
class Deduction:
    """GenGround's deduction step: a sub-question with the model's own answer, or the final answer."""

    sub_question: str | None
    answer: str | None
    final_answer: str | None


def parse_deduction(text: str) -> Deduction:
    final = field(text, r"final\s+answer")
    sub = field(text, r"sub-?\s*question(?:\s*\d+)?")
    answer = field(text, r"answer(?:\s*\d+)?")
    lowered = (text or "").lower()
    if sub and (final is None or lowered.find("[sub") < lowered.find("[final")):
        return Deduction(sub, answer or None, None)
    if final:
        return Deduction(None, None, final)
    # Neither marker: take the text itself as the model's final word (never loop on garbage).
    plain = " ".join((text or "").split())
    return Deduction(None, None, plain or None)


@dataclass
class Grounding:
    """GenGround's grounding reply: ``passage`` (1-based in the batch) and evidence, or Empty."""

    passage: int | None
    evidence: str | None
    revised: str | None

    @property
    def empty(self) -> bool:
        return self.passage is None or is_empty(self.evidence)


def parse_grounding(text: str, batch_size: int) -> Grounding:
    m = re.search(r"\[\s*evidence(?:\s+(\d+))?\s*\]\s*:?[ \t]*([^\n]*)", text or "", re.IGNORECASE)
    if m is None:
        return Grounding(None, None, None)
    number = int(m.group(1)) if m.group(1) else (1 if batch_size == 1 else None)
    evidence = m.group(2).strip()
    if number is None or not 1 <= number <= batch_size or is_empty(evidence):
        return Grounding(None, None, None)
    revised = field(text, r"revised\s+answer")
    return Grounding(number, evidence, revised or None)


@dataclass
class Option:
    """One AddDecomp alternative: a sub-question and its pseudo-answer (a guess, maybe wrong)."""

    sub_question: str
    pseudo_answer: str


def parse_options(text: str, limit: int) -> list[Option]:
    options: list[Option] = []
    for m in re.finditer(r"\[\s*sub-?\s*question(?:\s*(\d+))?\s*\]\s*:?[ \t]*([^\n]*)", text or "", re.IGNORECASE):
        sub = m.group(2).strip()
        if not sub:
            continue
        rest = text[m.end():]
        nxt = re.search(r"\[\s*sub-?\s*question", rest, re.IGNORECASE)
        pseudo = field(rest[: nxt.start()] if nxt else rest, r"pseudo\s*answer(?:\s*\d+)?") or ""
        options.append(Option(sub, pseudo))
        if len(options) >= limit:
            break
    return options


def parse_action(text: str, actions: tuple[str, ...]) -> str | None:
    """The action named after ``[Action]:`` (or anywhere, without a grammar); None if none is."""
    value = field(text, "action") or text or ""
    squashed = re.sub(r"[^a-z]", "", value.lower())
    for action in actions:
        if re.sub(r"[^a-z]", "", action.lower()) in squashed:
            return action
    return None


def parse_fact(text: str, passages: int) -> tuple[int | None, str | None]:
    """(1-based passage, fact) from the extractor; (None, None) for Unknown; (None, fact) when
    the fact names no passage."""
    m = re.search(r"\[\s*fact(?:\s+from\s+(\d+))?\s*\]\s*:?[ \t]*([^\n]*)", text or "", re.IGNORECASE)
    if m is None:
        plain = " ".join((text or "").split())
        return None, (None if is_empty(plain) else plain)
    fact = m.group(2).strip()
    if is_empty(fact):
        return None, None
    number = int(m.group(1)) if m.group(1) else None
    return (number if number is not None and 1 <= number <= passages else None), fact


def parse_conclusion(text: str) -> tuple[str, str]:
    """(reasoning, final answer) of GEEK's FinalAnswer; the answer falls back on the text."""
    reasoning = field(text, "reasoning") or ""
    answer = field(text, r"final\s+answer")
    if not answer:
        answer = " ".join((text or "").split())
    return reasoning, answer


def yes_no(answer: str) -> str | None:
    """"yes"/"no" when ``answer`` starts with one (for implicit questions), else None."""
    m = re.match(r"\W*(yes|no)\b", answer or "", re.IGNORECASE)
    return m.group(1).lower() if m else None
