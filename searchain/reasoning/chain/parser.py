"""Parse a Chain-of-Query as models really write it. Never raises; linear in the text length.

The model is asked for ``[Query n]: ...`` / ``[Answer n]: ...`` / ``[Unsolved Query]: ...`` lines
and a closing ``[Final Content]: ...``. What comes back is messier: a preamble ("Sure, here is
..."), echoed template lines ("If you don't know the answer:"), several markers on one line,
numbers missing or wrong, the answer on the query's line, "I don't know" as an answer, both
``[Query n]`` and ``[Unsolved Query]`` for one step, a new ``[Question]`` (an echo of the user's
question, or the model starting another few-shot example), or no ``[Final Content]`` at all.
Chat models also write prose around the chain (issue #21 part 3): markers quoted or named in
sentences ("the answer to [Query 2]."), answers that go on with explanations, a final content
followed by "I hope this helps!", ``[Final Answer]:`` for ``[Final Content]:``, a last step cut
off at the token limit, and degenerate loops ("141414...").

The approach: find every marker anywhere in the text, keep those that start a step (at a line
start, after a sentence, or after an answer; not inside quotes, not a bare mention without a
colon mid-sentence), cut the text into (marker, content) segments, clean each content
(``cleanup``), then assemble steps with a small state machine that ignores the numbers
(order of appearance is what counts). ``[Question]`` lines split the text into candidate
chains; the first that has steps and a final content wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from ...llm.model_kind import strip_special_tokens
from ...metrics import normalize_answer
from .cleanup import (cut_chatter, cut_repetition, first_paragraph, first_sentence,
                      is_degenerate, is_prose_opener, leading_lines, strip_outer_quotes, unquote)

__all__ = ["ParsedChain", "ParsedStep", "is_degenerate", "is_unknown_answer", "marks_in",
           "parse_chain", "short_answer", "strip_marks"]

# A marker: "[Query 2]:", "[Unsolved Query]:", "[Answer]:", "[Final Content]:", "[Final Answer]:",
# "[Question]:", tolerant of case, spacing and a missing colon, and "Query 2:" without brackets
# at a line start. Whitespace inside is [ \t]* between distinct tokens only: never two adjacent
# quantifiers over the same run of spaces (that made long space runs quadratic).
_KINDS = r"unsolved[ \t]+query|query|answer|final[ \t]+(?:content|answer)|question"
_MARKER = re.compile(
    rf"\[[ \t]*(?P<kind>{_KINDS})[ \t]*(?:\d+[ \t]*)?\](?P<colon>[ \t]*:)?"
    rf"|(?m:^[ \t]*(?P<bare>{_KINDS})[ \t]*(?:\d+[ \t]*)?:)",
    re.IGNORECASE,
)
# Before a real marker: a line start (maybe a list bullet), or the end of a sentence or step.
_MARKER_AFTER = ".?!:;)]…*-•>"
# A marker right after these words is a mention in a sentence ("the answer to [Query 2]: ...").
_MENTION_WORDS = frozenset(
    "the a an to of in on for from by with as at and or is are was were be this that these those "
    "each every query answer unsolved above following previous our your their its".split())
_OPEN_QUOTES = "\"“‘«`"
_LOOK_BACK = 40  # characters looked at before a marker (bounded, so the scan stays linear)

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
    return strip_outer_quotes(" ".join(text.split()))


def _answer_text(raw: str) -> str:
    """An answer as the model meant it: its first sentence (continued across a line break while
    unfinished), without quotes around or after it, without a degenerate repeated tail."""
    text = " ".join(_ECHOES.sub(" ", leading_lines(raw)).split())
    text = unquote(first_sentence(text))
    return cut_repetition(text).strip()


def _final_text(raw: str) -> str:
    """The final content up to any chatter; a later paragraph only if it states the answer."""
    text = cut_chatter(raw).strip()
    first = first_paragraph(text)
    rest = text[len(first):].strip()
    if rest and "answer" in first_paragraph(rest).lower() and "answer" not in first.lower():
        first = f"{first} {first_paragraph(rest)}"
    return cut_repetition(_clean(first))


def _kind(match: re.Match) -> str:
    raw = (match.group("kind") or match.group("bare") or "").lower()
    kind = " ".join(raw.split())
    return "final content" if kind == "final answer" else kind


def _starts_a_step(text: str, match: re.Match) -> bool:
    """Whether a marker found in ``text`` starts a segment, or is prose mentioning one."""
    if match.group("bare"):
        return True  # "Query 2:" at a line start
    window_start = max(0, match.start() - _LOOK_BACK)
    before = text[window_start:match.start()]
    newline = before.rfind("\n")
    line = before[newline + 1:]
    stripped = line.rstrip()
    if (newline >= 0 or window_start == 0) and not stripped.strip(" \t*-•>#0123456789."):
        return True  # at a line start (after a bullet or list number): always a marker
    if match.group("colon") is None:
        return False  # "the answer to [Query 2]." / "[Query]-[Answer] pairs": a mention
    last = stripped[-1]
    if last in _OPEN_QUOTES:
        return False  # '"[Unsolved Query]: X" is "[Answer]: Y"': quoted inside a sentence
    if last in _MARKER_AFTER:
        return True  # "Toronto.[Query 3]:", "X? [Answer 1]:"
    words = stripped.split()
    return words[-1].lower().strip("\"'“”,") not in _MENTION_WORDS


def _segments(text: str) -> list[tuple[str, str]]:
    """(kind, raw content) for each marker that starts a step, in order of appearance."""
    matches = [m for m in _MARKER.finditer(text) if _starts_a_step(text, m)]
    out = []
    for i, m in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        out.append((_kind(m), text[m.end() : end]))
    return out


def _split_query(raw: str) -> tuple[str, str | None]:
    """The query (first line, up to its question mark) and an answer written after it on the
    same line ("Who wrote Hamlet? William Shakespeare"). Prose on later lines is not an answer."""
    lines = [ln for ln in (_clean(x) for x in raw.splitlines()) if ln]
    if not lines:
        return "", None
    first, rest = lines[0], ""
    qmark = first.find("?")
    if 0 <= qmark < len(first) - 1:
        rest = first[qmark + 1 :].strip()
        first = first[: qmark + 1]
    rest = _INLINE_ANSWER_PREFIX.sub("", rest).strip()
    if rest and (is_prose_opener(rest) or rest.endswith("?")):
        rest = ""  # "Who owns X? Let me check this as well." is no answer
    rest = _answer_text(rest) if rest else ""
    return first.strip(), (rest or None)


def _same_query(a: str, b: str) -> bool:
    return normalize_answer(a) == normalize_answer(b)


class _Assembler:
    """The state machine turning one candidate chain's segments into steps."""

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
        if step.answer is not None and (is_unknown_answer(step.answer) or is_degenerate(step.answer)):
            step.answer, step.unsolved = None, True
        if step.answer is None:
            # An unanswered node is unsolved; it never borrows the next node's answer.
            step.unsolved = True
        self.steps.append(step)

    def query(self, raw: str, unsolved: bool, *, truncated: bool = False) -> None:
        text, inline = _split_query(raw)
        cut_off = truncated and not text.endswith("?")
        if not text or (cut_off and (self.steps or self.pending is not None)):
            # Empty, or a further hop cut off by the token limit ("[Query 6]: How"). A chain's
            # only query is kept even when cut off: it is still something to search for.
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
        text = _answer_text(raw)
        p = self.pending
        if p is None or p.answer is not None or not text:
            return  # an answer with no open query, or a second answer: ignore
        p.answer = text
        # "[Unsolved Query]: X ... [Answer]: Y" (the template echoed): the model did answer.
        p.unsolved = False

    def final_content(self, raw: str) -> bool:
        """Record the final content; True when this chain ends here."""
        text = _final_text(raw)
        if not text:
            return False
        self.final = text
        # "[Final Content]" before any step: an echoed instruction, keep looking.
        return bool(self.steps or self.pending is not None)

    def finish(self) -> ParsedChain:
        self._close()
        return ParsedChain(steps=self.steps, final_content=self.final)


