"""The LLM reader answers with short spans of the passage, located, with honest confidence.

Scripted replies are shaped like issue #23's traces of SmolLM2 as the reader: whole sentences,
a passage's opening sentence cut at the token limit, the question's own subject. The grammar
that constrains a llama.cpp model to passage spans is checked by llama.cpp's own grammar engine
in test_llm_reader_gguf.py.
"""

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from searchain.llm.base import Completion, GenerationParams, Usage
from searchain.reader.llm_reader import LLMReader
from searchain.reader.span_extract import answer_candidates
from searchain.reader.span_grammar import gbnf_literal, passage_span_grammar

SCHMEICHEL = ("Kasper Peter Schmeichel (born 5 November 1986) is a Danish professional footballer "
              "who plays as a goalkeeper. He is the son of former Manchester United goalkeeper "
              "Peter Schmeichel.")
KISS_AND_TELL = ("Kiss and Tell is a 1945 American comedy film starring Shirley Temple as Corliss "
                 "Archer. In the film, two teenage girls cause their parents much concern when they "
                 "start to become interested in boys.")


class ScriptedChat:
    """Replies with fixed texts; records every call's params."""

    name = "scripted"

    def __init__(self, replies, *, logprob=-0.1, finish="stop", grammar=False):
        self.replies = list(replies)
        self.logprob, self.finish, self.supports_grammar = logprob, finish, grammar
        self.params = []

    def chat(self, messages, params=GenerationParams(), *, on_token=None, cancel=None):
        self.params.append(params)
        text = self.replies.pop(0)
        n = max(1, len(text.split()))
        return Completion(text=text, usage=Usage(50, 50, n), finish_reason=self.finish,
                          token_logprobs=(self.logprob,) * n if params.logprobs else ())


def test_a_sentence_reply_becomes_the_answer_span_where_the_passage_names_it_alone():
    reader = LLMReader(ScriptedChat(["The father of Kasper Schmeichel is Peter Schmeichel."]))
    result = reader.read("Who is the father of Kasper Schmeichel?", "Kasper Schmeichel", SCHMEICHEL)
    assert result.answer == "Peter Schmeichel" == SCHMEICHEL[result.start:result.end]
    # The highlighted span is the father's own mention, not the son's middle name.
    assert SCHMEICHEL[result.start - 11:result.start] == "goalkeeper "
    assert result.confidence == pytest.approx(math.exp(-0.1)) and result.confidence > result.threshold


def test_a_pasted_opening_sentence_cut_at_the_token_limit_is_short_and_not_confident():
    reply = ("Kiss and Tell is a 1945 American comedy film starring Shirley Temple as Corliss "
             "Archer.  In")
    reader = LLMReader(ScriptedChat([reply], logprob=-0.05, finish="length"))
    result = reader.read("Who played Corliss Archer in Kiss and Tell?", "Kiss and Tell", KISS_AND_TELL)
    assert result.answer == "Shirley Temple" == KISS_AND_TELL[result.start:result.end]
    assert math.exp(-0.05) > 0.9 and result.confidence < result.threshold


def test_a_long_span_copied_from_the_passage_is_not_confident():
    reader = LLMReader(ScriptedChat(["two teenage girls cause their parents much concern when they start"]))
    result = reader.read("What happens in the film?", "Kiss and Tell", KISS_AND_TELL)
    assert result.answer and result.answer in KISS_AND_TELL
    assert len(result.answer.split()) > 5 and result.confidence < result.threshold


@pytest.mark.parametrize("reply", ["Kasper Schmeichel", "The father of Kasper Schmeichel.", "NOT FOUND",
                                   "Ruth Calloway", "<|im_end|>"])
def test_replies_that_repeat_the_question_or_are_not_in_the_passage_are_no_answer(reply):
    result = LLMReader(ScriptedChat([reply])).read("Who is the father of Kasper Schmeichel?", "t", SCHMEICHEL)
    assert (result.answer, result.start, result.end, result.confidence) == ("", 0, 0, 0.0)


def test_answer_candidates_prefer_new_names_and_numbers():
    assert answer_candidates("Stanley was founded in 1902.", "When was Stanley founded?")[0] == "1902"
    assert answer_candidates("Timothy Shay Arthur was born in Newburgh, New York.",
                             "Where was Timothy Shay Arthur born?")[0] == "Newburgh, New York"
    assert answer_candidates("It was directed by Richard Wallace", "Who directed Kiss and Tell?")[0] == \
        "Richard Wallace"
    assert answer_candidates("the goalkeeper of the club", "What position does he play?")[0] == \
        "goalkeeper of the club"
    # Runs end at a sentence's end and at a list's second comma; initials do not end them.
    assert "Baring, Magoun" in answer_candidates("It was Baring, Magoun. Both banks.", "Who was it?")
    assert answer_candidates("He was with Rosalind Russell, Jack Hawkins, Richard Beymer", "Who was he with?")[0] \
        in ("Rosalind Russell, Jack Hawkins", "Richard Beymer")
    assert answer_candidates("It was written by J. R. R. Tolkien.", "Who wrote it?")[0] == "J. R. R. Tolkien"


def test_grammar_is_sent_only_to_backends_that_take_one():
    plain, constrained = ScriptedChat(["Peter Schmeichel"]), ScriptedChat(["Peter Schmeichel"], grammar=True)
    LLMReader(plain).read("q?", "t", SCHMEICHEL)
    LLMReader(constrained).read("q?", "t", SCHMEICHEL)
    assert plain.params[0].grammar is None
    grammar = constrained.params[0].grammar
    assert grammar == passage_span_grammar(SCHMEICHEL, "NOT FOUND")
    assert grammar.startswith('root ::= " "? ( "NOT FOUND" | w0 | w1 | w2 | w4 ') and '"(" ( w4 )?' in grammar


def test_gbnf_literals_escape_what_gbnf_would_misread():
    assert gbnf_literal('say "hi"\\ now\n') == '"say \\"hi\\"\\\\ now\\n"'
    assert passage_span_grammar("  ...  ", "NOT FOUND") is None


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=80), st.text(min_size=1, max_size=200), st.booleans())
@example(reply="0:':", passage="0\r'", cut_off=False)  # a draw once gave the span "0\r"
def test_any_reply_gives_a_located_span_or_none(reply, passage, cut_off):
    result = LLMReader(ScriptedChat([])).result_from_reply(reply, passage, (-0.2, -0.4), question="q?",
                                                           cut_off=cut_off)
    assert result.answer == passage[result.start:result.end]
    assert 0.0 <= result.confidence <= 1.0
    assert result.answer == result.answer.strip() and (result.answer or result.confidence == 0.0)
