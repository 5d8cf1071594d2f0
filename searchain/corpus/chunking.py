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

    Words are never listed one by one: for each block, regular expressions skip to its 70 %
    word, find the sentence and paragraph ends among the next words, and count words only up to
    those few candidates, all inside the regex engine. Ingest spent more time listing every
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
def _words_and_next(n: int) -> re.Pattern:
    """Matches ``n`` words and the one after them: group 1 ends with word ``n``, group 2 is the
    next word (so there is one)."""
    return re.compile(r"(\S++(?:\s++\S++){%d})\s++(\S)" % (n - 1))


def _word_end_before(text: str, floor: int, at: int) -> int:
    """The end of the last word before ``at`` (back over the space; ``\\s`` is ``str.isspace``)."""
    while at > floor and text[at - 1].isspace():
        at -= 1
    return at


def _word_start_before(text: str, floor: int, at: int) -> int:
    """The start of the word ending at ``at``."""
    while at > floor and not text[at - 1].isspace():
        at -= 1
    return at


def _best_cut(text: str, at: int, end: int, low: int, high: int, target: int) -> tuple[int, int] | None:
    """(words, end offset) of the block starting at ``at``: the sentence end or paragraph break
    after word ``low``..``high`` nearest ``target`` words, else exactly ``target`` words; None
    when no more than ``high`` words are left.

    Word ``c`` "ends a sentence" when the word itself ends in ``. ! ?`` (closing quotes or
    brackets may follow), and "ends a paragraph" when a blank line follows it."""
    low_match = _words(low).match(text, at, end)
    if low_match is None:
        return None
    low_end = low_match.end()
    low_start = _word_start_before(text, at, low_end)
    window = _words_and_next(high - low + 1).match(text, low_start, end)
    if window is None:
        return None
    high_end, next_start = window.end(1), window.start(2)
    # Word ends that break, in text order (a sentence end is a word's end; a paragraph break
    # starts in the space after one), then counted from word ``low`` range by range.
    ends = [m.end() for m in _SENTENCE_END.finditer(text, low_start, high_end)]
    ends += [_word_end_before(text, low_start, m.start())
             for m in _PARAGRAPH_BREAK.finditer(text, low_end, next_start)]
    if not ends:
        return target, _words(target).match(text, at, end).end()
    best = best_end = None
    count, counted_to = low, low_end
    for e in sorted(set(ends)):
        count += len(_WORD.findall(text, counted_to, e))
        counted_to = e
        if best is None or abs(count - target) < abs(best - target):
            best, best_end = count, e
        elif count > target:
            break  # further ones are further from the target
    return best, best_end