def _assemble(segments: list[tuple[str, str]], text_ends_mid_line: bool) -> ParsedChain:
    asm = _Assembler()
    for i, (kind, raw) in enumerate(segments):
        last = i == len(segments) - 1
        if kind in ("query", "unsolved query"):
            asm.query(raw, unsolved=kind == "unsolved query",
                      truncated=last and text_ends_mid_line and "\n" not in raw.strip(" \t"))
        elif kind == "answer":
            asm.answer(raw)
        elif kind == "final content" and asm.final_content(raw):
            break
    return asm.finish()


def parse_chain(text: str) -> ParsedChain:
    """Parse model output into steps and a final content. Never raises; may return no steps.

    ``[Question]`` lines split the output into candidate chains (an echo of the user's question
    before the real chain, or another few-shot example after it): the first candidate with steps
    and a final content is the chain, else the first with steps."""
    if not isinstance(text, str):
        return ParsedChain(steps=[], final_content=None)
    text = strip_special_tokens(text)  # "<|im_end|>" left by a template (issue #23)
    groups: list[list[tuple[str, str]]] = [[]]
    for kind, raw in _segments(text):
        if kind == "question":
            if groups[-1]:
                groups.append([])
            continue
        groups[-1].append((kind, raw))
    ends_mid_line = not text.endswith("\n")
    chains = [_assemble(g, ends_mid_line and g is groups[-1]) for g in groups]
    for wanted in (lambda c: c.steps and c.final_content, lambda c: c.steps):
        for chain in chains:
            if wanted(chain):
                return chain
    return chains[0]


