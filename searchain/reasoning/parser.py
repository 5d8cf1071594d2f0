"""Parse a Chain-of-Query as small local models really write it. Never raises.

The model is asked for ``[Query n]: ...`` / ``[Answer n]: ...`` / ``[Unsolved Query]: ...`` lines
and a closing ``[Final Content]: ...``. What comes back is messier: a preamble ("Sure, here is
..."), echoed template lines ("If you don't know the answer:"), several markers on one line,
numbers missing or wrong, the answer on the query's line, "I don't know" as an answer, both
``[Query n]`` and ``[Unsolved Query]`` for one step, a new ``[Question]`` (the model starting
another few-shot example), or no ``[Final Content]`` at all.

The approach: find every marker anywhere in the text (not just at line starts), cut the text
into (marker, content) segments, clean each content, then assemble steps with a small state
machine that ignores the numbers (order of appearance is what counts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..eval.metrics import normalize_answer

# A marker: "[Query 2]:", "[Unsolved Query]:", "[Answer]:", "[Final Content]:", "[Question]:",
# tolerant of case, spacing, a missing colon, and "Query" written without brackets at a line start.
_MARKER = re.compile(
    r"\[\s*(?P<kind>unsolved\s+query|query|answer|final\s+content|question)\s*(?:\d+)?\s*\]\s*:?"
    r"|(?m:^[ \t]*(?P<bare>unsolved\s+query|query|answer|final\s+content)\s*\d*\s*:)",
    re.IGNORECASE,
)

# Template lines small models echo back; removed from any content.
_ECHOES = re.compile(
    r"if you (?:don't|do not|dont) know the answer\s*:?"
    r"|if you know the answer\s*:?"
    r"|instruction\s*:\s*please stop your generation\.?"
    r"|please stop your generation\.?"
    r"|\(the answer can only be [^)]*\)|\(yes or no\)",
    re.IGNORECASE,
)

# Answers that say the model does not know: the step is unsolved.
_UNKNOWN = re.compile(
    r"^(?:i\s+(?:do\s+not|don't|dont|cannot|can't|am not sure)|unknown|not sure|no idea|n/?a\b"
    r"|there is no (?:information|data|record)|no information|not (?:specified|known|clear|available)"
    r"|unclear|cannot be determined|it is (?:unknown|unclear|not known)|sorry)",
    re.IGNORECASE,
)

_INLINE_ANSWER_PREFIX = re.compile(r"^\s*(?:answer\s*:|->|=>|:|-)\s*", re.IGNORECASE)


@dataclass
class ParsedStep:
    """One node as parsed: ``answer`` is None when the model did not (or could not) answer."""

    query: str
    answer: str | None = None
    unsolved: bool = False
    inline_answer: str | None = field(default=None, repr=False)  # text after "?" on the query line


@dataclass
class ParsedChain:
    steps: list[ParsedStep]
    final_content: str | None  # None when the model wrote no usable [Final Content]


def is_unknown_answer(answer: str) -> bool:
    """Whether an answer is an "I don't know"-style non-answer."""
    return bool(_UNKNOWN.match(answer.strip().strip("\"'“”").strip()))


def _clean(text: str) -> str:
    text = _ECHOES.sub(" ", text)
    return " ".join(text.split()).strip().strip("\"“”").strip()


def _kind(match: re.Match) -> str:
    raw = (match.group("kind") or match.group("bare") or "").lower()
    return " ".join(raw.split())


def _segments(text: str) -> list[tuple[str, str]]:
    """(kind, raw content) for each marker, in order of appearance."""
    matches = list(_MARKER.finditer(text))
    out = []
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        out.append((_kind(m), text[m.end() : end]))
    return out


def _split_query(raw: str) -> tuple[str, str | None]:
    """The query (first line, up to its question mark) and any answer written after it."""
    lines = [ln for ln in (_clean(x) for x in raw.splitlines()) if ln]
    if not lines:
        return "", None
    first, rest = lines[0], " ".join(lines[1:])
    qmark = first.find("?")
    if 0 <= qmark < len(first) - 1:
        rest = (first[qmark + 1 :] + " " + rest).strip()
        first = first[: qmark + 1]
    rest = _INLINE_ANSWER_PREFIX.sub("", rest).strip()
    return first.strip(), (rest or None)


def _same_query(a: str, b: str) -> bool:
    return normalize_answer(a) == normalize_answer(b)


class _Assembler:
    """The state machine turning segments into steps."""

    def __init__(self) -> None:
        self.steps: list[ParsedStep] = []
        self.pending: ParsedStep | None = None  # the latest step, still open for its answer
        self.final: str | None = None

    def _close(self) -> None:
        step, self.pending = self.pending, None
        if step is None:
            return
        if step.answer is None and step.inline_answer and not step.unsolved:
            step.answer = step.inline_answer
        if step.answer is not None and is_unknown_answer(step.answer):
            step.answer, step.unsolved = None, True
        if step.answer is None:
            # An unanswered node is unsolved; it never borrows the next node's answer.
            step.unsolved = True
        self.steps.append(step)

    def query(self, raw: str, unsolved: bool) -> None:
        text, inline = _split_query(raw)
        if not text:
            return
        p = self.pending
        if p is not None and p.answer is None and (unsolved or p.unsolved) and (
            unsolved and not p.unsolved or _same_query(p.query, text)
        ):
            # "[Query n]: X" then "[Unsolved Query]: X" (or the reverse): one step, unsolved.
            p.unsolved = True
            return
        self._close()
        self.pending = ParsedStep(query=text, unsolved=unsolved, inline_answer=inline)

    def answer(self, raw: str) -> None:
        # An answer ends at the first blank line: what follows is chatter, not the answer.
        text = _clean(re.split(r"\n\s*\n", raw.strip(), maxsplit=1)[0])
        p = self.pending
        if p is None or p.answer is not None or not text:
            return  # an answer with no open query, or a second answer: ignore
        p.answer = text
        # "[Unsolved Query]: X ... [Answer]: Y" (the template echoed): the model did answer.
        p.unsolved = False

    def final_content(self, raw: str) -> bool:
        """Record the final content; True when parsing should stop here."""
        text = _clean(raw)
        if not text:
            return False
        if not self.steps and self.pending is None:
            # "[Final Content]" before any step: an echoed instruction, keep looking.
            self.final = text
            return False
        self.final = text
        return True

    def finish(self) -> ParsedChain:
        self._close()
        return ParsedChain(steps=self.steps, final_content=self.final)


def parse_chain(text: str) -> ParsedChain:
    """Parse model output into steps and a final content. Never raises; may return no steps."""
    if not isinstance(text, str):
        return ParsedChain(steps=[], final_content=None)
    asm = _Assembler()
    for kind, raw in _segments(text):
        if kind == "question":
            if asm.steps or asm.pending is not None:
                break  # the model started another example: the chain is over
            continue
        if kind == "query":
            asm.query(raw, unsolved=False)
        elif kind == "unsolved query":
            asm.query(raw, unsolved=True)
        elif kind == "answer":
            asm.answer(raw)
        elif kind == "final content":
            if asm.final_content(raw):
                break
    return asm.finish()


_MARK = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
_ANSWER_IS = re.compile(r"\banswer\s+(?:is|would be)\s*:?\s*", re.IGNORECASE)


def marks_in(text: str) -> list[tuple[re.Match, list[int]]]:
    """Every reference mark ("[2]", "[3,4]") in ``text`` with the node numbers it names."""
    out = []
    for m in _MARK.finditer(text or ""):
        numbers = [int(n) for n in re.findall(r"\d+", m.group(1))]
        out.append((m, numbers))
    return out


def strip_marks(text: str) -> str:
    """``text`` without reference marks, whitespace tidied."""
    text = _MARK.sub("", text or "")
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    return " ".join(text.split())


def short_answer(final_content: str) -> str:
    """The short answer in a final content: the sentence after the last "answer is", else all.

    "... So the final answer is Toronto Coach Terminal." gives "Toronto Coach Terminal" (the
    authors' evaluation also reads what follows the last marker).
    """
    plain = strip_marks(final_content)
    found = list(_ANSWER_IS.finditer(plain))
    if found:
        tail = plain[found[-1].end() :]
        # The answer ends at the sentence's end: a period before a capitalised word, or a newline.
        tail = re.split(r"\.\s*(?=[A-Z][a-z])|\.\s*$|\n", tail, maxsplit=1)[0]
        answer = tail.strip().rstrip(".").strip()
        if answer:
            return answer
    return plain
