"""DPR-style chunking: split a document into ~100-word passages with exact character offsets.

DPR cut Wikipedia into disjoint 100-word blocks. We keep that size but prefer to end a block at
a sentence or paragraph end near the target, and fold a short tail into the block before it, so
passages read as whole sentences. Offsets index the original string:
``text[start:end]`` is exactly the passage text (whitespace inside it kept as it was).
"""

from __future__ import annotations

import re

TARGET_WORDS = 100
_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*$")


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
    low, high = max(1, int(target_words * 0.7)), max(1, int(target_words * 1.3))
    spans: list[tuple[int, int]] = []
    first = 0
    while first < len(words):
        remaining = len(words) - first
        if remaining <= high:
            count = remaining
        else:
            count = _best_cut(text, words, first, low, high, target_words)
        last = first + count - 1
        spans.append((words[first][0], words[last][1]))
        first = last + 1
    if len(spans) > 1 and _word_count(text, spans[-1]) < target_words * 0.3:
        tail = spans.pop()
        spans[-1] = (spans[-1][0], tail[1])
    return spans


def _best_cut(text: str, words: list[tuple[int, int]], first: int, low: int, high: int,
              target: int) -> int:
    """How many words (from ``first``) the next block takes: a natural break nearest target."""
    best: int | None = None
    for count in range(low, high + 1):
        idx = first + count - 1
        if idx + 1 >= len(words):
            break
        if _is_break(text, words[idx], words[idx + 1]):
            if best is None or abs(count - target) < abs(best - target):
                best = count
    return best if best is not None else target


def _is_break(text: str, word: tuple[int, int], following: tuple[int, int]) -> bool:
    gap = text[word[1]:following[0]]
    return "\n\n" in gap or bool(_SENTENCE_END.search(text[word[0]:word[1]]))


def _word_count(text: str, span: tuple[int, int]) -> int:
    return len(_WORD.findall(text, span[0], span[1]))
