"""Weighted Elo (PRD Algorithm 1) by hand."""

from __future__ import annotations

import numpy as np
import pytest

from arena.rank import encode_reviews, weighted_elo
from tests.rank._frames import frame, random_reviews


def test_one_review_moves_both_by_k_over_two() -> None:
    rs = encode_reviews(frame([("q1", "X", "Y", "J", "A")]))
    elo = weighted_elo(rs, orders=3)
    np.testing.assert_allclose(elo.rating, [1016.0, 984.0])
    assert elo.passes == 1 and elo.converged  # a lone judge: weights stay equal


def test_two_reviews_in_either_order() -> None:
    # X wins then Y wins (or the reverse): the second update uses
    # e = 1 / (1 + 10^(32/400)) for the model 32 points behind.
    rs = encode_reviews(frame([("q1", "X", "Y", "J", "A"), ("q2", "Y", "X", "J", "A")]))
    behind = 1 / (1 + 10 ** (32 / 400))
    second = 32 * (1 - behind)
    one_order = weighted_elo(rs, orders=1, seed=1).rating
    candidates = [
        [1016 - second, 984 + second],  # X won first
        [984 + second, 1016 - second],  # Y won first
    ]
    assert any(np.allclose(one_order, c) for c in candidates)
    many = weighted_elo(rs, orders=40, seed=0).rating
    assert many.sum() == pytest.approx(2000.0)  # every update is zero-sum


def test_tie_between_equals_changes_nothing() -> None:
    rs = encode_reviews(frame([("q1", "X", "Y", "J", "tie")]))
    np.testing.assert_allclose(weighted_elo(rs, orders=2).rating, [1000.0, 1000.0])


def test_seeded_and_weights_from_elo() -> None:
    rs = encode_reviews(random_reviews(models=4, questions=6, seed=2))
    first = weighted_elo(rs, orders=10, seed=5)
    again = weighted_elo(rs, orders=10, seed=5)
    np.testing.assert_array_equal(first.rating, again.rating)
    assert first.weights.sum() == pytest.approx(1.0)
    # Weights are min-max scaled Elo: the lowest-rated reviewer gets zero.
    assert first.weights[int(np.argmin(first.rating))] == pytest.approx(0.0)
    assert first.rating.mean() == pytest.approx(1000.0)
    # Stronger models (higher index in random_reviews) end higher.
    assert first.rating[-1] > first.rating[0]


def test_no_battles() -> None:
    rs = encode_reviews(frame([("q1", "X", "Y", "J", "invalid")]))
    elo = weighted_elo(rs, orders=5)
    np.testing.assert_allclose(elo.rating, [1000.0, 1000.0])
    assert elo.passes == 0
