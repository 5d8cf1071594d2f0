"""GenGround and GEEK answers are stored, reopened, exported and shown like SearChain's."""

import copy
import json

import pytest

from searchain.cli.ask import MODES as ASK_MODES, render_text, result_to_json
from searchain.cli.eval import MODES as EVAL_MODES
from searchain.config import Settings
from searchain.eval.datasets import EvalQuestion
from searchain.eval.runner import score_question
from searchain.llm.fakes.scripted import ScriptedLLM
from searchain.reasoning.strategies.view import describe, describe_event, votes
from searchain.settings_schema import CHOICES
from searchain.store import ConversationStore, RunInfo
from searchain.store.markdown import answer_markdown
from tests.fixtures.reasoning import PASSAGES, Q1, Q2, QUESTION
from tests.reasoning.strategy_helpers import FILLER, FixedRetriever, engine, ranked
from tests.reasoning.test_geek import QUESTION as YESNO, _tied_script

P1, P2 = PASSAGES[0], PASSAGES[1]


def genground_result():
    retriever = FixedRetriever(FILLER, {Q1: ranked((4, P1)), Q2: ranked((0, P2))})
    llm = ScriptedLLM([
        f"[Sub-question]: {Q1}\n[Answer]: Kevin Drew", "[Evidence]: Empty",
        "[Evidence 2]: the debut solo album by Kevin Drew\n[Revised Answer]: Kevin Drew",
        f"[Sub-question]: {Q2}\n[Answer]: Vancouver", "[Evidence 1]: born in Toronto\n[Revised Answer]: Toronto",
        "[Final Answer]: Toronto",
    ])
    return engine(llm, retriever).answer(QUESTION, mode="genground")


def geek_result(events=None):
    llm = ScriptedLLM(_tied_script(("SelfAnswer", "[Fact]: Vancouver", "no"),
                                   ("Retrieve", "[Fact from 1]: Kevin Drew was born in Toronto", "yes")))
    e = engine(llm, FixedRetriever([P2, P1]), options={"geek": {"branches": 2}})
    return e.answer(YESNO, mode="geek", on_event=events.append if events is not None else None)


@pytest.mark.parametrize("make", [genground_result, geek_result])
def test_strategy_answers_reopen_and_import_exactly(tmp_path, make):
    result = make()
    original = copy.deepcopy(result)
    run = RunInfo.from_settings(Settings())
    path = tmp_path / "c.db"
    with ConversationStore.open(path) as store:
        cid = store.create_conversation("strategies")
        store.add_user_message(cid, result.question)
        mid = store.begin_answer(cid, run)
        store.finish_answer(mid, result)
    with ConversationStore.open(path) as store:
        reopened = store.get_message(mid).result
        assert reopened == original
        assert describe(reopened) == describe(original)  # the panel reads the same after reopening
        (new_id,) = store.import_json(json.loads(json.dumps(store.export_json([cid]))))
        assert store.get_conversation(new_id).messages[1].result == original
    markdown = answer_markdown(original)
    assert all(f"[{r.mark}]" in markdown for r in original.references)


def test_genground_text_shows_the_batches_tried():
    text = render_text(genground_result())
    assert "Hop 1: Who is the performer of Spirit If...?" in text
    assert "Batch 1 (Filler 1; Filler 2; Filler 3): Empty" in text
    assert "Batch 2 (Filler 4; Spirit If...; Filler 6): cited document 2, Spirit If..." in text
    assert "generated: Vancouver; kept: Toronto [grounded]" in text
    assert "[1] Spirit If... (test:p1)" in text and "**Kevin Drew**" in text


def test_geek_text_shows_branches_actions_and_the_tied_vote():
    events = []
    result = geek_result(events)
    lines = describe(result)
    assert lines[0] == "GEEK: 2 branch(es), stopped: finish"
    assert "Branch 2 (from the question): answer yes" in lines
    assert any(line.startswith("  Retrieve: What city is Kevin Drew from? -> Kevin Drew was born in Toronto")
               for line in lines)
    assert lines[-1].startswith("Votes: no 1, yes 1 -> yes (tied")
    assert votes(result) == [("no", 1), ("yes", 1)]
    live = [describe_event(e) for e in events if describe_event(e)]
    assert live[-1] == lines[-1]  # the live log and the reopened view agree on the vote
    assert json.loads(json.dumps(result_to_json(result)))["mode"] == "geek"


def test_modes_are_offered_everywhere():
    for mode in ("genground", "geek"):
        assert mode in ASK_MODES and mode in EVAL_MODES and mode in CHOICES["reasoning.mode"]


def test_eval_scores_a_strategy_without_a_first_round_comparison():
    outcome = score_question(EvalQuestion("q1", QUESTION, ("Toronto",)), genground_result())
    assert outcome.cover_em == 1.0 and outcome.first_round_right is None
    # hop 1: evidence confirmed the model's answer (verified); hop 2: evidence revised it
    assert outcome.sources["ir_grounded"] == 1 and outcome.sources["llm_verified"] == 1


def geek_forked_late_result():
    """Branch 2 forks after branch 1's first node and wins the tie on evidence: its path starts
    with a node stored in branch 1."""
    from tests.reasoning.test_geek import act, conclude, options

    llm = ScriptedLLM([
        options(("Who made Spirit If...?", "Kevin Drew")), act("SelfAnswer"), "[Fact]: Kevin Drew",
        act("AddDecomp"), options(("Where was he born?", "Vancouver"), ("Where is he from?", "Toronto")),
        act("SelfAnswer"), "[Fact]: Vancouver", act("FinalAnswer"), conclude("no"),
        act("Retrieve"), "[Fact from 1]: Kevin Drew was born in Toronto", act("FinalAnswer"), conclude("yes"),
    ])
    e = engine(llm, FixedRetriever([P2]), options={"geek": {"branches": 2}})
    return e.answer(YESNO, mode="geek")


def test_a_winning_branch_that_forked_late_reopens_with_its_inherited_path(tmp_path):
    result = geek_forked_late_result()
    first, second = result.branches
    assert second.parent == (1, 0) and result.answer == "yes"
    assert result.path == [first.nodes[0], second.nodes[0]] and result.path[0] is first.nodes[0]
    assert [r.mark for r in result.references] == [2]  # the self-answered step has no passage
    original = copy.deepcopy(result)
    with ConversationStore.open(tmp_path / "c.db") as store:
        cid = store.create_conversation("late fork")
        store.add_user_message(cid, result.question)
        mid = store.begin_answer(cid, RunInfo.from_settings(Settings()))
        store.finish_answer(mid, result)
    with ConversationStore.open(tmp_path / "c.db") as store:
        assert store.get_message(mid).result == original
