"""Text clean-up for what real chat models write inside a Chain-of-Query (used by ``parser``).

Each function handles one habit seen in real output (issue #21 part 3): answers that go on
with a second sentence or an explanation, quotes around or after an answer, a final content
that runs into "I hope this helps!", degenerate repetition ("141414..."), and prose written
where an answer should be. What a quotation or a bracket holds is never cut (issue #36):
'called the "Paris-Rouen Race."' is one answer, and its full stops end no sentence. All
patterns are linear in the text length: whitespace runs are never matched by two adjacent
quantifiers, and every search that looks back is bounded.
"""

from __future__ import annotations

import re

# A blank line: "\n", spaces or tabs (never newlines: linear), "\n".
_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")
# Where a sentence may end: terminal punctuation, optional closing quotes/brackets, a space, and
# something that can start a sentence. Only starts at a punctuation mark, so it stays linear.
_SENTENCE_END = re.compile(r"[.!?][\"”’»')\]]*\s+(?=[\"“‘«(]?[A-Z0-9])")
# Words whose period does not end a sentence ("St. Louis", "Mr. Smith", "No. 5").
ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st mt ft jr sr vs etc inc ltd co corp no vol fig gen col lt sgt capt rev "
    "jan feb mar apr jun jul aug sep sept oct nov dec approx est ca".split())
_OPEN_QUOTES = "\"“‘«"
_CLOSE_QUOTES = "\"”’»"
# What opens a nesting a sentence does not end inside, and what closes it. A straight quote
# opens after a space or an opening bracket and closes an open straight quote; single quotes are
# left out (’ and ' are apostrophes too: "Arthur’s").
_CLOSER = {"(": ")", "[": "]", "“": "”", "«": "»"}
_OPENS_STRAIGHT_AFTER = "([{“«"
# A unit of 1-12 characters repeated 4+ times in a row: a model stuck in a loop.
_REPEATED = re.compile(r"(.{1,12}?)\1{3,}", re.DOTALL)
_MIN_REPEAT_CHARS = 12
# Polite chatter after a final content; everything from here on is not part of it.
_CHATTER = re.compile(
    r"\b(?:I hope (?:this|that|it) helps|Hope (?:this|that) helps|Let me know if|Please let me know"
    r"|Feel free to|If you have any (?:other |more |further )?questions|Is there anything else"
    r"|Please note(?: that)?\b|Note:)",
    re.IGNORECASE,
)
# Prose that opens a sentence written where an answer should be ("Let me look this up.").
_CHATTER_OPENER = re.compile(
    r"^(?:let me|let's|let us|i will|i'll|i need|we need|we will|we'll|we can|to answer|to find"
    r"|first(?:ly)?,|now,|next,|then,|this (?:needs|requires|is a)|okay|ok\b|sure\b|here is|hmm)",
    re.IGNORECASE,
)


def first_paragraph(text: str) -> str:
    """``text`` up to its first blank line (what follows is chatter, not the same answer)."""
    return _BLANK_LINE.split(text.strip(), maxsplit=1)[0]


def ends_sentence(line: str) -> bool:
    line = line.rstrip().rstrip(_CLOSE_QUOTES + ")]")
    return bool(line) and line[-1] in ".!?"


def leading_lines(text: str) -> str:
    """The first line, joined with the next ones only while a sentence is unfinished:
    "so the owner\\nwould be X." is one answer, "Toronto.\\nNow we ask..." is an answer and prose."""
    kept: list[str] = []
    for line in first_paragraph(text).splitlines():
        line = line.strip()
        if not line:
            continue
        if kept and ends_sentence(kept[-1]):
            break
        kept.append(line)
    return " ".join(kept)


