"""Dataset loaders on the real shared files and on broken hand-made ones."""

import json

import pytest

from searchain.eval.datasets import (
    HOTPOTQA,
    MUSIQUE,
    DatasetError,
    load_dataset,
    pooled_paragraphs,
)


def test_musique_real_file(shared_eval):
    ds = load_dataset(shared_eval / "musique" / "dev_200.jsonl")
    assert ds.kind == MUSIQUE and len(ds.questions) == 200
    assert ds.corpus_name == f"eval-musique-{ds.fingerprint}" and len(ds.fingerprint) == 12
    q = ds.questions[0]
    assert q.answers[0] == "Stanley"
    # "#1 >> capital" becomes "<answer of step 1> capital"
    assert [s.query for s in q.steps] == [
        "Van Hook Township located in the administrative territorial entity",
        "Mountrail County capital",
    ]
    assert all(s.paragraph is not None and s.paragraph.is_supporting for s in q.steps)
    assert sum(len(q.steps) for q in ds.questions) == 478  # the README's step count
    assert not any("#" in s.query or ">>" in s.query for q in ds.questions for s in q.steps)
    assert 3100 <= len(pooled_paragraphs(ds)) <= 3200


def test_hotpotqa_real_file_with_limit(shared_eval):
    ds = load_dataset(shared_eval / "hotpotqa" / "dev_500.jsonl", limit=7)
    assert ds.kind == HOTPOTQA and len(ds.questions) == 7
    q = ds.questions[0]
    assert q.answers == ("Chief of Protocol",) and len(q.supporting) == 2 and not q.steps


def test_pooled_paragraphs_deduplicate_on_title_and_text(tmp_path):
    records = [
        {"question_id": "a", "question_text": "q1?", "answers_objects": [{"spans": ["x"]}],
         "contexts": [{"title": "T", "paragraph_text": "same"}, {"title": "U", "paragraph_text": "one"}]},
        {"question_id": "b", "question_text": "q2?", "answers_objects": [{"spans": ["y", "Y2"]}],
         "contexts": [{"title": "T", "paragraph_text": "same"}, {"title": "T", "paragraph_text": "other"}]},
    ]
    path = tmp_path / "h.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n\n")
    ds = load_dataset(path)
    assert [(p.title, p.text) for p in pooled_paragraphs(ds)] == [("T", "same"), ("U", "one"), ("T", "other")]
    assert ds.questions[1].answers == ("y", "Y2")


def test_fingerprint_changes_with_content(tmp_path):
    rec = {"id": "1", "question": "q?", "answer": "a", "paragraphs": []}
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    a.write_text(json.dumps(rec))
    b.write_text(json.dumps({**rec, "answer": "b"}))
    assert load_dataset(a).corpus_name != load_dataset(b).corpus_name


@pytest.mark.parametrize(
    "content, needle",
    [
        ('{"id": "1", "question": "q", "answer": "a", "paragraphs": []}\n{not json\n', "line 2"),
        ('[1, 2]\n', "expected a JSON object"),
        ('{"foo": 1}\n', "neither a MuSiQue record"),
        ('{"id": "1", "question": "q", "answer": "", "paragraphs": []}\n', "no gold answer"),
        ('{"id": "1", "question": "q", "answer": "a", "paragraphs": [{"title": 3}]}\n', "line 1"),
        ("\n\n", "holds no questions"),
    ],
)
def test_bad_files_name_the_problem(tmp_path, content, needle):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert needle in str(info.value) and str(path) in str(info.value)


def test_missing_file_and_bad_limit(tmp_path):
    with pytest.raises(DatasetError, match="does not exist"):
        load_dataset(tmp_path / "nope.jsonl")
    path = tmp_path / "ok.jsonl"
    path.write_text('{"id": "1", "question": "q", "answer": "a", "paragraphs": []}\n')
    with pytest.raises(DatasetError, match="at least 1"):
        load_dataset(path, limit=0)
