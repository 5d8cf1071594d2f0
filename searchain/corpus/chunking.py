"""DPR-style chunking: split a document into ~100-word passages with exact character offsets.

DPR cut Wikipedia into disjoint 100-word blocks. We keep that size but prefer to end a block at
a sentence or paragraph end near the target, and fold a short tail into the block before it, so
passages read as whole sentences. Offsets index the original string:
``text[start:end]`` is exactly the passage text (whitespace inside it kept as it was).
"""

from __future__ import annotations

import re
from functools import lru_cache

TARGET_WORDS = 100
_WORD = re.compile(r"\S+")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*(?=\s|$)")
_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n")


def chunk_spans(text: str, begin: int = 0, end: int | None = None, *,
                target_words: int = TARGET_WORDS) -> list[tuple[int, int]]:
    """``[(start, end), ...]`` of consecutive ~``target_words``-word passages in ``text[begin:end]``.

    A block ends at the sentence or paragraph end closest to the target within +-30% (the
    nearer-to-start one on a tie), else at exactly the target. A final block under 30% of the
    target joins the previous one.

    Words are never listed one by one: for each block one regular expression finds its 70 %,
    100 % and 130 % words, two more find the sentence and paragraph ends between, and words are
    counted only between the target and the nearest break on either side, all inside the regex
    engine. Ingest spent more time listing every
    word's offsets and checking it for a break than PDFium took to extract the page
    (BENCHMARKS.md, #34); the cuts are the same as that word-by-word walk's (a test compares).
    """
    if target_words < 1:
        raise ValueError("target_words must be at least 1")
    end = len(text) if end is None else end
    first = _WORD.search(text, begin, end)
    if first is None:
        return []
    low, high = max(1, int(target_words * 0.7)), max(1, int(target_words * 1.3))
    spans: list[tuple[int, int]] = []
    counts: list[int] = []
    at = first.start()  # where the next block's first word starts
    while True:
        found = _best_cut(text, at, end, low, high, target_words)
        if found is None:  # at most ``high`` words are left: the last block
            spans.append((at, _word_end_before(text, at, end)))
            counts.append(len(_WORD.findall(text, at, end)))
            break
        count, cut = found
        spans.append((at, cut))
        counts.append(count)
        at = _WORD.search(text, cut, end).start()  # there are more than ``high`` words
    if len(spans) > 1 and counts[-1] < target_words * 0.3:
        tail = spans.pop()
        spans[-1] = (spans[-1][0], tail[1])
    return spans


@lru_cache(maxsize=64)
def _words(n: int) -> re.Pattern:
    """Matches ``n`` words (and the space between them) from the start of a word. Possessive
    (``++``): a word or a space run is taken whole, never backtracked into; twice as fast."""
    return re.compile(r"\S++(?:\s++\S++){%d}" % (n - 1)) if n > 1 else _WORD


@lru_cache(maxsize=64)
def _window(low: int, target: int, high: int) -> re.Pattern:
    """Matches words 1..``high`` of a block and the first letter of the next: group 1 is word
    ``low``, group 2 ends with word ``target``, group 3 with word ``high``, group 4 starts the
    next word (so there is one)."""
    return re.compile(r"(?:\S++\s++){%d}(\S++)((?:\s++\S++){%d})((?:\s++\S++){%d})\s++(\S)"
                      % (low - 1, target - low, high - target))


def _word_end_before(text: str, floor: int, at: int) -> int:
    """The end of the last word before ``at`` (back over the space; ``\\s`` is ``str.isspace``)."""
    while at > floor and text[at - 1].isspace():
        at -= 1
    return at


def _best_cut(text: str, at: int, end: int, low: int, high: int, target: int) -> tuple[int, int] | None:
    """(words, end offset) of the block starting at ``at``: the sentence end or paragraph break
    after word ``low``..``high`` nearest ``target`` words, else exactly ``target`` words; None
    when no more than ``high`` words are left.

    Word ``c`` "ends a sentence" when the word itself ends in ``. ! ?`` (closing quotes or
    brackets may follow), and "ends a paragraph" when a blank line follows it."""
    window = _window(low, target, high).match(text, at, end)
    if window is None:
        return None
    low_start, low_end = window.span(1)
    target_end, high_end, next_start = window.end(2), window.end(3), window.start(4)
    # Word ends that break (a sentence end is a word's end; a paragraph break starts in the
    # space after one), in text order. (Two scans: one regex with both alternatives ran 1.6
    # times slower.)
    ends = [m.end() for m in _SENTENCE_END.finditer(text, low_start, high_end)]
    ends += [_word_end_before(text, low_start, m.start())
             for m in _PARAGRAPH_BREAK.finditer(text, low_end, next_start)]
    # Only the last break at or before the target word and the first after it can be nearest:
    # count the words between each and the target's end.
    before = max((e for e in ends if e <= target_end), default=None)
    after = min((e for e in ends if e > target_end), default=None)
    if before is None and after is None:
        return target, target_end
    best = None
    if before is not None:
        best = (target - len(_WORD.findall(text, before, target_end)), before)
    if after is not None:
        count = target + len(_WORD.findall(text, target_end, after))
        if best is None or count - target < target - best[0]:  # a tie goes to the shorter block
            best = (count, after)
    return best
