"""The CoQ parser on what real chat models write around a chain (issue #21 part 3).

The fixtures are shaped like real 13B chat-model output: prose around the chain, markers quoted
or named in sentences, an echoed question, chatter after the final content, truncated and
degenerate steps. Each kind lost or invented steps before the parser was hardened.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from searchain.reasoning.chain.parser import is_degenerate, parse_chain, short_answer, strip_marks

QUOTED_MARKERS_THEN_ECHOED_QUESTION = """\
To solve this, I will build a global reasoning chain. Note that the answer to the unsolved query \
"[Unsolved Query]: Who is the father of Kasper Schmeichel?" is "[Answer]: Peter Schmeichel", so \
I can go on from there.

[Question]: Which club did the father of Kasper Schmeichel play for in 1999?
[Query 1]: Who is the father of Kasper Schmeichel?
[Answer 1]: Peter Schmeichel.
[Query 2]: Which club did Peter Schmeichel play for in 1999?
[Answer 2]: Manchester United.
[Final Content]: The father of Kasper Schmeichel is Peter Schmeichel [1]. In 1999 Peter \
Schmeichel played for Manchester United [2]. So the final answer is Manchester United.
"""


def test_quoted_markers_are_prose_and_an_echoed_question_does_not_end_the_chain():
    chain = parse_chain(QUOTED_MARKERS_THEN_ECHOED_QUESTION)
    assert [(s.query, s.answer) for s in chain.steps] == [
        ("Who is the father of Kasper Schmeichel?", "Peter Schmeichel."),
        ("Which club did Peter Schmeichel play for in 1999?", "Manchester United.")]
    assert short_answer(chain.final_content) == "Manchester United"


MARKER_WORDS_IN_RUNNING_TEXT = """\
[Query 1]: Who directed Kiss and Tell?
[Answer 1]: Richard Wallace.
[Query 2]: When was Richard Wallace born?
[Answer 2]: August 26, 1894.
Based on the [Query]-[Answer] pairs above, the answer to [Query 2] gives the birth date.
[Final Content]: Kiss and Tell was directed by Richard Wallace [1], who was born on August 26, \
1894 [2]. So the final answer is August 26, 1894.
"""


def test_marker_words_in_sentences_are_not_steps():
    chain = parse_chain(MARKER_WORDS_IN_RUNNING_TEXT)
    assert [(s.query, s.answer) for s in chain.steps] == [
        ("Who directed Kiss and Tell?", "Richard Wallace."),
        ("When was Richard Wallace born?", "August 26, 1894.")]
    assert chain.final_content.startswith("Kiss and Tell was directed")


TRAILING_TEXT_AND_QUOTES = """\
[Query 1]: Who is the performer of Groovy Little Summer Song?
[Answer 1]: "James Otto". He is an American country music singer and songwriter.
[Query 2]: Where was James Otto born?
[Answer 2]: Fort Campbell" is the place given in most sources.
[Query 3]: Which record label is James Otto signed to?
Let me think about the record label next.
[Query 4]: Who owns Warner Music Nashville? Let me check this as well.
[Final Content]: James Otto [1] was born in Fort Campbell [2]. So the final answer is James Otto.
"""


def test_answers_lose_trailing_sentences_and_quotes_and_prose_is_no_answer():
    chain = parse_chain(TRAILING_TEXT_AND_QUOTES)
    assert [(s.answer, s.unsolved) for s in chain.steps] == [
        ("James Otto", False), ("Fort Campbell", False), (None, True), (None, True)]
    assert chain.steps[3].query == "Who owns Warner Music Nashville?"


def test_an_answer_continued_on_the_next_line_is_kept_whole():
    text = ("[Query 1]: Who owns Warner Music Nashville?\n[Answer 1]: It is a subsidiary of Warner "
            "Music Group, so the owner\nwould be Warner Music Group.\nNext I will ask about the "
            "founder.\n[Final Content]: Warner Music Group [1].")
    chain = parse_chain(text)
    assert chain.steps[0].answer == ("It is a subsidiary of Warner Music Group, so the owner would "
                                     "be Warner Music Group.")


def test_abbreviations_and_initials_do_not_end_an_answer():
    chain = parse_chain("[Query 1]: Who wrote it?\n[Answer 1]: J. R. R. Tolkien of St. Louis, "
                        "U.S. Army. He wrote more.\n")
    assert chain.steps[0].answer == "J. R. R. Tolkien of St. Louis, U.S. Army."


FINAL_CONTENT_WITH_CHATTER = """\
[Query 1]: Who wrote The Lantern Suite?
[Answer 1]: Ansel Ruddock.
[Final Answer]: The Lantern Suite was written by Ansel Ruddock [1]. So the final answer is Ansel \
Ruddock.