_MARK = re.compile(r"\[[ \t]*(\d+(?:[ \t]*[,;][ \t]*\d+)*)[ \t]*\]")
_SENTENCE_END = re.compile(r"(?<!\b[A-Z])(?<!\b(?:Mr|Dr|St|Jr|Sr|Mt|Ft|Lt|vs))(?<!\bMrs)\.\s*(?=[A-Z][a-z])|\.\s*$|\n")
_ANSWER_IS = re.compile(r"\banswer\s+(?:is|would be)\s*:?\s*", re.IGNORECASE)


def marks_in(text: str) -> list[tuple[re.Match, list[int]]]:
    """Every reference mark ("[2]", "[3,4]") in ``text`` with the node numbers it names."""
    out = []
    for m in _MARK.finditer(text or ""):
        numbers = [int(n) for n in re.findall(r"\d+", m.group(1))]
        out.append((m, numbers))
    return out


def rewrite_marks(text: str, target: Callable[[int], int | None]) -> tuple[str, list[int]]:
    """``text`` with every mark rewritten through ``target`` ("[3,4]" -> "[a][b]"), numbers it maps
    to None dropped, each number once per mark; with the targets cited, in order of first
    appearance. The one place marks are rewritten: resolving, renumbering and RAG's marks."""
    text = text or ""
    cited: list[int] = []
    pieces: list[str] = []
    last = 0
    for m, numbers in marks_in(text):
        pieces.append(text[last : m.start()])
        mapped = [t for t in (target(n) for n in numbers) if t is not None]
        good = list(dict.fromkeys(mapped))
        pieces.append("".join(f"[{t}]" for t in good))
        cited += [t for t in good if t not in cited]
        last = m.end()
    pieces.append(text[last:])
    return "".join(pieces), cited


def strip_marks(text: str) -> str:
    """``text`` without reference marks, whitespace tidied."""
    text = " ".join(_MARK.sub("", text or "").split())
    # Collapsed first, so this pattern never scans a long run of spaces from every position.
    return re.sub(r" ([.,;:!?])", r"\1", text)


def answer_tail(final_content: str) -> str | None:
    """What follows the last "answer is" of a final content, marks removed; None when it has none."""
    plain = strip_marks(final_content)
    found = list(_ANSWER_IS.finditer(plain))
    return plain[found[-1].end():] if found else None


def short_answer(final_content: str) -> str:
    """The short answer in a final content: the sentence after the last "answer is", else all.

    "... So the final answer is Toronto Coach Terminal." gives "Toronto Coach Terminal" (the
    authors' evaluation also reads what follows the last marker).
    """
    tail = answer_tail(final_content)
    if tail is not None:
        # The answer ends at the sentence's end: a period before a capitalised word, or a newline;
        # not the period of an initial or a title ("F. Hugh Herbert", "Dr. Who").
        tail = _SENTENCE_END.split(tail, maxsplit=1)[0]
        answer = tail.strip().rstrip(".").strip()
        if answer:
            return answer
    return strip_marks(final_content)
