"""The ``passages`` final answer with the path's checked steps in view (``reasoning.final_steps``).

The draft reads the question's passages as plain RAG does; when the path adds no passage it used
to be the final answer as it stood, even where the chain had found, in one of those passages, an
answer the draft did not conclude. With the steps listed after the passages, the final answer
sees what the chain checked; "disagree" asks again only where the path's last checked answer is
not the draft's."""

from dataclasses import replace

import pytest

from searchain.config import ReasoningSettings
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.engine import SearChainEngine
from searchain.reasoning.inmemory import InMemoryRetriever, LexicalReader
from searchain.reasoning.tracing import path_disagrees
from tests.fixtures.reasoning import PASSAGES, Q1, Q3, QUESTION, HashingEmbedder, chain

# Steps whose passages (Spirit If..., Toronto Coach Terminal) are among the question's own.
OWN_STEPS = chain((Q1, "Kevin Drew"), (Q3, "Toronto Coach Terminal"))
AGREES = "Greyhound buses leave from the Toronto Coach Terminal [3]. So the final answer is Toronto Coach Terminal."
DIFFERS = "Kevin Drew lives in Toronto [1]. So the final answer is Union Station."
FINAL = "Greyhound buses leave from the Toronto Coach Terminal [2]. So the final answer is Toronto Coach Terminal."


def _answer(draft: str, final_steps: str, chain_replies=(OWN_STEPS,), question: str = QUESTION):
    """The engine's result and the prompts of its RAG-style answers (the draft, then any final)."""
    llm = ScriptedLLM([draft, *chain_replies, FINAL])  # written whole: the draft comes first
    engine = SearChainEngine(llm, InMemoryRetriever(list(PASSAGES)), LexicalReader(), embedder=HashingEmbedder(),
                             settings=replace(ReasoningSettings(), draft_answer=True, final_steps=final_steps))
    result = engine.answer(question)
    answers = [c[0]["content"] for c in llm.calls if c[0]["content"].startswith("Answer the question")]
    return result, answers


def test_where_the_draft_missed_what_the_chain_checked_the_final_answer_sees_the_steps():
    result, (draft, final) = _answer(DIFFERS, "disagree")
    head, steps = final.split("\nSteps already checked against these passages:\n")
    assert draft.startswith(head) and draft.split("\n\nQuestion:")[1] == final.split("\n\nQuestion:")[1]
    titles = {line.split(":")[0].split("] ", 1)[1]: int(line[1:line.index("]")])
              for line in head.splitlines() if line.startswith("[")}
    listed = [line for line in steps.splitlines() if line.startswith("- ")]
    assert listed == [f"- {Q1} Kevin Drew [{titles['Spirit If...']}]",
                      f"- {Q3} Toronto Coach Terminal [{titles['Toronto Coach Terminal']}]"]
    assert result.answer == "Toronto Coach Terminal" and "final" in result.tokens_by_phase


@pytest.mark.parametrize("draft, final_steps", [(AGREES, "disagree"), (DIFFERS, "off")],
                         ids=["the draft concluded it", "steps off"])
def test_otherwise_the_draft_stays_the_final_answer_with_no_second_call(draft, final_steps):
    result, answers = _answer(draft, final_steps)
    assert len(answers) == 1 and "final" not in result.tokens_by_phase
    assert "Steps already checked" not in answers[0]
    assert result.answer == ("Toronto Coach Terminal" if draft is AGREES else "Union Station")


def test_always_asks_again_with_the_steps_even_where_the_draft_agrees():
    result, (draft, final) = _answer(AGREES, "always")
    assert "Steps already checked" in final and "Steps already checked" not in draft
    assert result.answer == "Toronto Coach Terminal"


