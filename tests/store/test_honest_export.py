"""Issue #23.1/#23.8 in exports: the Markdown export says how each step was checked (honestly,
also for runs stored before), and the JSON export carries the tokens per phase."""

from dataclasses import asdict

import pytest

from searchain.errors import StoreError
from searchain.reasoning.result import (
    DECISION_NO_ANSWER, DECISION_PASS, SOURCE_LLM, SOURCE_LLM_UNVERIFIED, AnswerResult, Node,
)
from searchain.store.json_codec import _Checked, _lists, result_from_json
from searchain.store.markdown import answer_markdown
from searchain.types import Passage

PASSAGE = Passage("demo", "p1", "Kasper Schmeichel", "Kasper Schmeichel is the son of Peter Schmeichel.")


def _result(decision, source, reader_answer) -> AnswerResult:
    node = Node(1, 0, "Who is the father of Kasper Schmeichel?", "Bob Smith", reader_answer=reader_answer,
                confidence=0.0, decision=decision, source=source, passage=PASSAGE)
    return AnswerResult(question="Q?", mode="searchain", final_content="Bob Smith.", answer="Bob Smith",
                        path=[node], rounds=1, prompt_tokens=30, completion_tokens=7,
                        tokens_by_phase={"chain": [20, 5], "reader": [10, 2]})


def test_markdown_names_each_steps_fate_honestly():
    new = answer_markdown(_result(DECISION_NO_ANSWER, SOURCE_LLM_UNVERIFIED, ""))
    legacy = answer_markdown(_result(DECISION_PASS, SOURCE_LLM, ""))  # stored before #23: "verified"
    for md in (new, legacy):
        assert "Reasoning path:" in md
        assert "1. Who is the father of Kasper Schmeichel? — Bob Smith *(no answer in passage)*" in md
        assert "(verified)" not in md


def test_json_export_keeps_tokens_per_phase_and_reads_old_files_without_them():
    data = _lists(asdict(_result(DECISION_NO_ANSWER, SOURCE_LLM_UNVERIFIED, "")))
    assert result_from_json(_Checked(data, "result")).tokens_by_phase == {"chain": [20, 5], "reader": [10, 2]}
    del data["tokens_by_phase"]
    assert result_from_json(_Checked(data, "result")).tokens_by_phase == {}
    data["tokens_by_phase"] = {"chain": [1]}
    with pytest.raises(StoreError, match=r"tokens_by_phase\.chain must be two whole numbers"):
        result_from_json(_Checked(data, "result"))
