"""How far a benchmark figure could move by the luck of which questions were drawn.

A recall or EM figure over a few hundred questions has a sampling error of several points, so a
gap of a point between two settings, or between a figure and a target, says little on its own.
Both helpers here resample *questions* (a cluster bootstrap): the steps of one MuSiQue question,
or the two supporting paragraphs of one HotpotQA question, succeed or fail together far more
often than independent draws would, and resampling them one by one would understate the error.

Deterministic for a given ``seed``, so a benchmark run prints the same interval twice. Needs
numpy only.
"""

from __future__ import annotations

from typing import Hashable, Sequence

DEFAULT_RESAMPLES = 2000


def _cluster_sums(values: Sequence[float], groups: Sequence[Hashable] | None):
    """Per-cluster (sum of values, count) as two numpy arrays."""
    import numpy as np

    if groups is None:
        groups = range(len(values))
    if len(groups) != len(values):
        raise ValueError(f"{len(values)} values but {len(groups)} group labels")
    index: dict[Hashable, int] = {}
    sums: list[float] = []
    counts: list[int] = []
    for value, group in zip(values, groups):
        i = index.setdefault(group, len(sums))
        if i == len(sums):
            sums.append(0.0)
            counts.append(0)
        sums[i] += float(value)
        counts[i] += 1
    return np.asarray(sums), np.asarray(counts, dtype=float)


def _resampled_means(values: Sequence[float], groups: Sequence[Hashable] | None,
                     resamples: int, seed: int):
    """The mean of ``values`` in each of ``resamples`` draws of whole groups, with replacement."""
    import numpy as np

    sums, counts = _cluster_sums(values, groups)
    picks = np.random.default_rng(seed).integers(0, len(sums), size=(resamples, len(sums)))
    return sums[picks].sum(axis=1) / counts[picks].sum(axis=1)


def _interval(samples, level: float) -> tuple[float, float]:
    import numpy as np

    tail = (1.0 - level) / 2 * 100
    lo, hi = np.percentile(samples, [tail, 100 - tail])
    return round(float(lo), 4), round(float(hi), 4)


def bootstrap_ci(values: Sequence[float], groups: Sequence[Hashable] | None = None, *,
                 level: float = 0.95, resamples: int = DEFAULT_RESAMPLES,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (e.g. 0/1 hits), resampling whole
    ``groups`` (one label per value; None: every value is its own group).

    An empty input gives ``(0.0, 0.0)``.
    """
    if not values:
        return 0.0, 0.0
    return _interval(_resampled_means(values, groups, resamples, seed), level)


def paired_bootstrap_delta(treatment: Sequence[float], baseline: Sequence[float],
                           groups: Sequence[Hashable] | None = None, *, level: float = 0.95,
                           resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> dict:
    """Mean of ``treatment - baseline`` over the same items, with its bootstrap interval (``ci``,
    at ``level``) and the share of resamples in which the treatment is not better
    (``p_not_better``, a one-sided bootstrap p-value).

    Pairing matters: two settings scored on the same questions share most of their luck, so the
    interval of their difference is much narrower than either figure's own.
    """
    if len(treatment) != len(baseline):
        raise ValueError(f"{len(treatment)} treatment values but {len(baseline)} baseline values")
    if not treatment:
        return {"delta": 0.0, "ci": [0.0, 0.0], "p_not_better": 1.0}
    diffs = [float(t) - float(b) for t, b in zip(treatment, baseline)]
    means = _resampled_means(diffs, groups, resamples, seed)
    lo, hi = _interval(means, level)
    return {"delta": round(sum(diffs) / len(diffs), 4), "ci": [lo, hi],
            "p_not_better": round(float((means <= 0).mean()), 4)}


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Exact two-sided McNemar p-value: how likely a split at least this uneven of the questions
    that only one of two systems got right is, were both equally good (binomial, p = 1/2).

    ``mcnemar_exact(0, 0)`` is 1.0: no disagreement, no evidence of a difference.
    """
    from math import comb

    n = only_a + only_b
    if n == 0:
        return 1.0
    k = min(only_a, only_b)
    tail = sum(comb(n, i) for i in range(k + 1)) / 2 ** n
    return round(min(1.0, 2 * tail), 4)