def nesting_depths(text: str) -> list[int]:
    """How many quotations and brackets are open after each character of ``text``. A closer
    that matches no opener is ignored; one that skips inner openers closes them too."""
    depths, stack = [], []
    for i, ch in enumerate(text):
        if ch == '"':
            if stack and stack[-1] == '"':
                stack.pop()
            elif i == 0 or text[i - 1].isspace() or text[i - 1] in _OPENS_STRAIGHT_AFTER:
                stack.append('"')
        elif ch in _CLOSER:
            stack.append(_CLOSER[ch])
        elif ch in stack:  # a closer: pop to its opener
            del stack[len(stack) - 1 - stack[::-1].index(ch):]
        depths.append(len(stack))
    return depths


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (whitespace already collapsed); initials ("J. R. R."),
    dotted abbreviations ("U.S.") and common abbreviations ("St.") do not end it, nor does a
    full stop inside a quotation or brackets ('He said "Stop. Go home." and left.'), unless
    they are never closed (then they tell nothing)."""
    depths = nesting_depths(text)
    nested = bool(depths) and depths[-1] == 0
    for m in _SENTENCE_END.finditer(text):
        if nested and depths[m.start() + len(m.group(0).rstrip()) - 1]:
            continue  # inside a quotation or brackets, after its closing quote if any
        if text[m.start()] == ".":
            before = text[max(0, m.start() - 12):m.start()].split()
            word = before[-1].lstrip(_OPEN_QUOTES + "(") if before else ""
            if (len(word) == 1 and word.isalpha()) or "." in word or word.lower() in ABBREVIATIONS:
                continue
        return text[: m.start() + 1 + len(m.group(0)[1:].rstrip())].strip()
    return text


def unquote(text: str) -> str:
    """``"James Otto".`` -> ``James Otto``; ``Fort Campbell" is the place`` -> ``Fort Campbell``
    (an unbalanced closing quote ends the answer); a quoted title inside a sentence stays."""
    text = text.strip()
    if not text:
        return text
    if text[0] in _OPEN_QUOTES:
        close = -1
        for i in range(1, len(text)):
            if text[i] in _CLOSE_QUOTES:
                close = i
                break
        if close < 0:
            return text[1:].strip()
        rest = text[close + 1:].strip()
        if not rest.strip(".,;:!?"):
            return text[1:close].strip()
        return text
    for i, ch in enumerate(text):
        if ch == '"' and (text[i - 1].isspace() or text[i - 1] in _OPENS_STRAIGHT_AFTER):
            break  # opens a quotation ('called the "Paris-Rouen Race."'): nothing to cut
        if ch in _CLOSE_QUOTES and ch != "’":  # "’" is also an apostrophe (Arthur’s)
            if not any(c in _OPEN_QUOTES for c in text[:i]):
                return text[:i].strip()
            break
    return text


def strip_outer_quotes(text: str) -> str:
    """``text`` without quotes around all of it, or a lone quote at one end; a quote that
    closes a quotation inside it stays ('It was the "Paris-Rouen Race."')."""
    text = text.strip()
    while text and (text[0] in _DOUBLE_QUOTES or text[-1] in _DOUBLE_QUOTES):
        partner = _partner(text) if text[0] in _DOUBLE_QUOTES else None
        if partner == len(text) - 1:
            text = text[1:-1].strip()  # '"X is Y."': one quotation around everything
        elif partner == -1:
            text = text[1:].strip()  # opened, never closed
        elif text[-1] in _DOUBLE_QUOTES and not _open_at_end(text[:-1]):
            text = text[:-1].strip()  # closes nothing
        else:
            break
    return text


_DOUBLE_QUOTES = "\"“”"


def _partner(text: str) -> int:
    """Index of the quote closing the one ``text`` starts with, or -1."""
    return next((i for i in range(1, len(text)) if text[i] in _DOUBLE_QUOTES), -1)


def _open_at_end(text: str) -> bool:
    depths = nesting_depths(text)
    return bool(depths) and depths[-1] > 0


def cut_repetition(text: str) -> str:
    """``text`` without a degenerate repeated tail. A repeated word or phrase keeps one copy
    ("born in 1809 1809 1809 1809" -> "born in 1809"); a token loop with no spaces is dropped
    ("Peter 141414141414" -> "Peter"); text that is all repetition gives ""."""
    for m in _REPEATED.finditer(text):
        if m.end() - m.start() < _MIN_REPEAT_CHARS:
            continue
        prefix = text[: m.start()]
        if not prefix.strip():
            return ""
        unit = m.group(1)
        keep = unit if unit.strip() and any(c.isspace() for c in unit) else ""
        return (prefix + keep).strip()
    return text


def is_degenerate(text: str) -> bool:
    """Whether ``text`` is nothing but a repeated short unit ("141414...", "the the the ...")."""
    compact = "".join((text or "").split())
    return len(compact) >= 8 and not cut_repetition(compact)


def cut_chatter(text: str) -> str:
    """``text`` up to the first polite chatter ("I hope this helps!")."""
    m = _CHATTER.search(text)
    return text[: m.start()] if m else text


def is_prose_opener(text: str) -> bool:
    """Whether ``text`` opens like the model talking to itself rather than answering."""
    return bool(_CHATTER_OPENER.match(text.strip()))
