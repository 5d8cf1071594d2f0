"""The eval report's arithmetic on hand-made AnswerResults whose right figures are known.

The answerer here replays prepared results (the engine itself is exercised end-to-end in
test_runner_e2e.py); what is under test is scoring and aggregation.
"""

import json

import pytest

from searchain.errors import Cancelled, ModelError
from searchain.events import CancelToken
from searchain.eval.runner import QuestionEvaluated, first_round_answer, prediction_text, run_eval
from searchain.reasoning.result import (
    SOURCE_IR_COMPLETED,
    SOURCE_IR_CORRECTED,
    SOURCE_LLM,
    SOURCE_LLM_UNVERIFIED,
    SOURCE_LLM_VERIFIED,
    AnswerResult,
    Branch,
    Node,
)


def _node(source):
    return Node(round=1, position=0, query="q", llm_answer="a", source=source)


def _result(question, answer, first_final, sources, rounds, tokens):
    branches = [Branch(round=1, raw_text="...", final_content=first_final)] if first_final is not None else []
    return AnswerResult(question=question, mode="searchain", final_content=f"{answer} [1]", answer=answer,
                        path=[_node(s) for s in sources], branches=branches, rounds=rounds,
                        prompt_tokens=tokens[0], completion_tokens=tokens[1])


class Replay:
    def __init__(self, results):
        self.results = results
        self.calls = []

    def answer(self, question, *, mode, cancel=None):
        self.calls.append((question, mode))
        result = self.results[question]
        if isinstance(result, Exception):
            raise result
        return result


@pytest.fixture
def dataset(tmp_path):
    rows = [
        {"id": "q1", "question": "Q1?", "answer": "Paris", "answer_aliases": ["Paris, France"], "paragraphs": []},
        {"id": "q2", "question": "Q2?", "answer": "1902", "paragraphs": []},
        {"id": "q3", "question": "Q3?", "answer": "Stanley", "paragraphs": []},
        {"id": "q4", "question": "Q4?", "answer": "blue whale", "paragraphs": []},
    ]
    path = tmp_path / "mini.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


def test_report_arithmetic(dataset):
    replay = Replay({
        # right first, right final
        "Q1?": _result("Q1?", "It is Paris", "Paris [1]", [SOURCE_LLM_VERIFIED, SOURCE_LLM_UNVERIFIED], 1, (100, 10)),
        # right first, IR made it wrong
        "Q2?": _result("Q2?", "1903", "founded 1902", [SOURCE_LLM_VERIFIED, SOURCE_IR_CORRECTED], 2, (300, 30)),
        # wrong first, IR made it right
        # (a node with the plain pre-split "llm" source that IR never verified counts as unverified)
        "Q3?": _result("Q3?", "Stanley", "Bismarck", [SOURCE_IR_COMPLETED, SOURCE_LLM], 3, (500, 50)),
        "Q4?": ModelError("model crashed"),
    })
    events = []
    report = run_eval(replay, dataset, mode="searchain", on_event=events.append)
    assert replay.calls == [("Q1?", "searchain"), ("Q2?", "searchain"), ("Q3?", "searchain"), ("Q4?", "searchain")]
    assert report.questions == 4 and report.errors == 1
    assert report.cover_em == pytest.approx(2 / 4)
    lo, hi = report.cover_em_ci95  # 4 questions, 2 right: the interval spans most of [0, 1]
    assert lo <= 0.25 and hi >= 0.75
    # F1: Q1 "it is paris" vs "paris": P 1/3 R 1 -> 0.5; Q2 0; Q3 1; Q4 0
    assert report.f1 == pytest.approx((0.5 + 0 + 1 + 0) / 4)
    assert report.nodes_on_paths == 6
    assert report.source_shares == pytest.approx({SOURCE_LLM_VERIFIED: 2 / 6, SOURCE_LLM_UNVERIFIED: 2 / 6,
                                                  SOURCE_IR_CORRECTED: 1 / 6, SOURCE_IR_COMPLETED: 1 / 6})
    assert report.avg_rounds == pytest.approx((1 + 2 + 3 + 0) / 4)
    assert report.prompt_tokens_per_question == pytest.approx(900 / 4)
    assert report.completion_tokens_per_question == pytest.approx(90 / 4)
    assert report.first_round_right == 2
    assert report.ir_right_to_wrong == pytest.approx(1 / 4)
    assert report.ir_right_to_wrong_of_first_right == pytest.approx(1 / 2)
    assert report.ir_wrong_to_right == pytest.approx(1 / 4)
    failed = report.outcomes[3]
    assert failed.error and "model crashed" in failed.error and failed.first_round_right is None
    evaluated = [e for e in events if isinstance(e, QuestionEvaluated)]
    assert [e.index for e in evaluated] == [0, 1, 2, 3] and all(e.total == 4 for e in evaluated)
    # the JSON form has the summary, and the outcomes only on request
    assert "outcomes" not in report.to_dict()
    assert len(json.loads(json.dumps(report.to_dict(with_questions=True)))["outcomes"]) == 4


def test_limit_and_cancel(dataset):
    replay = Replay({f"Q{i}?": _result(f"Q{i}?", "x", None, [], 1, (1, 1)) for i in range(1, 5)})
    report = run_eval(replay, dataset, mode="direct", limit=2)
    assert report.questions == 2 and report.first_round_right == 0 and report.source_shares[SOURCE_LLM_VERIFIED] == 0.0
    token = CancelToken()
    token.cancel()
    with pytest.raises(Cancelled):
        run_eval(replay, dataset, mode="direct", cancel=token)


def test_prediction_and_first_round_fallbacks():
    result = AnswerResult(question="q", mode="searchain", final_content="Paris [1] is big [2].", answer="")
    assert prediction_text(result) == "Paris is big."
    assert first_round_answer(result) is None
    result.branches = [Branch(round=1, raw_text="", nodes=[
        Node(round=1, position=0, query="a", llm_answer="France"),
        Node(round=1, position=1, query="b", llm_answer=None, unsolved=True)])]
    assert first_round_answer(result) == "France"


def test_each_outcome_carries_a_compact_trace(dataset):
    replay = Replay({q: _result(q, "Stanley", "Bismarck [1]", [SOURCE_IR_COMPLETED, SOURCE_LLM], 2, (5, 1))
                     for q in ("Q1?", "Q2?", "Q3?", "Q4?")})
    replay.results["Q1?"].branches[0].raw_text = "[Query 1]: q\n" + "x" * 2000
    report = run_eval(replay, dataset, mode="searchain", limit=1)
    trace = report.outcomes[0].trace
    assert trace["final"] == "Stanley [1]" and len(trace["chains"]) == 1
    assert trace["chains"][0].startswith("[Query 1]: q") and len(trace["chains"][0]) == 600
    assert [n["source"] for n in trace["path"]] == [SOURCE_IR_COMPLETED, SOURCE_LLM_UNVERIFIED]
    assert trace["path"][0]["query"] == "q" and trace["path"][0]["llm"] == "a"