def test_disagreement_is_the_last_checked_answer_missing_from_the_stated_one():
    from searchain.reasoning.result import DECISION_COMPLETED, SOURCE_IR_COMPLETED, Node
    from searchain.types import Passage

    node = Node(1, 0, "Where was he born?", None, unsolved=True, reader_answer="Lisk", confidence=0.9,
                decision=DECISION_COMPLETED, source=SOURCE_IR_COMPLETED, passage=Passage("c", "p", "Vance", "born in Lisk"))
    assert path_disagrees("He worked in Varrow. So the final answer is Varrow.", [node])
    assert not path_disagrees("So the final answer is Lisk, in the Ellin Valley.", [node])
    assert not path_disagrees("So the final answer is Varrow.", [])  # nothing checked
    unchecked = replace(node, decision="unchecked", passage=None)
    assert not path_disagrees("So the final answer is Varrow.", [unchecked])


def test_an_unknown_choice_is_refused_before_any_model_call():
    from searchain.errors import ConfigError

    llm = ScriptedLLM([AGREES, OWN_STEPS])
    engine = SearChainEngine(llm, InMemoryRetriever(list(PASSAGES)), LexicalReader(), embedder=HashingEmbedder(),
                             settings=replace(ReasoningSettings(), final_steps="sometimes"))
    with pytest.raises(ConfigError, match="final_steps"):
        engine.answer(QUESTION)
    assert llm.calls == []


# "found": IR answered the chain's last step ([Unsolved Query] completed from a passage).
IR_LAST = chain((Q1, "Kevin Drew"), (Q3, None), final=None)
GOES_ON = "So the final answer is Toronto Coach Terminal [2]."  # the chain after IR's answer


def _found(draft: str, question: str = QUESTION, final_steps: str = "found"):
    # the chain goes on after IR's answer, and asks once more
    return _answer(draft, final_steps, (IR_LAST, GOES_ON, FINAL), question)


def test_found_asks_again_where_ir_answered_the_last_step_and_the_draft_lacks_it():
    result, answers = _found(DIFFERS)
    assert result.path[-1].source == "ir_completed"
    assert len(answers) == 2 and "Steps already checked" in answers[1]
    assert result.answer == "Toronto Coach Terminal"
    off, answers = _found(DIFFERS, final_steps="off")
    assert len(answers) == 1 and off.answer == "Union Station"  # the draft, as before


def test_found_leaves_the_draft_where_the_model_answered_the_last_step_itself():
    # Both steps the model's own, verified: "disagree" would ask again here, "found" does not.
    result, answers = _answer(DIFFERS, "found")
    assert len(answers) == 1 and result.answer == "Union Station" and "final" not in result.tokens_by_phase


def test_found_leaves_a_yes_no_question_to_the_draft():
    # A yes/no (or choice) question's chain ends on one side's fact, which proves nothing.
    question = "Do Greyhound buses in the birthplace of the performer of Spirit If... leave from Union Station?"
    result, answers = _found(DIFFERS, question)
    assert result.path[-1].source == "ir_completed" and len(answers) == 1


def test_ir_found_otherwise_reads_only_ir_answered_last_steps():
    from searchain.reasoning.result import (DECISION_COMPLETED, DECISION_PASS, SOURCE_IR_COMPLETED,
                                            SOURCE_LLM_VERIFIED, Node)
    from searchain.reasoning.tracing import ir_found_otherwise
    from searchain.types import Passage

    passage = Passage("c", "p", "Vance", "He was born in Lisk.")
    found = Node(1, 0, "Where was he born?", None, unsolved=True, reader_answer="Lisk", confidence=0.9,
                 decision=DECISION_COMPLETED, source=SOURCE_IR_COMPLETED, passage=passage)
    believed = Node(1, 0, "Where was he born?", "Lisk", reader_answer="Lisk", confidence=0.9,
                    decision=DECISION_PASS, source=SOURCE_LLM_VERIFIED, passage=passage)
    assert ir_found_otherwise("He worked in Varrow. So the final answer is Varrow.", [found])
    assert not ir_found_otherwise("So the final answer is Lisk.", [found])
    assert not ir_found_otherwise("So the final answer is Varrow.", [believed])
    assert not ir_found_otherwise("So the final answer is Varrow.", [found, believed])  # the last step decides
