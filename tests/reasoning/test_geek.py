"""GEEK's control flow with a scripted LLM: actions, extraction, exploration, votes, r_max, cancel."""

import pytest

from searchain.errors import Cancelled
from searchain.events import CancelToken
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.events import Done
from searchain.reasoning.result import (
    DECISION_EXTRACTED, DECISION_SELF_ANSWERED, DECISION_UNGROUNDED, SOURCE_IR_EXTRACTED, SOURCE_LLM,
)
from searchain.reasoning.strategies.events import StrategyStep, VotesCounted
from tests.fixtures.reasoning import PASSAGES
from tests.reasoning.strategy_helpers import FixedRetriever, engine

P1, P2, P3 = PASSAGES[0], PASSAGES[1], PASSAGES[2]
QUESTION = "Was the performer of Spirit If... born in the city of the Toronto Coach Terminal?"
QA, QB = "Where was Kevin Drew born?", "What city is Kevin Drew from?"


def options(*pairs):
    return "\n".join(f"[Sub-question {n}]: {q}\n[Pseudo Answer {n}]: {a}" for n, (q, a) in enumerate(pairs, 1))


def act(name):
    return f"[Action]: {name}"


def conclude(answer, why="the facts say so"):
    return f"[Reasoning]: {why}\n[Final Answer]: {answer}"


def geek(llm, retriever=None, **options_):
    return engine(llm, retriever or FixedRetriever([P2, P1, P3]), options={"geek": options_} if options_ else None)


def test_one_branch_extracts_self_answers_and_concludes_yes():
    llm = ScriptedLLM([
        options((QA, "Vancouver")),  # no facts yet: AddDecomp without asking
        act("Retrieve"),
        "[Fact from 1]: Kevin Drew was born in Toronto",
        act("AddDecomp"),
        options(("Is the Toronto Coach Terminal in Toronto?", "yes")),
        act("SelfAnswer"),
        "[Fact]: Yes, it is in Toronto",
        act("FinalAnswer"),
        conclude("yes", "Drew was born in Toronto, where the terminal is"),
    ])
    events = []
    result = geek(llm).answer(QUESTION, mode="geek", on_event=events.append)
    assert llm.remaining == 0 and result.mode == "geek" and result.stop_reason == "finish"
    assert [n.decision for n in result.path] == [DECISION_EXTRACTED, DECISION_SELF_ANSWERED]
    assert [n.source for n in result.path] == [SOURCE_IR_EXTRACTED, SOURCE_LLM]
    assert result.path[0].llm_answer == "Vancouver" and result.path[0].answer == "Kevin Drew was born in Toronto"
    assert result.answer == "yes"
    assert '( "yes" | "no" )' in llm.params[-1].grammar  # an implicit question concludes yes or no
    assert "Vancouver" in llm.calls[2][0]["content"]  # the extractor got the pseudo-answer as a hint
    [ref] = result.references
    assert ref.passage.pid == "p2" and ref.span_text == "Kevin Drew was born in Toronto"
    actions = [e.action for e in events if isinstance(e, StrategyStep)]
    assert actions == ["AddDecomp", "Retrieve", "AddDecomp", "SelfAnswer", "FinalAnswer"]
    assert {e.activity for e in events if type(e).__name__ == "RoundStarted"} == {"choosing the next action"}
    votes = [e for e in events if isinstance(e, VotesCounted)]
    assert votes[0].votes == (("yes", 1),) and not votes[0].tied
    assert result.branches[0].final_content == "yes"
    assert result.branches[0].feedback.splitlines()[0].startswith("AddDecomp: Where was Kevin Drew born?")


def _tied_script(first, second):
    """Two alternatives at the root; ``first``/``second``: (action, reply, answer) per branch."""
    out = [options((QA, "Toronto"), (QB, "Vancouver"))]
    for action, reply, answer in (first, second):
        out += [act(action), reply, act("FinalAnswer"), conclude(answer)]
    return out


