"""The answer alone (``reasoning.concise_answer``, #37): a stated answer that is a sentence is cut
to the span of it that answers the question, by the LLM reader's prompt over that sentence; the
final content keeps the sentence; references highlight the short answer in their passages."""

from dataclasses import replace

import pytest

from searchain.config import ReasoningSettings
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.concise import PHASE_CONCISE, stated_sentence
from searchain.reasoning.engine import SearChainEngine
from tests.fixtures.reasoning import Q1, Q3, QUESTION, HashingEmbedder, chain

SENTENCE = "Greyhound buses there leave from the Toronto Coach Terminal"
RAG_TEXT = f"The buses leave from the terminal [1][2][3]. So the final answer is {SENTENCE}."


def _engine(llm, retriever, reader=None, **settings):
    return SearChainEngine(llm, retriever, reader, embedder=HashingEmbedder(),
                           settings=replace(ReasoningSettings(), **settings))


def test_a_stated_sentence_is_cut_to_the_span_that_answers(retriever):
    llm = ScriptedLLM([RAG_TEXT, "Toronto Coach Terminal"])
    result = _engine(llm, retriever).answer(QUESTION, mode="rag")
    assert result.answer == "Toronto Coach Terminal"
    assert SENTENCE in result.final_content  # the user still reads the sentence the model wrote
    # The second call is the reader's: the question, the stated sentence as its passage, and
    # decoding held to that sentence's spans.
    asked = llm.calls[1][-1]["content"]
    assert SENTENCE in asked and QUESTION in asked and "The buses leave" not in asked
    grammar = llm.params[1].grammar
    assert '"Greyhound"' in grammar and '"Coach"' in grammar and '"terminal"' not in grammar
    assert result.costs_by_phase[PHASE_CONCISE]["calls"] == 1
    cited = [r for r in result.references if r.passage.title == "Toronto Coach Terminal"]
    assert cited and cited[0].answer == "Toronto Coach Terminal"
    assert cited[0].span_text.lower() == "toronto coach terminal"  # the sentence is in no passage


def test_off_the_sentence_stays_the_answer_and_no_call_is_made(retriever):
    llm = ScriptedLLM([RAG_TEXT])
    result = _engine(llm, retriever, concise_answer=False).answer(QUESTION, mode="rag")
    assert result.answer == SENTENCE and len(llm.calls) == 1


@pytest.mark.parametrize("text", [
    "So the final answer is Toronto Coach Terminal [3].",  # short already
    "Greyhound buses in Toronto leave from the Toronto Coach Terminal [3].",  # no stated answer
    "The buses leave from the terminal [3]. So the final answer is.",  # stated nothing
])
def test_answers_that_are_short_or_not_stated_are_left_alone(retriever, text):
    llm = ScriptedLLM([text])
    result = _engine(llm, retriever).answer(QUESTION, mode="rag")
    assert len(llm.calls) == 1 and PHASE_CONCISE not in result.costs_by_phase


def test_when_the_reader_finds_no_span_the_sentence_stays(retriever):
    llm = ScriptedLLM([RAG_TEXT, "NOT FOUND"])
    result = _engine(llm, retriever).answer(QUESTION, mode="rag")
    assert result.answer == SENTENCE and len(llm.calls) == 2


def test_searchain_cuts_the_final_answer_after_the_chain(retriever, reader):
    steps = chain((Q1, "Kevin Drew"), (Q3, "Toronto Coach Terminal"))
    llm = ScriptedLLM([RAG_TEXT, steps, "Toronto Coach Terminal"])  # draft (a whole chain: first), chain, cut
    result = _engine(llm, retriever, reader).answer(QUESTION)
    assert result.answer == "Toronto Coach Terminal" and SENTENCE in result.final_content
    assert len(llm.calls) == 3 and result.costs_by_phase[PHASE_CONCISE]["calls"] == 1


def test_what_counts_as_a_stated_sentence():
    assert stated_sentence(RAG_TEXT) == SENTENCE
    assert stated_sentence("So the answer is: Kate Millett attended Oxford [2].") == "Kate Millett attended Oxford"
    assert stated_sentence("So the final answer is Toronto Coach Terminal.") is None
    assert stated_sentence("So the final answer is The City of Newcastle.") is None  # a name
    assert stated_sentence("Kate Millett attended Oxford University, as passage 2 says.") is None


def test_a_comparison_that_names_one_option_is_cut_to_it(retriever):
    # The answer is one of the question's own options: the reader's "says something the
    # question does not" rule must not throw it away here.
    question = "Who was born first, Erika Jayne or Marco Da Silva?"
    text = "Erika Jayne was born in 1971 [1]. So the final answer is Erika Jayne was born first."
    llm = ScriptedLLM([text, "Erika Jayne"])
    result = _engine(llm, retriever).answer(question, mode="rag")
    assert result.answer == "Erika Jayne"


def test_a_reply_that_keeps_the_whole_sentence_changes_nothing(retriever):
    llm = ScriptedLLM([RAG_TEXT, SENTENCE])
    assert _engine(llm, retriever).answer(QUESTION, mode="rag").answer == SENTENCE


@pytest.mark.parametrize("reply", ["Greyhound", "there", "from the"])
def test_a_span_of_function_words_only_is_no_answer(retriever, reply):
    llm = ScriptedLLM([RAG_TEXT, reply])  # "The" was a real cut of a GEEK sentence
    expected = "Greyhound" if reply == "Greyhound" else SENTENCE
    assert _engine(llm, retriever).answer(QUESTION, mode="rag").answer == expected


def test_a_sentence_naming_both_options_of_a_choice_is_left_whole(retriever):
    # Which option answers lies in the comparison's words ("older", "younger"), which a copied
    # span cannot weigh: the 1.5B model copied "Annie Morton" here. No call is made.
    question = "Who is older, Annie Morton or Terry Richardson?"
    text = "So the final answer is Terry Richardson is older than Annie Morton."
    llm = ScriptedLLM([text])
    result = _engine(llm, retriever).answer(question, mode="rag")
    assert result.answer == "Terry Richardson is older than Annie Morton" and len(llm.calls) == 1


def test_the_options_of_a_choice_question():
    from searchain.reasoning.concise import question_options

    assert question_options("Who is older, Annie Morton or Terry Richardson?") == ["Annie Morton", "Terry Richardson"]
    assert question_options("Which formed first, Cake, Blur, or The Black Keys?") == ["Cake", "Blur", "The Black Keys"]
    assert question_options("Were Scott Derrickson and Ed Wood of the same nationality?") == []
