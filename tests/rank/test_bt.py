"""Bradley-Terry: against choix, ties, anchoring, disconnected graphs, bootstrap."""

from __future__ import annotations

import math

import choix
import numpy as np
import pytest

from arena.rank import (
    ELO_PER_NAT,
    bradley_terry,
    comparison_components,
    encode_reviews,
    fit_bradley_terry,
    fit_log_strengths,
    peerrank,
    tally_reviews,
)
from tests.rank._frames import frame, random_reviews

# Wins of i over j, tie-free, strongly connected.
WINS = np.array(
    [
        [0, 7, 9, 4],
        [3, 0, 6, 5],
        [1, 4, 0, 8],
        [2, 5, 2, 0],
    ],
    dtype=float,
)


def _choix(wins: np.ndarray) -> np.ndarray:
    data = [
        (i, j) for i in range(len(wins)) for j in range(len(wins)) for _ in range(int(wins[i, j]))
    ]
    params = choix.opt_pairwise(len(wins), data, alpha=0.0, method="BFGS", tol=1e-12)
    return params - params.mean()


def test_fit_matches_choix_on_tie_free_data() -> None:
    theta = fit_log_strengths(WINS[None])[0]
    np.testing.assert_allclose(theta, _choix(WINS), atol=1e-5)
    # On the Elo scale, mean at 1000.
    fit = fit_bradley_terry(WINS)
    np.testing.assert_allclose(fit.rating, 1000 + theta * ELO_PER_NAT, atol=1e-6)
    assert fit.rating.mean() == pytest.approx(1000.0)
    assert fit.regularised == [] and len(fit.components) == 1


def test_fit_from_reviews_matches_choix() -> None:
    rows = []
    for i, a in enumerate("ABCD"):
        for j, b in enumerate("ABCD"):
            for k in range(int(WINS[i, j])):
                # Alternate positions; the winner is always `a`.
                if k % 2:
                    rows.append((f"q{i}{j}{k}", a, b, "J", "A"))
                else:
                    rows.append((f"q{i}{j}{k}", b, a, "J", "B"))
    tallies = tally_reviews(encode_reviews(frame(rows)))
    pr = peerrank(tallies)
    fit = bradley_terry(tallies, pr.weights, bootstrap=0)
    expected = 1000 + _choix(WINS) * ELO_PER_NAT
    np.testing.assert_allclose(fit.rating, expected, atol=1e-3)
    assert np.isnan(fit.ci_low).all()


def test_a_tie_is_half_a_win_each_way() -> None:
    wins = WINS.copy()
    ties = np.array([[0, 2, 0, 1], [2, 0, 0, 0], [0, 0, 0, 3], [1, 0, 3, 0]], dtype=float)
    with_ties = fit_bradley_terry(wins + 0.5 * ties).rating
    # Doubled data: each tie becomes one win each way.
    doubled = 2 * wins + ties
    np.testing.assert_allclose(with_ties, 1000 + _choix(doubled) * ELO_PER_NAT, atol=1e-3)


def test_anchor_model_sits_at_1000() -> None:
    fit = fit_bradley_terry(WINS, anchor=2)
    assert fit.rating[2] == pytest.approx(1000.0)
    free = fit_bradley_terry(WINS).rating
    np.testing.assert_allclose(np.diff(fit.rating), np.diff(free), atol=1e-8)


def test_disconnected_parts_are_fitted_separately() -> None:
    pairs = np.zeros((5, 5))
    pairs[0, 1], pairs[1, 0] = 3, 1
    pairs[2, 3], pairs[3, 2] = 2, 2
    pairs[3, 4], pairs[4, 3] = 1, 2
    assert comparison_components(pairs) == [[0, 1], [2, 3, 4]]
    fit = fit_bradley_terry(pairs, anchor=0)
    assert fit.components == [[0, 1], [2, 3, 4]]
    assert fit.rating[0] == pytest.approx(1000.0)
    # Two models, 3:1 -> difference log(3) nats.
    assert fit.rating[0] - fit.rating[1] == pytest.approx(math.log(3) * ELO_PER_NAT, abs=1e-4)
    assert fit.rating[2:].mean() == pytest.approx(1000.0)


def test_a_model_that_wins_everything_is_regularised_not_infinite() -> None:
    pairs = np.array([[0, 3, 2], [0, 0, 1], [0, 1, 0]], dtype=float)
    fit = fit_bradley_terry(pairs)
    assert fit.regularised == [0]
    assert np.isfinite(fit.rating).all()
    assert fit.rating[0] > fit.rating[1] and fit.rating[0] > fit.rating[2]


def test_isolated_model_has_no_rating() -> None:
    pairs = np.zeros((3, 3))
    pairs[0, 1], pairs[1, 0] = 2, 1
    fit = fit_bradley_terry(pairs)
    assert np.isnan(fit.rating[2]) and np.isfinite(fit.rating[:2]).all()


def test_bootstrap_is_reproducible_with_a_seed() -> None:
    tallies = tally_reviews(encode_reviews(random_reviews(models=4, questions=15, seed=3)))
    weights = peerrank(tallies).weights
    first = bradley_terry(tallies, weights, bootstrap=50, seed=7)
    again = bradley_terry(tallies, weights, bootstrap=50, seed=7)
    other = bradley_terry(tallies, weights, bootstrap=50, seed=8)
    np.testing.assert_array_equal(first.ci_low, again.ci_low)
    np.testing.assert_array_equal(first.ci_high, again.ci_high)
    assert not np.array_equal(first.ci_low, other.ci_low)
    assert (first.ci_low <= first.rating).all() and (first.rating <= first.ci_high).all()
    assert first.bootstrap_rounds == 50


def test_bootstrap_refits_agree_with_full_fits() -> None:
    rng = np.random.default_rng(0)
    boot = rng.integers(0, 12, size=(6, 4, 4)).astype(float)
    for b in range(6):
        np.fill_diagonal(boot[b], 0)
    start = np.repeat(fit_log_strengths(WINS[None]), 6, axis=0)
    fast = fit_log_strengths(boot, start)
    for b in range(6):
        np.testing.assert_allclose(fast[b], fit_log_strengths(boot[b][None])[0], atol=1e-7)