def test_tied_vote_goes_to_the_answer_with_more_evidence_even_if_later():
    llm = ScriptedLLM(_tied_script(("SelfAnswer", "[Fact]: Vancouver", "no"),
                                   ("Retrieve", "[Fact from 1]: Kevin Drew was born in Toronto", "yes")))
    events = []
    result = geek(llm, branches=2).answer(QUESTION, mode="geek", on_event=events.append)
    first, second = result.branches
    assert (first.final_content, second.final_content) == ("no", "yes")
    assert second.parent is None  # forked at the root, before any node
    [votes] = [e for e in events if isinstance(e, VotesCounted)]
    assert votes.tied and dict(votes.votes) == {"no": 1, "yes": 1} and votes.winner == "yes"
    assert result.answer == "yes" and result.path == second.nodes and result.rounds == 2


def test_tied_vote_with_equal_evidence_goes_to_the_earliest_branch():
    llm = ScriptedLLM(_tied_script(("SelfAnswer", "[Fact]: Vancouver", "no"),
                                   ("SelfAnswer", "[Fact]: Toronto", "yes")))
    result = geek(llm, branches=2).answer(QUESTION, mode="geek")
    assert result.answer == "no" and result.path == result.branches[0].nodes


def test_leaves_limit_fork_depth_r_max_and_majority():
    me = "[Fact]: something"
    llm = ScriptedLLM([
        options(("Qa?", "a"), ("Qb?", "b")),  # branch 1 forks branch 2 at the root
        act("SelfAnswer"), me, act("AddDecomp"),
        options(("Qc?", "c"), ("Qd?", "d"), ("Qe?", "e")),  # room for one more leaf: branch 3 takes Qd
        act("SelfAnswer"), me, conclude("yes"),  # 2 sub-questions = r_max: concluded without asking
        act("SelfAnswer"), me, act("AddDecomp"),  # branch 2 ...
        options(("Qf?", "f")),  # ... may not fork any more: asked for one sub-question
        act("SelfAnswer"), me, conclude("yes"),
        act("SelfAnswer"), me, conclude("no"),  # branch 3, already at r_max after its sub-question
    ])
    events = []
    e = engine(llm, FixedRetriever([P1]), r_max=2, options={"geek": {"branches": 3, "max_leaves": 3}})
    result = e.answer(QUESTION, mode="geek", on_event=events.append)
    assert llm.remaining == 0
    assert [b.final_content for b in result.branches] == ["yes", "yes", "no"]
    assert result.branches[2].parent == (1, 0)  # forked after branch 1's first node
    assert [n.query for n in result.branches[2].nodes] == ["Qd?"]
    assert "opt2" in llm.params[4].grammar and "opt2" not in llm.params[11].grammar
    [votes] = [e for e in events if isinstance(e, VotesCounted)]
    assert votes.votes == (("yes", 2), ("no", 1)) and not votes.tied
    assert result.stop_reason == "r_max" and [n.query for n in result.path] == ["Qa?", "Qc?"]


def test_a_sub_question_the_line_asked_already_is_dropped_and_the_line_concludes():
    llm = ScriptedLLM([
        options((QA, "Vancouver")),
        act("Retrieve"),
        "[Fact from 1]: Kevin Drew was born in Toronto",
        act("AddDecomp"),
        options((QA.upper(), "Toronto")),  # the same sub-question again: nothing new to learn
        conclude("yes"),
    ])
    events = []
    result = geek(llm).answer(QUESTION, mode="geek", on_event=events.append)
    assert llm.remaining == 0 and result.answer == "yes"
    assert [n.query for n in result.path] == [QA]  # one retrieval, not a second of the same
    steps = [e.detail for e in events if isinstance(e, StrategyStep) and e.action == "AddDecomp"]
    assert steps[-1] == f"asked already: {QA.upper()}; concluding"


