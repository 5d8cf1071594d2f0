"""Issue #23.1 in the app: the tree badges a node "verified" only when the reader backed it, and
a run saved before that rule (every LLM node "verified", source "llm") is shown honestly."""

from dataclasses import asdict

from desktop.views.reasoning import COL_FATE, ReasoningPanel
from searchain.reasoning.result import (
    DECISION_NO_ANSWER, DECISION_PASS, SOURCE_LLM, SOURCE_LLM_UNVERIFIED, AnswerResult, Branch, Node,
)
from searchain.store.json_codec import _Checked, _lists, result_from_json
from searchain.types import Passage

PASSAGE = Passage("demo", "p1", "Kasper Schmeichel", "Kasper Schmeichel is the son of Peter Schmeichel.")


def _legacy_result() -> AnswerResult:
    """As a run stored before #23 was: reader found nothing, yet badged verified."""
    empty = Node(1, 0, "Who is the father of Kasper Schmeichel?", "Bob Smith", reader_answer="",
                 confidence=0.0, decision=DECISION_PASS, source=SOURCE_LLM, passage=PASSAGE)
    agreed = Node(1, 1, "Who is Kasper's father?", "Peter Schmeichel", reader_answer="Peter Schmeichel",
                  confidence=0.9, decision=DECISION_PASS, source=SOURCE_LLM, passage=PASSAGE)
    return AnswerResult(question="Q?", mode="searchain", final_content="Bob Smith.", answer="Bob Smith",
                        path=[empty, agreed], branches=[Branch(1, "...", [empty, agreed])], rounds=1)


def test_legacy_verified_without_a_reader_answer_is_shown_as_no_answer(qtbot):
    data = _lists(asdict(_legacy_result()))
    reloaded = result_from_json(_Checked(data, "result"))  # an export written before the split
    assert reloaded.path[0].decision == DECISION_PASS  # the stored data is kept as it was
    panel = ReasoningPanel()
    qtbot.addWidget(panel)
    panel.show_result(reloaded)
    assert panel.node_item(1, 0).text(COL_FATE) == "no answer in passage"
    assert panel.node_item(1, 1).text(COL_FATE) == "verified"
    assert "no answer" in panel.node_item(1, 0).toolTip(COL_FATE)
    assert "1 from the LLM, not confirmed" in panel.summary.text()
    assert "1 from the LLM, verified" in panel.summary.text()


def test_new_unconfirmed_decisions_have_their_own_badges(qtbot):
    node = Node(1, 0, "q?", "a", reader_answer="", confidence=0.0, decision=DECISION_NO_ANSWER,
                source=SOURCE_LLM_UNVERIFIED, passage=PASSAGE)
    panel = ReasoningPanel()
    qtbot.addWidget(panel)
    panel.show_result(AnswerResult(question="q?", mode="searchain", final_content="a", answer="a",
                                   path=[node], branches=[Branch(1, "...", [node])], rounds=1))
    assert panel.node_item(1, 0).text(COL_FATE) == "no answer in passage"
