"""The CoQ parser on outputs printed in the papers, on small-model quirks, and on anything at all."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from searchain.metrics import normalize_answer
from searchain.reasoning.chain.cleanup import ABBREVIATIONS, cut_repetition
from searchain.reasoning.chain.parser import is_unknown_answer, marks_in, parse_chain, rewrite_marks, short_answer, strip_marks

# SearChain w/o IR, paper Figure 6 (Groovy Little Summer Song), verbatim apart from line breaks.
PAPER_GROOVY = """[Query 1]: What is the name of the performer of Groovy Little Summer Song?
[Answer 1]: I don't know.
[Query 2]: Can you find out the name of the performer of Groovy Little Summer Song?
[Answer 2]: The performer of Groovy Little Summer Song is James Otto.
[Query 3]: What is the name of the record label that James Otto is signed to?
[Answer 3]: Warner Music Nashville is the record label that James Otto is signed to.
[Query 4]: Who is the owner of Warner Music Nashville?
[Answer 4]: Warner Music Nashville is a subsidiary of Warner Music Group, so the owner
would be Warner Music Group.
[Final Content]: The performer of Groovy Little Summer Song is James Otto [2]. Warner
Music Nashville is the record label that James Otto is signed to [3]. The owner of Warner
Music Nashville is Warner Music Group [4]. So the final answer is Warner Music Group .Who is the owner of the record label of the performer of Groovy Little Summer Song?"""

# The template echoed as in paper Figure 11, markers glued to the previous text.
PAPER_ECHO = """[Query 1]: Who is the performer of Spirit If... ?If you don't know the answer:
[Unsolved Query]: Who is the performer of Spirit If... ?If you know the answer:
[Answer 1]: The performer of Spirit If… is Kevin Drew.
[Query 2]: Where was Kevin Drew born?
If you don't know the answer:
[Unsolved Query]: Where was Kevin Drew born?
If you know the answer:
[Answer 2]: Toronto.[Query 3]: Where do greyhound buses in Toronto leave from?
If you don't know the answer:
[Unsolved Query]: Where do greyhound buses in Toronto leave from?
If you know the answer:
[Answer 3]: Toronto Coach Terminal.[Final Content]: The performer of Spirit If… is Kevin Drew [1]. Kevin Drew was born in Toronto [2]. Greyhound buses in Toronto leave from Toronto Coach Terminal [3]. So the final answer is Toronto Coach Terminal."""


def test_paper_output_with_i_dont_know_and_multiline_answer():
    chain = parse_chain(PAPER_GROOVY)
    assert len(chain.steps) == 4
    assert chain.steps[0].unsolved and chain.steps[0].answer is None  # "I don't know." = unsolved
    assert chain.steps[1].answer == "The performer of Groovy Little Summer Song is James Otto."
    assert chain.steps[3].answer.endswith("would be Warner Music Group.")
    assert short_answer(chain.final_content) == "Warner Music Group"


def test_echoed_template_gives_one_step_per_query():
    chain = parse_chain(PAPER_ECHO)
    assert [s.query for s in chain.steps] == [
        "Who is the performer of Spirit If... ?", "Where was Kevin Drew born?",
        "Where do greyhound buses in Toronto leave from?"]
    assert [s.answer for s in chain.steps] == [
        "The performer of Spirit If… is Kevin Drew.", "Toronto.", "Toronto Coach Terminal."]
    assert not any(s.unsolved for s in chain.steps)
    assert "If you" not in " ".join(s.query + (s.answer or "") for s in chain.steps)
    assert chain.final_content.startswith("The performer")


def test_preamble_missing_numbers_inline_answer_and_no_final_content():
    text = ("Sure, I'd be happy to help! Here is the reasoning chain:\n\n"
            "[Query]: Who wrote Hamlet? William Shakespeare\n"
            "[Query 7]: When was Shakespeare born?\n"
            "[Answer 2]: 1564\n"
            "[Query]: Where was he born?\n[Unsolved Query]: Where was he born?\n")
    chain = parse_chain(text)
    assert [(s.query, s.answer, s.unsolved) for s in chain.steps] == [
        ("Who wrote Hamlet?", "William Shakespeare", False),
        ("When was Shakespeare born?", "1564", False),
        ("Where was he born?", None, True)]
    assert chain.final_content is None


def test_unanswered_node_never_takes_the_next_answer_and_question_ends_chain():
    text = ("[Query 1]: A first question?\n[Query 2]: A second question?\n[Answer 2]: Two.\n"
            "[Final Content]: Done [2].\n[Question]: another example\n[Query 1]: Ignored?\n[Answer 1]: x")
    chain = parse_chain(text)
    assert [(s.answer, s.unsolved) for s in chain.steps] == [(None, True), ("Two.", False)]
    assert chain.final_content == "Done [2]."


def test_several_markers_on_one_line_and_brackets_inside_a_query():
    chain = parse_chain("[Query 1]: What is [the] X? [Answer 1]: Y. [Query 2]: Z? [Answer 2]: W. [Final Content]: Y and W [1][2].")
    assert [(s.query, s.answer) for s in chain.steps] == [("What is [the] X?", "Y."), ("Z?", "W.")]
    assert [n for _, n in marks_in(chain.final_content)] == [[1], [2]]


def test_unknown_answers_and_short_answers():
    assert is_unknown_answer("I don't know.") and is_unknown_answer("Unknown") and is_unknown_answer("not specified")
    assert not is_unknown_answer("Kevin Drew") and not is_unknown_answer("No")
    assert short_answer("A [1]. So the answer is 0.59 g/cm3. Who is X?") == "0.59 g/cm3"
    assert short_answer("Just text [2].") == "Just text."
    assert strip_marks("died in Bath [3,4].") == "died in Bath."


def test_garbage_and_non_strings_give_empty_chains():
    assert parse_chain("").steps == [] and parse_chain(None).steps == []
    assert parse_chain("]]]:[[[ [Answer 1]: orphan").steps == []


_pieces = st.sampled_from([
    "[Query 1]: ", "[Query]: ", "[Unsolved Query]: ", "[Answer 1]: ", "[Answer]: ", "[Final Content]: ",
    "[Question]: ", "If you don't know the answer:", "\n", "\n\n", "?", " ", "[1]", "[2,3]", "I don't know",
    "Who is X", "Toronto", "]", "[", ":", "Query 2:", "Answer:",
    # what chat models write around a chain (issue #21 part 3)
    '"', "“", "[Final Answer]: ", "14141414141414", "I hope this helps!", "Let me think.", "St.", "the ",
])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_pieces, st.text(max_size=12)), max_size=40))
def test_parser_never_raises_and_returns_clean_steps(parts):
    chain = parse_chain("".join(parts))
    for step in chain.steps:
        assert step.query and step.query == step.query.strip()
        assert (step.answer is None) == step.unsolved or step.answer is not None
        if step.answer is None:
            assert step.unsolved
        assert "\n" not in step.query
    short_answer(chain.final_content or "")
    strip_marks(chain.final_content or "")


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.from_regex(r"[A-Za-z][A-Za-z ,']{0,30}\?", fullmatch=True),
                          st.one_of(st.none(), st.from_regex(r"[A-Za-z0-9][A-Za-z0-9 ,]{0,20}", fullmatch=True))),
                min_size=1, max_size=6, unique_by=lambda step: normalize_answer(step[0])))
def test_well_formed_chains_round_trip(steps):
    lines = []
    for n, (q, a) in enumerate(steps, start=1):
        lines.append(f"[Query {n}]: {q}")
        lines.append(f"[Answer {n}]: {a}" if a is not None else f"[Unsolved Query]: {q}")
    lines.append("[Final Content]: The end [1].")
    chain = parse_chain("\n".join(lines))
    # A degenerate repeated tail ("A000000000000") is cut; nothing else changes a plain answer.
    answers = [None if a is None else cut_repetition(" ".join(a.split())) for _, a in steps]
    expect = [(" ".join(q.split()), None if not a or is_unknown_answer(a) else a)
              for (q, _), a in zip(steps, answers)]
    assert [(s.query, s.answer) for s in chain.steps] == expect
    assert chain.final_content == "The end [1]."


def test_rewrite_marks_maps_splits_dedupes_and_drops():
    text = "A [3,4] then B [9] and C [4][3, 3]."
    out, cited = rewrite_marks(text, lambda n: {3: 1, 4: 2}.get(n))
    assert out == "A [1][2] then B  and C [2][1]."
    assert cited == [1, 2]


def test_rewrite_marks_leaves_text_without_marks_alone():
    assert rewrite_marks("no marks [here]", lambda n: n) == ("no marks [here]", [])
    assert rewrite_marks("", lambda n: n) == ("", [])


@pytest.mark.parametrize("text, answer", [
    ("Who was it? F. Hugh Herbert [1]. So the final answer is F. Hugh Herbert.", "F. Hugh Herbert"),
    ("So the final answer is John F. Kennedy. He was president.", "John F. Kennedy"),
    ("The answer is St. Louis Cardinals.", "St. Louis Cardinals"),
    ("The answer is USA. It is a country.", "USA"),
    ("So the final answer is Toronto Coach Terminal. Greyhound leaves there.", "Toronto Coach Terminal"),
])
def test_short_answer_keeps_initials_and_titles(text, answer):
    assert short_answer(text) == answer


# -- quotes, brackets and sentences inside an answer (issue #36 item 6) ---------------------------

def chain_with(answer: str, final: str = "Done [1].") -> str:
    return f"[Query 1]: What was it?\n[Answer 1]: {answer}\n[Final Content]: {final}\n"


@pytest.mark.parametrize("answer, parsed", [
    # A 13B model's real answer: cut at its quotation mark, it lost the name it gave.
    ('The first car race was called the "Paris-Rouen Race."', 'The first car race was called the "Paris-Rouen Race."'),
    ('He said "Stop. Go home." and left.', 'He said "Stop. Go home." and left.'),
    ("Kevin Drew (born Sept. 9. In Toronto) is the one.", "Kevin Drew (born Sept. 9. In Toronto) is the one."),
    ('It is “Spirit If. The album”. It came out in 2007.', 'It is “Spirit If. The album”.'),
    ('The race was the "Paris-Rouen Race." It ran in 1894.', 'The race was the "Paris-Rouen Race."'),
    # Kept as before: quotes around the whole answer go, a stray closing quote ends it.
    ('"James Otto".', "James Otto"),
    ('Fort Campbell" is the place', "Fort Campbell"),
    ("Toronto. Now we ask where the buses leave.", "Toronto."),
])
def test_quoted_and_bracketed_text_stays_in_the_answer(answer, parsed):
    assert parse_chain(chain_with(answer)).steps[0].answer == parsed


def test_a_final_content_ending_in_a_quotation_keeps_its_closing_quote():
    chain = parse_chain(chain_with("Paris.", 'The first race [1] was the "Paris-Rouen Race."'))
    assert chain.final_content == 'The first race [1] was the "Paris-Rouen Race."'
    assert parse_chain(chain_with("Paris.", '"The race was in Paris [1]."')).final_content == \
        "The race was in Paris [1]."


_word = st.from_regex(r"[a-z]{2,8}", fullmatch=True).filter(
    lambda w: w not in ABBREVIATIONS and not is_unknown_answer(w)
    and w not in {"query", "answer", "question", "final", "unsolved", "sorry", "unknown", "unclear"})
_words = st.lists(_word, min_size=1, max_size=5).map(" ".join)
# A sentence: a capitalised first word, more words, a full stop ("Stop go home.").
_sentence = st.tuples(_word, st.lists(_word, max_size=4)).map(
    lambda t: " ".join([t[0].capitalize(), *t[1]]) + ".")
_inner = st.lists(_sentence, min_size=1, max_size=3).map(" ".join)
_pairs = st.sampled_from([('"', '"'), ("“", "”"), ("(", ")"), ("[", "]"), ("«", "»")])


def _plain(text: str) -> bool:
    """No degenerate repeated tail for ``cut_repetition`` to cut: the property is about quotes."""
    return cut_repetition(text) == text


@settings(max_examples=300, deadline=None)
@given(_words, _pairs, _inner, st.sampled_from(["", ".", " too.", " in the end."]))
def test_text_inside_quotes_or_brackets_is_never_cut(prefix, pair, inner, tail):
    answer = f"{prefix.capitalize()} {pair[0]}{inner}{pair[1]}{tail}"
    assume(_plain(answer))
    assert parse_chain(chain_with(answer)).steps[0].answer == answer


@settings(max_examples=300, deadline=None)
@given(_words, st.one_of(st.none(), st.tuples(_pairs, _inner)), st.booleans(), _sentence)
def test_an_answer_is_its_first_sentence_wherever_quotes_and_brackets_are(prefix, quoted, inside, second):
    """The deliberate cut: "X. Y." gives "X.", also when X ends in or holds a quotation."""
    first = prefix.capitalize()
    if quoted is not None:
        (left, right), inner = quoted
        # The full stop inside the quotation ("the "Race."") or after it ("the "Race".").
        first += f" {left}{inner}{right}" if inside else f" {left}{inner.rstrip('.')}{right}."
    else:
        first += "."
    answer = f"{first} {second}"
    assume(_plain(answer))
    assert parse_chain(chain_with(answer)).steps[0].answer == first


@settings(max_examples=200, deadline=None)
@given(_words, _pairs, _inner, st.sampled_from(["", " [1]", " [1]."]))
def test_a_final_content_keeps_its_quotations(prefix, pair, inner, tail):
    final = f"{prefix.capitalize()} [1] {pair[0]}{inner}{pair[1]}{tail}"
    assume(_plain(final))
    assert parse_chain(chain_with("Yes.", final)).final_content == final
