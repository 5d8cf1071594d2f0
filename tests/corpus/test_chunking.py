import re

from hypothesis import given, settings, strategies as st

from searchain.corpus.chunking import chunk_spans


def words(n, sentence_every=None):
    out = []
    for i in range(n):
        w = f"w{i}"
        if sentence_every and (i + 1) % sentence_every == 0:
            w += "."
        out.append(w)
    return " ".join(out)


def test_short_text_is_one_passage_with_exact_offsets():
    text = "  Hello there.\n\nSecond paragraph here.  "
    spans = chunk_spans(text)
    assert spans == [(2, len(text) - 2)]
    assert text[spans[0][0]:spans[0][1]] == "Hello there.\n\nSecond paragraph here."


def test_long_text_gives_about_100_word_passages():
    text = words(1000)
    spans = chunk_spans(text)
    counts = [len(text[s:e].split()) for s, e in spans]
    assert counts == [100] * 10


def test_prefers_sentence_end_near_target():
    text = words(300, sentence_every=90)  # sentence ends after words 90, 180, 270
    spans = chunk_spans(text)
    first = text[spans[0][0]:spans[0][1]]
    assert first.endswith("w89.")
    assert len(first.split()) == 90


def test_short_tail_joins_previous_passage():
    text = words(210)
    counts = [len(text[s:e].split()) for s, e in chunk_spans(text)]
    assert counts == [100, 110]


def test_begin_and_end_limit_the_region():
    text = "HEADER\nalpha beta gamma\nFOOTER"
    spans = chunk_spans(text, 7, 23)
    assert [text[s:e] for s, e in spans] == ["alpha beta gamma"]


def test_empty_and_blank_text_give_no_passages():
    assert chunk_spans("") == []
    assert chunk_spans(" \n\t ") == []


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=0, max_size=12),
                max_size=400),
       st.sampled_from([" ", "\n", "  ", "\n\n", "\t"]))
def test_spans_cover_every_word_once_in_order(tokens, sep):
    text = sep.join(tokens)
    spans = chunk_spans(text, target_words=20)
    all_words = re.findall(r"\S+", text)
    got = [w for s, e in spans for w in re.findall(r"\S+", text[s:e])]
    assert got == all_words
    for (s1, e1), (s2, _) in zip(spans, spans[1:]):
        assert e1 <= s2
    for s, e in spans:
        assert text[s:e] == text[s:e].strip() and s < e


def test_prefers_paragraph_break_without_punctuation():
    first = " ".join(f"a{i}" for i in range(95))
    text = first + "\n  \n" + " ".join(f"b{i}" for i in range(100))
    spans = chunk_spans(text)
    assert text[spans[0][0]:spans[0][1]] == first


# The word-by-word walk chunk_spans replaced (#34, for PDF ingest throughput): every word's
# offsets listed, each checked for a break. The regex skipping must cut exactly where it did, or
# re-reading an unchanged file would give passages other ids and offsets.
_SENTENCE = re.compile(r"[.!?][\"')\]]*(?=\s|$)")
_PARAGRAPH = re.compile(r"\n[ \t\r\f\v]*\n")


def _reference_spans(text, begin=0, end=None, target_words=100):
    from bisect import bisect_left, bisect_right

    end = len(text) if end is None else end
    words = [(m.start(), m.end()) for m in re.compile(r"\S+").finditer(text, begin, end)]
    if not words:
        return []
    ends = [e for _, e in words]
    breaks = [False] * len(words)
    for m in _SENTENCE.finditer(text, begin, end):
        i = bisect_left(ends, m.end())
        if i < len(words) and ends[i] == m.end():
            breaks[i] = True
    for m in _PARAGRAPH.finditer(text, begin, end):
        i = bisect_right(ends, m.start()) - 1
        if i >= 0:
            breaks[i] = True
    low, high = max(1, int(target_words * 0.7)), max(1, int(target_words * 1.3))
    spans, counts, first = [], [], 0
    while first < len(words):
        count = len(words) - first
        if count > high:
            best = None
            for c in range(low, high + 1):
                if breaks[first + c - 1] and (best is None or abs(c - target_words) < abs(best - target_words)):
                    best = c
            count = best if best is not None else target_words
        spans.append((words[first][0], words[first + count - 1][1]))
        counts.append(count)
        first += count
    if len(spans) > 1 and counts[-1] < target_words * 0.3:
        tail = spans.pop()
        spans[-1] = (spans[-1][0], tail[1])
    return spans


_PIECES = ["a", "bb.", "c!", 'd?"', "e.)", "f", "x.y", ".", "!!", "(z)", "w.]", "é.", "\u00a0"]
_SEPS = [" ", " ", "\n", "\n\n", "\n \n", "\t", "  ", "\u2003", "\x1c"]


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(_PIECES), st.sampled_from(_SEPS)), max_size=500),
       st.sampled_from([1, 2, 3, 7, 20, 100]), st.integers(0, 30), st.integers(0, 30))
def test_cuts_are_those_of_the_word_by_word_walk(pieces, target, trim_start, trim_end):
    text = "".join(w + s for w, s in pieces)
    begin, end = min(trim_start, len(text)), max(0, len(text) - trim_end)
    assert chunk_spans(text, begin, end, target_words=target) == \
        _reference_spans(text, begin, end, target_words=target)


def test_cuts_of_pdf_like_pages_are_those_of_the_word_by_word_walk():
    from tests.fixtures.documents import page_texts

    for text in page_texts(40, seed=9, words=(20, 700)):
        assert chunk_spans(text) == _reference_spans(text)
