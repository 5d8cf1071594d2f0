"""Strict cover-EM: an answer that names both options of a comparison is not credited.

Made-up outcomes, no model: the figures follow from the predictions alone.
"""

import pytest

from searchain.cli.eval import render_comparison, render_text
from searchain.eval.compare import ComparisonReport, paired_counts
from searchain.eval.runner import QuestionOutcome, summarize
from searchain.metrics import answer_options, cover_em, names_several_options, strict_cover_em

MAGAZINES = "Which magazine was started first, Arthur's Magazine or First for Women?"
NATIONALITY = "Were Scott Derrickson and Ed Wood of the same nationality?"
OPEN = "What is the seat of the county where Van Hook Township is located?"


def _outcome(qid, question, golds, prediction, mode="rag"):
    return QuestionOutcome(id=qid, question=question, golds=golds, prediction=prediction,
                           cover_em=cover_em(prediction, golds), f1=0.0, mode=mode)


def test_options_are_found_in_comparison_and_yes_no_questions():
    assert answer_options(MAGAZINES, ["Arthur's Magazine"]) == ("Arthur's Magazine",
                                                                "First for Women")
    assert answer_options("Who was born first: Ed Wood or Scott Derrickson?", ["Ed Wood"]) == (
        "Ed Wood", "Scott Derrickson")
    assert answer_options(NATIONALITY, ["yes"]) == ("yes", "no")
    assert answer_options(OPEN, ["Stanley"]) is None
    assert answer_options("Is it red or blue?", ["red"]) is None  # no "which/who ..., A or B"


def test_naming_both_options_is_right_under_cover_em_and_wrong_under_strict():
    both = "We compare Arthur's Magazine and First for Women: Arthur's Magazine came first."
    assert cover_em(both, ["Arthur's Magazine"]) == 1.0
    assert strict_cover_em(both, ["Arthur's Magazine"], MAGAZINES) == 0.0
    hedged = "Yes, both were American; no, not quite."
    assert cover_em(hedged, ["yes"]) == 1.0
    assert strict_cover_em(hedged, ["yes"], NATIONALITY) == 0.0


def test_naming_only_the_gold_option_is_right_under_both():
    assert strict_cover_em("Arthur's Magazine", ["Arthur's Magazine"], MAGAZINES) == 1.0
    # The entities of a yes/no question are not its options: naming both is fine there.
    answer = "Yes, Scott Derrickson and Ed Wood were both American."
    assert strict_cover_em(answer, ["yes"], NATIONALITY) == 1.0
    # An open question has no options; strict equals cover-EM.
    assert strict_cover_em("The seat is Stanley.", ["Stanley"], OPEN) == 1.0


def test_an_option_inside_the_other_counts_only_on_its_own():
    question = "Which came first, Magazine or Arthur's Magazine?"
    assert not names_several_options("Arthur's Magazine", question, ["Arthur's Magazine"])
    assert names_several_options("Magazine, then Arthur's Magazine", question, ["Magazine"])


def _comparison():
    outcomes = {
        "rag": [_outcome("1", MAGAZINES, ["Arthur's Magazine"],
                         "Comparing Arthur's Magazine and First for Women, the first is older."),
                _outcome("2", NATIONALITY, ["yes"], "Yes."),
                _outcome("3", OPEN, ["Stanley"], "Stanley")],
        "searchain": [_outcome("1", MAGAZINES, ["Arthur's Magazine"], "Arthur's Magazine",
                               "searchain"),
                      _outcome("2", NATIONALITY, ["yes"], "Yes or no, hard to say.", "searchain"),
                      _outcome("3", OPEN, ["Stanley"], "New Town", "searchain")],
    }
    reports = {m: summarize(o, dataset="d.jsonl", dataset_kind="hotpotqa", mode=m)
               for m, o in outcomes.items()}
    return ComparisonReport("d.jsonl", "hotpotqa", None, list(outcomes), reports,
                            paired_counts("rag", reports))


def test_the_report_counts_per_mode_and_scores_them_wrong():
    data = _comparison().to_dict()
    rag, searchain = data["reports"]["rag"], data["reports"]["searchain"]
    assert rag["cover_em"] == pytest.approx(1.0)
    assert (rag["strict_cover_em"], rag["several_options_named"],
            rag["two_option_questions"]) == (pytest.approx(2 / 3), 1, 2)
    assert searchain["cover_em"] == pytest.approx(2 / 3)
    assert (searchain["strict_cover_em"], searchain["several_options_named"]) == (
        pytest.approx(1 / 3), 1)


def test_the_text_renders_show_the_strict_column():
    data = _comparison().to_dict()
    table = render_comparison(data)
    header = table.splitlines()[1]
    assert "strict" in header and "several" in header
    rag_row = next(line for line in table.splitlines() if line.startswith("rag "))
    assert "0.667" in rag_row and "1/2" in rag_row
    single = render_text(data["reports"]["rag"])
    assert "strict cover-EM" in single and "66.67%" in single
    assert "1 of 2 two-option answers" in single
