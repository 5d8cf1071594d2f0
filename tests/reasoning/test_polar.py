"""Yes or no: the short answer to a yes/no question (``reasoning/polar.py``)."""

import pytest

from searchain.reasoning.polar import is_polar, polar_answer


@pytest.mark.parametrize("question, stated, expected", [
    ("Are Yingkou and Fuding the same level of city?", "Yingkou and Fuding are not the same level of city", "no"),
    ("Were Scott Derrickson and Ed Wood of the same nationality?", "They were both American", "yes"),
    ("Is the Laleli Mosque in Istanbul?", "Yes, the Laleli Mosque is in Istanbul", "yes"),
    ("Did both films come out in 1995?", "No, only one did", "no"),
    ("Do the two bands share a member?", "The bands don't share a member", "no"),
    ("Are both genera plants?", "False", "no"),
    ("Are both genera plants?", "True", "yes"),
    ("Were they born in different countries?", "Neither was born abroad", "no"),
])
def test_a_yes_no_question_gets_yes_or_no_from_the_words(question, stated, expected):
    assert polar_answer(question, stated) == expected


@pytest.mark.parametrize("question", [
    "Who is older, Annie Morton or Terry Richardson?",  # a choice: a name answers
    "Is Mount Everest or K2 taller?",
    "Which band has more members?",
    "What government position was held by the woman?",
])
def test_other_questions_keep_their_answer(question):
    assert not is_polar(question) and polar_answer(question, "Terry Richardson is not older") is None


def test_nothing_stated_stays_nothing():
    assert polar_answer("Is it?", "") is None and polar_answer("Is it?", " . ") is None


def test_the_engine_answers_a_yes_no_question_yes_or_no_and_keeps_the_sentence():
    from dataclasses import replace

    from searchain.config import ReasoningSettings
    from searchain.llm.fakes.scripted import ScriptedLLM
    from searchain.reasoning.engine import SearChainEngine
    from searchain.reasoning.inmemory import InMemoryRetriever
    from tests.fixtures.reasoning import PASSAGES

    said = "Kevin Drew and the terminal are not in the same city [1]. So the final answer is they are not in the same city."
    llm = ScriptedLLM([said])
    engine = SearChainEngine(llm, InMemoryRetriever(list(PASSAGES)), None,
                             settings=replace(ReasoningSettings(), mode="rag"))
    result = engine.answer("Is Kevin Drew from the same city as the Toronto Coach Terminal?", mode="rag")
    assert result.answer == "no" and "not in the same city" in result.final_content
    assert len(llm.calls) == 1  # no model call for the cut


def test_a_reply_that_states_no_answer_is_not_guessed_from():
    from dataclasses import replace

    from searchain.config import ReasoningSettings
    from searchain.llm.fakes.scripted import ScriptedLLM
    from searchain.reasoning.engine import SearChainEngine
    from searchain.reasoning.inmemory import InMemoryRetriever
    from tests.fixtures.reasoning import PASSAGES

    rambling = "Kevin Drew wrote songs [1]. The terminal serves buses [2]."
    engine = SearChainEngine(ScriptedLLM([rambling]), InMemoryRetriever(list(PASSAGES)), None,
                             settings=replace(ReasoningSettings(), mode="rag"))
    result = engine.answer("Is Kevin Drew from the same city as the Toronto Coach Terminal?", mode="rag")
    assert result.answer not in ("yes", "no")
