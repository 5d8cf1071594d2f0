"""DPR-style chunking: split a document into ~100-word passages with exact character offsets.

DPR cut Wikipedia into disjoint 100-word blocks. We keep that size but prefer to end a block at
a sentence or paragraph end near the target, and fold a short tail into the block before it, so
passages read as whole sentences. Offsets index the original string:
``text[start:end]`` is exactly the passage text (whitespace inside it kept as it was).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

TARGET_WORDS = 100
_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s|$)")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n")


def chunk_spans(text: str, begin: int = 0, end: int | None = None, *,
                target_words: int = TARGET_WORDS) -> list[tuple[int, int]]:
    """``[(start, end), ...]`` of consecutive ~``target_words``-word passages in ``text[begin:end]``.

    A block ends at the sentence or paragraph end closest to the target within +-30%, else at
    exactly the target. A final block under 30% of the target joins the previous one.
    """
    if target_words < 1:
        raise ValueError("target_words must be at least 1")
    end = len(text) if end is None else end
    words = [(m.start(), m.end()) for m in _WORD.finditer(text, begin, end)]
    if not words:
        return []
    breaks = _break_after(text, begin, end, words)
    low, high = max(1, int(target_words * 0.7)), max(1, int(target_words * 1.3))
    spans: list[tuple[int, int]] = []
    counts: list[int] = []
    first = 0
    while first < len(words):
        remaining = len(words) - first
        count = remaining if remaining <= high else _best_cut(breaks, first, low, high, target_words)
        last = first + count - 1
        spans.append((words[first][0], words[last][1]))
        counts.append(count)
        first = last + 1
    if len(spans) > 1 and counts[-1] < target_words * 0.3:
        tail = spans.pop()
        spans[-1] = (spans[-1][0], tail[1])
    return spans


def _break_after(text: str, begin: int, end: int, words: list[tuple[int, int]]) -> list[bool]:
    """``breaks[i]``: word i ends a sentence or is followed by a blank line (one regex pass)."""
    word_ends = [e for _, e in words]
    breaks = [False] * len(words)
    for m in _SENTENCE_END.finditer(text, begin, end):
        i = bisect_left(word_ends, m.end())
        if i < len(words) and word_ends[i] == m.end():
            breaks[i] = True
    for m in _PARAGRAPH_BREAK.finditer(text, begin, end):
        i = bisect_right(word_ends, m.start()) - 1
        if i >= 0:
            breaks[i] = True
    return breaks


def _best_cut(breaks: list[bool], first: int, low: int, high: int, target: int) -> int:
    """How many words (from ``first``) the next block takes: a natural break nearest target."""
    best: int | None = None
    for count in range(low, high + 1):
        idx = first + count - 1
        if idx + 1 >= len(breaks):
            break
        if breaks[idx] and (best is None or abs(count - target) < abs(best - target)):
            best = count
    return best if best is not None else target