def test_a_conclusion_the_passages_cannot_cite_stays_the_short_answer():
    said = "The singer of that album grew up somewhere in western Canada"
    llm = ScriptedLLM([
        options((QA, "Vancouver")),
        act("Retrieve"),
        "[Fact from 1]: Kevin Drew was born in Toronto",
        act("FinalAnswer"),
        conclude(said),
    ])
    result = engine(llm, FixedRetriever([P2, P1, P3]), concise_answer=False).answer(
        "Where did the singer of Spirit If... grow up?", mode="geek")
    # The final content falls back to the path composed with its marks (it starts with the
    # sub-question); the answer is still what the strategy concluded, not that first step.
    assert result.final_content.startswith(QA) and "[1]" in result.final_content
    assert result.answer == said


def test_unknown_extraction_keeps_the_guess_and_unreadable_actions_default_safely():
    llm = ScriptedLLM([
        options((QA, "Toronto")),
        "hmm, not sure",  # no action named: look it up (the first choice), never a guess
        "[Fact]: Unknown",
        "I think we are done: FinalAnswer",
        conclude("yes"),
    ], grammar=False)
    result = geek(llm).answer(QUESTION, mode="geek")
    [node] = result.path
    assert node.decision == DECISION_UNGROUNDED and node.answer == "Toronto" and node.passage is None
    assert result.references == [] and result.answer == "yes"


def test_cancel_mid_step_raises_without_an_answer():
    token = CancelToken()
    llm = ScriptedLLM([options((QA, "Toronto")), act("Retrieve"), "[Fact from 1]: Toronto", act("FinalAnswer"),
                       conclude("yes")])
    seen = []

    def on_event(event):
        seen.append(event)
        if isinstance(event, StrategyStep) and event.action == "Retrieve":
            token.cancel()

    with pytest.raises(Cancelled):
        geek(llm).answer(QUESTION, mode="geek", on_event=on_event, cancel=token)
    assert not any(isinstance(e, Done) for e in seen) and llm.remaining == 2


def test_bad_branch_count_is_refused():
    with pytest.raises(ValueError, match="branches"):
        geek(ScriptedLLM([]), branches=0).answer(QUESTION, mode="geek")


@pytest.mark.parametrize("chars, field_chars, cap", [(300, None, 300), (80, None, 80), (300, 50, 50)])
def test_the_reasoning_before_a_final_answer_is_capped_by_the_setting(chars, field_chars, cap):
    llm = ScriptedLLM([options((QA, "Toronto")), act("Retrieve"), "[Fact from 1]: Toronto",
                       act("FinalAnswer"), conclude("yes")])
    options_ = {"geek": {"field_chars": field_chars}} if field_chars else None
    result = engine(llm, FixedRetriever([P2, P1, P3]), options=options_,
                    geek_reasoning_chars=chars).answer(QUESTION, mode="geek")
    conclusion = llm.params[-1].grammar
    assert f"reasoning ::= lead qchar{{0,{cap - 1}}}" in conclusion and result.answer == "yes"


def test_a_conclusion_stated_as_a_sentence_is_cut_to_the_words_that_answer():
    said = "The singer of that album grew up somewhere in western Canada"
    llm = ScriptedLLM([options((QA, "Vancouver")), act("Retrieve"), "[Fact from 1]: Kevin Drew was born in Toronto",
                       act("FinalAnswer"), conclude(said), "western Canada"])
    result = geek(llm).answer("Where did the singer of Spirit If... grow up?", mode="geek")
    assert result.answer == "western Canada" and said in llm.calls[-1][-1]["content"]


@pytest.mark.parametrize("setting", [1, 2, 4])
def test_the_alternatives_per_decomposition_come_from_the_settings(setting):
    llm = ScriptedLLM(_tied_script(("SelfAnswer", "[Fact]: Vancouver", "no"),
                                   ("Retrieve", "[Fact from 1]: Kevin Drew was born in Toronto", "yes")))
    result = engine(llm, FixedRetriever([P2, P1, P3]), geek_branches=setting).answer(QUESTION, mode="geek")
    first_decomposition = llm.params[0].grammar
    assert f"[Sub-question {setting}]" in first_decomposition
    assert f"[Sub-question {setting + 1}]" not in first_decomposition
    # the model wrote two alternatives: a second branch only where the setting allows one
    assert len(result.branches) == min(setting, 2)
