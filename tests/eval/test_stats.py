"""Bootstrap intervals for benchmark figures: right centre, right width, whole questions."""

import pytest

from searchain.eval.stats import bootstrap_ci, paired_bootstrap_delta


def test_interval_brackets_the_mean_and_narrows_with_more_questions():
    few = [1.0, 0.0] * 20  # 40 questions, mean 0.5
    many = [1.0, 0.0] * 500  # 1000 questions, mean 0.5
    lo_few, hi_few = bootstrap_ci(few)
    lo_many, hi_many = bootstrap_ci(many)
    assert lo_few < 0.5 < hi_few and lo_many < 0.5 < hi_many
    # The binomial standard error is sqrt(.25/n): 0.079 for 40, 0.016 for 1000; the 95%
    # interval is about four of them wide.
    assert 0.25 < hi_few - lo_few < 0.4
    assert 0.05 < hi_many - lo_many < 0.08
    assert bootstrap_ci(few) == (lo_few, hi_few)  # same seed, same interval


def test_whole_questions_are_resampled_so_correlated_steps_widen_the_interval():
    # 100 questions of 4 steps each; a question's steps all succeed or all fail.
    hits = [1.0] * 4 * 50 + [0.0] * 4 * 50
    questions = [i // 4 for i in range(400)]
    lo_steps, hi_steps = bootstrap_ci(hits)  # as if 400 independent steps
    lo_q, hi_q = bootstrap_ci(hits, questions)  # really 100 independent questions
    assert (hi_q - lo_q) > 1.6 * (hi_steps - lo_steps)  # about twice as wide (sqrt(4))


def test_constant_values_and_empty_input():
    assert bootstrap_ci([1.0] * 30) == (1.0, 1.0)
    assert bootstrap_ci([]) == (0.0, 0.0)
    with pytest.raises(ValueError, match="3 values but 2 group labels"):
        bootstrap_ci([1.0, 0.0, 1.0], ["a", "b"])


def test_paired_difference_sees_a_small_consistent_gain_that_unpaired_intervals_hide():
    # Two settings on 300 questions that agree on all but 12, where the treatment wins.
    baseline = [1.0] * 150 + [0.0] * 150
    treatment = list(baseline)
    for i in range(150, 162):
        treatment[i] = 1.0
    lo_b, hi_b = bootstrap_ci(baseline)
    lo_t, hi_t = bootstrap_ci(treatment)
    assert lo_t < hi_b  # each figure's own interval overlaps the other's
    paired = paired_bootstrap_delta(treatment, baseline)
    assert paired["delta"] == pytest.approx(12 / 300)
    lo, hi = paired["ci"]
    assert 0 < lo < 12 / 300 < hi  # yet the paired gain is clearly above zero
    assert paired["p_not_better"] < 0.01
    # A coin-flip difference is not called a gain.
    mixed = list(baseline)
    for i in range(0, 12, 2):
        mixed[i] = 0.0
    for i in range(150, 156):
        mixed[i] = 1.0
    flat = paired_bootstrap_delta(mixed, baseline)
    assert flat["delta"] == 0.0 and flat["ci"][0] < 0 < flat["ci"][1]
    assert 0.3 < flat["p_not_better"] < 0.8
    with pytest.raises(ValueError, match="2 treatment values but 1 baseline"):
        paired_bootstrap_delta([1.0, 0.0], [1.0])