I hope this helps! Let me know if you have any other questions about the above [Final Content].
"""


def test_final_answer_variant_ends_before_chatter_and_is_not_overwritten():
    chain = parse_chain(FINAL_CONTENT_WITH_CHATTER)
    assert [(s.query, s.answer) for s in chain.steps] == [
        ("Who wrote The Lantern Suite?", "Ansel Ruddock.")]
    assert chain.final_content == ("The Lantern Suite was written by Ansel Ruddock [1]. So the "
                                   "final answer is Ansel Ruddock.")


def test_chatter_on_the_final_content_line_is_cut():
    chain = parse_chain("[Query 1]: Who wrote it?\n[Answer 1]: Ansel Ruddock.\n[Final Content]: "
                        "Ansel Ruddock wrote it [1]. So the final answer is Ansel Ruddock. I hope "
                        "this helps! Feel free to ask more.")
    assert chain.final_content == "Ansel Ruddock wrote it [1]. So the final answer is Ansel Ruddock."


TRUNCATED_AND_DEGENERATE = """\
[Query 1]: Who founded Arthur's Magazine?
[Answer 1]: 14141414141414141414141414141414141414141414
[Query 2]: When was Timothy Shay Arthur born?
[Answer 2]: Timothy Shay Arthur was born in 1809 1809 1809 1809 1809 1809 1809 1809 1809 1809
[Query 3]: Where was Timothy Shay Arthur born?
[Answer 3]: Newburgh, New York.
[Query 4]: How"""


def test_truncated_last_step_is_dropped_and_degenerate_answers_are_no_answers():
    chain = parse_chain(TRUNCATED_AND_DEGENERATE)
    assert [(s.query, s.answer, s.unsolved) for s in chain.steps] == [
        ("Who founded Arthur's Magazine?", None, True),
        ("When was Timothy Shay Arthur born?", "Timothy Shay Arthur was born in 1809", False),
        ("Where was Timothy Shay Arthur born?", "Newburgh, New York.", False)]


def test_a_chains_only_query_is_kept_even_when_cut_off():
    assert [s.query for s in parse_chain("[Query 1]: Where is the Kestrel Bay lighthouse in the").steps] == [
        "Where is the Kestrel Bay lighthouse in the"]


def test_a_complete_last_query_is_kept_even_without_a_final_newline():
    chain = parse_chain("[Query 1]: Who wrote it?\n[Answer 1]: Ansel.\n[Unsolved Query]: Where was Ansel born?")
    assert [s.query for s in chain.steps] == ["Who wrote it?", "Where was Ansel born?"]


def test_degenerate_text():
    assert is_degenerate("141414141414141414") and is_degenerate("the the the the the the the")
    assert not is_degenerate("Newburgh, New York") and not is_degenerate("1,000,000")
    assert not is_degenerate("Mississippi") and not is_degenerate("1809")


# -- linear time on long whitespace ---------------------------------------------------------
# A quadratic pass over 200,000 spaces is about 2e10 regex steps (minutes to hours); the parser
# takes milliseconds. These inputs hang the test run (and hit pytest's --timeout) if any
# pattern backtracks quadratically on whitespace, without a timed assertion.

_MARKER_WORDS = ["[Query", "[Query 1", "Query", "[Unsolved Query", "unsolved", "[Answer", "Answer 2",
                 "[Final Content", "[Final", "[Question", "[1", "[", ".", "?", "So the answer is",
                 "I don't", "If you don't know the answer", "\n", "141414"]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(_MARKER_WORDS), st.sampled_from([" ", "\t", "\n", " \n", "\n \n", ". "]),
       st.integers(min_value=50_000, max_value=200_000), st.sampled_from(["", "x", ":", "]", "?", "[1]"]))
def test_parser_is_linear_on_long_whitespace_after_marker_words(word, blank, n, tail):
    text = f"[Query 1]: Who?\n{word}{blank * (n // len(blank))}{tail}"
    chain = parse_chain(text)
    assert chain.steps and chain.steps[0].query == "Who?"
    short_answer(text)
    assert strip_marks(text).startswith("[Query 1]: Who?")


def test_a_million_spaces_after_every_marker_kind():
    spaces = " " * 1_000_000
    for word in _MARKER_WORDS:
        parse_chain(f"{word}{spaces}")
    chain = parse_chain(f"[Query 1]: Who?\n[Answer 1]:{spaces}x{spaces}\n{spaces}\n[Final Content]:{spaces}y")
    assert (chain.steps[0].answer, chain.final_content) == ("x", "y")
    assert strip_marks(spaces + "x" + spaces + ".") == "x."
