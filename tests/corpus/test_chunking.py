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
