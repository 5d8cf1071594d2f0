"""Where wrong answers went wrong, from each outcome's trace and the benchmark's own paragraphs."""

import json

from searchain.eval.datasets import load_dataset
from searchain.eval.diagnose import diagnose, failure_kind
from searchain.eval.runner import QuestionOutcome

PARAGRAPHS = {"Adriana Trigiani": "Adriana Trigiani is an author based in Greenwich Village, New York City.",
              "Big Stone Gap (film)": "Big Stone Gap is a 2014 film directed by Adriana Trigiani."}
GOLD = ["Greenwich Village, New York City"]


def _outcome(prediction, path, em=0.0):
    return QuestionOutcome("q1", "Where?", GOLD, prediction, em, 0.0, trace={"path": path})


def _node(answer, passage):
    return {"query": "q", "llm": "x", "reader": answer, "answer": answer, "decision": "corrected",
            "passage": passage}


def test_each_wrong_answer_is_put_where_it_went_wrong():
    director = _node("Adriana Trigiani", "Big Stone Gap (film)")
    assert failure_kind(_outcome("Greenwich Village, New York City", [], em=1.0), PARAGRAPHS) == "right"
    assert failure_kind(_outcome("Brooklyn", []), PARAGRAPHS) == "no_path"
    assert failure_kind(_outcome("Adriana Trigiani", [director, _node("Greenwich Village, New York City",
                                                                      "Adriana Trigiani")]), PARAGRAPHS) == "final_writing"
    assert failure_kind(_outcome("Rome", [director, _node("Rome", "Adriana Trigiani")]), PARAGRAPHS) == "reading"
    assert failure_kind(_outcome("Rome", [director, _node("Rome", "Rome")]), PARAGRAPHS) == "planning_or_retrieval"


def test_diagnose_counts_with_the_datasets_paragraphs(tmp_path):
    row = {"id": "q1", "question": "Where?", "answer": GOLD[0],
           "paragraphs": [{"idx": i, "title": t, "paragraph_text": x, "is_supporting": True}
                          for i, (t, x) in enumerate(PARAGRAPHS.items())]}
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(row) + "\n")
    counts = diagnose([_outcome("Rome", [_node("Rome", "Adriana Trigiani")])], load_dataset(path))
    assert counts == {"right": 0, "no_path": 0, "final_writing": 0, "reading": 1, "planning_or_retrieval": 0}


def test_logs_written_before_the_kept_answer_was_traced_are_read_from_the_decision():
    old = {"query": "q", "llm": "Brooklyn", "reader": "Greenwich Village, New York City", "decision": "corrected",
           "passage": "Adriana Trigiani"}
    assert failure_kind(_outcome("Brooklyn", [old]), PARAGRAPHS) == "final_writing"
    kept_llm = dict(old, decision="not_confirmed")
    assert failure_kind(_outcome("Brooklyn", [kept_llm]), PARAGRAPHS) == "reading"
