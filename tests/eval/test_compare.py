"""Several modes side by side: interleaving, the paired count, and a details log that a killed run
resumes from. The answerers replay prepared answers; the engine is exercised in test_runner_e2e."""

import json

import pytest

from searchain.errors import Cancelled, ConfigError
from searchain.eval.compare import read_details, run_comparison
from searchain.eval.datasets import load_dataset
from searchain.eval.stats import mcnemar_exact
from searchain.events import CancelToken
from searchain.reasoning.result import AnswerResult

GOLD = {"Q1?": "Paris", "Q2?": "1902", "Q3?": "Stanley", "Q4?": "blue whale"}
# rag gets Q1 and Q2 right, searchain Q1 and Q3.
ANSWERS = {
    "rag": {"Q1?": "Paris", "Q2?": "1902", "Q3?": "Livingstone", "Q4?": "shark"},
    "searchain": {"Q1?": "Paris", "Q2?": "1850", "Q3?": "Stanley", "Q4?": "shark"},
}


@pytest.fixture
def dataset(tmp_path):
    rows = [{"id": f"q{i}", "question": q, "answer": a, "paragraphs": []} for i, (q, a) in enumerate(GOLD.items(), 1)]
    path = tmp_path / "mini.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


class Answerers:
    """``answer_for(mode)``, recording every call in order; ``fail_after`` raises mid-run."""

    def __init__(self, fail_after=None, cancel=None):
        self.calls, self.built = [], []
        self.fail_after, self.cancel = fail_after, cancel

    def __call__(self, mode):
        self.built.append(mode)

        def answer(question, *, mode, cancel=None):
            if self.fail_after is not None and len(self.calls) == self.fail_after:
                raise KeyboardInterrupt  # a kill: nothing after this call is answered
            self.calls.append((mode, question))
            if self.cancel is not None and len(self.calls) == 3:
                self.cancel.cancel()
            text = ANSWERS[mode][question]
            return AnswerResult(question=question, mode=mode, final_content=text, answer=text,
                                prompt_tokens=10, completion_tokens=2)

        return answer


def test_modes_are_interleaved_and_compared_on_the_same_questions(dataset, tmp_path):
    answerers = Answerers()
    log = tmp_path / "run.jsonl"
    report = run_comparison(answerers, dataset, modes=["rag", "searchain"], details=log)
    assert answerers.calls[:4] == [("rag", "Q1?"), ("searchain", "Q1?"), ("rag", "Q2?"), ("searchain", "Q2?")]
    assert answerers.built == ["rag", "searchain"]  # one engine per mode, built once
    assert report.reports["rag"].cover_em == pytest.approx(0.5)
    assert report.reports["searchain"].cover_em == pytest.approx(0.5)
    (pair,) = report.paired
    assert (pair.a, pair.b, pair.questions) == ("rag", "searchain", 4)
    assert (pair.both_right, pair.only_a_right, pair.only_b_right, pair.neither_right) == (1, 1, 1, 1)
    assert pair.p_value == 1.0
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [(r["mode"], r["id"]) for r in rows] == [(m, f"q{i}") for i in range(1, 5) for m in ("rag", "searchain")]


def test_a_killed_run_resumes_from_its_log_without_answering_again(dataset, tmp_path):
    log = tmp_path / "run.jsonl"
    with pytest.raises(KeyboardInterrupt):
        run_comparison(Answerers(fail_after=5), dataset, modes=["rag", "searchain"], details=log)
    assert len(log.read_text().splitlines()) == 5
    with open(log, "a") as handle:  # the kill came while the sixth line was being written
        handle.write('{"id": "q3", "mode": "searchain", "predic')
    second = Answerers()
    report = run_comparison(second, dataset, modes=["rag", "searchain"], details=log, resume=True)
    assert second.calls == [("searchain", "Q3?"), ("rag", "Q4?"), ("searchain", "Q4?")]
    assert report.resumed == 5
    assert report.reports["searchain"].cover_em == pytest.approx(0.5)
    assert [o.id for o in report.reports["rag"].outcomes] == ["q1", "q2", "q3", "q4"]
    lines = log.read_text().splitlines()
    assert len(lines) == 8 and all(json.loads(line) for line in lines)  # the torn line is gone


