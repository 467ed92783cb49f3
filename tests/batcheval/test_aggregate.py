"""Known answers for the pure math: final scores, bootstrap interval, correlations."""

from __future__ import annotations

import math

import pytest

from arena.batcheval import bootstrap_ci, correlations, mean_and_spread, running_means, win_rates


def test_mean_and_spread() -> None:
    mean, spread = mean_and_spread([2.0, None, 4.0])
    assert mean == 3.0 and spread == pytest.approx(math.sqrt(2))
    assert mean_and_spread([2.5]) == (2.5, 0.0)
    assert mean_and_spread([None, None]) == (None, None)
    assert mean_and_spread([]) == (None, None)


def test_running_means() -> None:
    assert running_means({"a": [1.0, 3.0], "b": [], "c": [None, 2.0]}) == {
        "a": 2.0,
        "b": None,
        "c": 2.0,
    }


def test_bootstrap_ci_brackets_the_mean_and_is_seeded() -> None:
    values = [1.0, 2.0, 2.5, 3.0, 1.5, 2.2, 2.8, 1.9]
    lo, hi = bootstrap_ci(values, n_boot=500, seed=1)
    mean = sum(values) / len(values)
    assert lo < mean < hi
    assert (lo, hi) == bootstrap_ci(values, n_boot=500, seed=1)
    assert hi - lo < 1.0
    narrow = bootstrap_ci(values, n_boot=500, seed=1, level=0.5)
    assert lo < narrow[0] < narrow[1] < hi
    assert bootstrap_ci([2.0], n_boot=10) == (2.0, 2.0)
    assert bootstrap_ci([3.0] * 5, n_boot=10) == (3.0, 3.0)
    with pytest.raises(ValueError):
        bootstrap_ci([])


def test_correlations_known_values() -> None:
    x = {"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0}
    assert correlations(x, {"a": 10.0, "b": 20.0, "c": 30.0, "d": 40.0}) == {
        "n": 4,
        "pearson": pytest.approx(1.0),
        "spearman": pytest.approx(1.0),
        "kendall": pytest.approx(1.0),
    }
    rev = correlations(x, {"a": 4.0, "b": 1.0, "c": 0.5, "d": 0.1})
    assert rev["spearman"] == pytest.approx(-1.0) and rev["kendall"] == pytest.approx(-1.0)
    # one swapped pair out of six: tau = (5 - 1) / 6; rho = 1 - 6*2/(4*15) = 0.8
    one_swap = correlations(x, {"a": 1.0, "b": 3.0, "c": 2.0, "d": 4.0})
    assert one_swap["kendall"] == pytest.approx(4 / 6)
    assert one_swap["spearman"] == pytest.approx(0.8)
    # ties: tau-b; x = (1,1,2,3), y = (1,2,3,4): 5 concordant, 1 tie in x only
    tied = correlations({"a": 1.0, "b": 1.0, "c": 2.0, "d": 3.0}, x)
    assert tied["kendall"] == pytest.approx(5 / math.sqrt(5 * 6))


def test_correlations_need_three_common_and_variation() -> None:
    assert correlations({"a": 1.0, "b": 2.0}, {"a": 1.0, "b": 2.0})["pearson"] is None
    flat = correlations({"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 1.0, "b": 2.0, "c": 3.0})
    assert flat["n"] == 3 and flat["pearson"] is None and flat["spearman"] is None
    assert correlations({"a": 1.0, "z": 2.0}, {"a": 1.0, "b": 2.0})["n"] == 1


def test_win_rates() -> None:
    battles = [("x", "y", "A"), ("y", "x", "tie"), ("x", "z", "B"), ("y", "z", "invalid")]
    assert win_rates(battles) == {
        "x": pytest.approx(1.5 / 3),
        "y": pytest.approx(0.5 / 2),
        "z": 1.0,
    }