def test_without_resume_an_old_log_is_replaced(dataset, tmp_path):
    log = tmp_path / "run.jsonl"
    run_comparison(Answerers(), dataset, modes=["rag"], details=log)
    again = Answerers()
    run_comparison(again, dataset, modes=["rag"], details=log, limit=2)
    assert len(again.calls) == 2 and len(log.read_text().splitlines()) == 2


def test_a_log_from_another_dataset_or_a_damaged_line_is_a_clear_error(dataset, tmp_path):
    data = load_dataset(dataset)
    foreign = tmp_path / "foreign.jsonl"
    foreign.write_text(json.dumps({"id": "zz9", "mode": "rag", "question": "?", "golds": [], "prediction": "",
                                   "cover_em": 0, "f1": 0}) + "\n")
    with pytest.raises(ConfigError, match="Line 1 .*'zz9'.*another dataset"):
        read_details(foreign, data, ["rag"])
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text("not json\n")
    with pytest.raises(ConfigError, match="Line 1 of the details log"):
        read_details(damaged, data, ["rag"])


def test_cancel_stops_between_questions(dataset):
    token = CancelToken()
    answerers = Answerers(cancel=token)
    with pytest.raises(Cancelled):
        run_comparison(answerers, dataset, modes=["rag", "searchain"], cancel=token)
    assert len(answerers.calls) == 3


def test_mode_list_errors():
    with pytest.raises(ConfigError, match="twice"):
        run_comparison(Answerers(), [], modes=["rag", "rag"])
    with pytest.raises(ConfigError, match="No answering mode"):
        run_comparison(Answerers(), [], modes=[])


def test_mcnemar_exact_matches_the_binomial_tail():
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32, abs=1e-4)  # both tails of 5 coin flips
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(1, 9) == pytest.approx(2 * 11 / 1024, abs=1e-4)


def test_yes_no_questions_are_counted_and_can_be_selected(tmp_path, shared_eval):
    from searchain.eval.datasets import is_yes_no, only_yes_no

    rows = [{"id": "c1", "question": "Are both cats?", "answer": "yes", "paragraphs": []},
            {"id": "c2", "question": "Is X older than Y?", "answer": "no", "paragraphs": []},
            {"id": "o1", "question": "Who?", "answer": "Stanley", "paragraphs": []}]
    path = tmp_path / "yn.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows))
    answers = {"Are both cats?": "Yes, both are cats", "Is X older than Y?": "Y", "Who?": "Stanley"}

    def answer_for(mode):
        return lambda q, *, mode, cancel=None: AnswerResult(q, mode, answers[q], answers[q])

    report = run_comparison(answer_for, path, modes=["rag"]).reports["rag"]
    assert report.yes_no == {"questions": 2, "right": 1, "answered_yes_or_no": 1}
    hotpot = load_dataset(shared_eval / "hotpotqa" / "dev_500.jsonl")
    chosen = only_yes_no(hotpot, limit=5)
    assert len(chosen.questions) == 5 and all(is_yes_no(q) for q in chosen.questions)
    assert chosen.corpus_name == hotpot.corpus_name  # the same pooled corpus
    with pytest.raises(Exception, match="no question whose gold answer is yes or no"):
        only_yes_no(load_dataset(shared_eval / "musique" / "dev_200.jsonl"))


def test_progress_lines_say_how_long_is_left():
    import io

    from searchain.cli.eval import ProgressLines
    from searchain.eval.runner import QuestionEvaluated, QuestionOutcome

    out = io.StringIO()
    lines = ProgressLines(out)
    for index, (mode, seconds) in enumerate([("rag", 30.0), ("searchain", 90.0)]):
        lines(QuestionEvaluated(0, 41, QuestionOutcome("q1", "Q?", ["a"], "a", 1.0, 1.0, seconds=seconds, mode=mode)))
    lines(QuestionEvaluated(40, 41, QuestionOutcome("q41", "Q?", ["a"], "b", 0.0, 0.0, seconds=5.0, mode="rag")))
    first, second, last = out.getvalue().splitlines()
    assert first == "[1/41] rag q1: EM 1 F1 1.00 rounds 0 30.0s (about 20 min left)"  # 40 x 30 s so far
    assert second.endswith("(about 80 min left)")  # 40 x (30 + 90) s
    assert last == "[41/41] rag q41: EM 0 F1 0.00 rounds 0 5.0s"


def test_time_left_reads_in_hours_from_ninety_minutes():
    from searchain.units import duration

    assert (duration(20), duration(80 * 60), duration(3 * 3600 + 5 * 60)) == ("20 s", "80 min", "3 h 05 min")


def test_a_report_from_the_log_alone_answers_nothing_and_keeps_complete_questions(dataset, tmp_path):
    log = tmp_path / "run.jsonl"
    with pytest.raises(KeyboardInterrupt):
        run_comparison(Answerers(fail_after=5), dataset, modes=["rag", "searchain"], details=log)
    before = log.read_text()
    report = run_comparison(None, dataset, modes=["rag", "searchain"], details=log, report_only=True)
    assert [o.id for o in report.reports["searchain"].outcomes] == ["q1", "q2"]  # q3 has rag only
    assert report.resumed == 4 and report.paired[0].questions == 2 and log.read_text() == before
    with pytest.raises(ConfigError, match="no question answered in every mode"):
        run_comparison(None, dataset, modes=["direct"], details=log, report_only=True)


def test_a_resume_under_another_model_or_settings_is_refused(dataset, tmp_path):
    log = tmp_path / "run.jsonl"
    setup = {"model": "a.gguf (10 bytes)", "reasoning": {"r_max": 5}}
    with pytest.raises(KeyboardInterrupt):
        run_comparison(Answerers(fail_after=3), dataset, modes=["rag", "searchain"], details=log, setup=setup)
    assert json.loads((tmp_path / "run.jsonl.setup.json").read_text()) == setup
    other = {"model": "b.gguf (12 bytes)", "reasoning": {"r_max": 5}}
    with pytest.raises(ConfigError, match="another model than this run's"):
        run_comparison(Answerers(), dataset, modes=["rag", "searchain"], details=log, resume=True, setup=other)
    again = Answerers()
    report = run_comparison(again, dataset, modes=["rag", "searchain"], details=log, resume=True, setup=dict(setup))
    assert report.resumed == 3 and len(again.calls) == 5


def test_a_run_that_answered_nothing_does_not_block_the_next_one(dataset, tmp_path):
    # A mistyped --model fails when the first mode's engine is built, after the setup was
    # written; retrying with the right model must not be refused as "mixing two models".
    log = tmp_path / "run.jsonl"

    def missing_model(mode):
        raise ConfigError("Model file x.gguf does not exist.")

    with pytest.raises(ConfigError, match="does not exist"):
        run_comparison(missing_model, dataset, modes=["rag"], details=log, resume=True,
                       setup={"model": "x.gguf"})
    fixed = {"model": "a.gguf (10 bytes)"}
    report = run_comparison(Answerers(), dataset, modes=["rag"], details=log, resume=True, setup=fixed)
    assert len(report.reports["rag"].outcomes) == 4  # every question of the set, none refused
    assert json.loads((tmp_path / "run.jsonl.setup.json").read_text()) == fixed


def test_settings_for_one_run_are_checked_and_never_saved():
    from searchain.cli.eval import with_overrides
    from searchain.config import Settings

    base = Settings()
    changed = with_overrides(base, ["reasoning.question_passages=0", "llm.use_grammar=false"])
    assert (changed.reasoning.question_passages, changed.llm.use_grammar) == (0, False)
    assert base.reasoning.question_passages == 3 and base.llm.use_grammar  # the loaded settings are untouched
    with pytest.raises(ConfigError, match="question_passages"):
        with_overrides(base, ["reasoning.question_passages=99"])
    with pytest.raises(ConfigError, match="There is no setting"):
        with_overrides(base, ["reasoning.question_pasages=2"])
    with pytest.raises(ConfigError, match="KEY=VALUE"):
        with_overrides(base, ["reasoning.top_k"])
