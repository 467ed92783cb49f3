"""The Elo trajectory (PRD's Figure 4) and the weighted pairwise shares."""

from __future__ import annotations

import numpy as np
import pytest

from arena.rank import (
    ELO_ORDER_SEED,
    RankOptions,
    elo_trajectory,
    encode_reviews,
    rank_reviews,
    ranking_trajectory,
    weighted_pairwise,
)
from tests.rank._frames import frame, random_reviews
from tests.rank.test_elo import reference_orders


def _replay(rs, weights, order):  # type: ignore[no-untyped-def]
    """PRD's Algorithm 1, one review at a time, in plain Python: ratings after each review."""
    w = np.asarray(weights) * rs.n_reviewers  # mean-normalised
    rating = np.full(rs.n_models, 1000.0)
    after = [rating.copy()]
    for k in order:
        a, b = int(rs.model_a[k]), int(rs.model_b[k])
        expected = 1 / (1 + 10 ** ((rating[b] - rating[a]) / 400))
        step = w[rs.reviewer[k]] * 32 * ((1 - int(rs.score[k])) / 2 - expected)
        rating[a] += step
        rating[b] -= step
        after.append(rating.copy())
    return np.array(after)


def test_trajectory_replays_the_fixed_orders_review_by_review() -> None:
    rs = encode_reviews(random_reviews(models=3, questions=4, judges=1, seed=3))
    weights = np.array([0.1, 0.2, 0.3, 0.4])
    trajectory = elo_trajectory(rs, weights, orders=3, points=rs.n_battles + 1)
    assert trajectory.steps.tolist() == list(range(rs.n_battles + 1))
    orders = reference_orders(rs.n_battles, 3, ELO_ORDER_SEED)
    expected = np.mean([_replay(rs, weights, order) for order in orders], 0)
    np.testing.assert_allclose(trajectory.rating, expected, rtol=0, atol=1e-9)


def test_trajectory_by_hand_and_spacing() -> None:
    rs = encode_reviews(frame([("q1", "X", "Y", "J", "A"), ("q2", "X", "Y", "J", "A")]))
    trajectory = elo_trajectory(rs, np.array([1.0]), orders=2, points=41)
    assert trajectory.steps.tolist() == [0, 1, 2]  # no more points than reviews + 1
    second = 32 * (1 - 1 / (1 + 10 ** (-32 / 400)))
    np.testing.assert_allclose(
        trajectory.rating, [[1000, 1000], [1016, 984], [1016 + second, 984 - second]]
    )
    with pytest.raises(ValueError, match="points must be at least 2"):
        elo_trajectory(rs, np.array([1.0]), points=1)


@pytest.mark.parametrize("weights", ["reliability", "peerrank", "equal"])
def test_trajectory_ends_at_the_elo_column(weights: str) -> None:
    rs = encode_reviews(random_reviews(models=4, questions=6, seed=1))
    ranking = rank_reviews(rs, RankOptions(elo_orders=7, bootstrap=0, weights=weights))
    assert ranking.elo is not None
    trajectory = ranking_trajectory(ranking, points=11)
    assert trajectory is not None and trajectory.orders == 7
    assert trajectory.steps[0] == 0 and len(trajectory.steps) == 11
    np.testing.assert_allclose(trajectory.rating[0], 1000.0)
    np.testing.assert_allclose(trajectory.rating[-1], ranking.elo.rating, rtol=0, atol=1e-9)
    # Reliability weights rate without the reviewers' own battles.
    own_left_out = weights == "reliability"
    assert (trajectory.steps[-1] < rs.n_battles) == own_left_out
    no_elo = rank_reviews(rs, RankOptions(elo=False, bootstrap=0, weights=weights))
    assert ranking_trajectory(no_elo) is None


def test_weighted_pairwise() -> None:
    rs = encode_reviews(random_reviews(models=4, questions=6, judges=2, seed=5))
    equal = rank_reviews(rs, RankOptions(elo=False, bootstrap=0, weights="equal"))
    shares = weighted_pairwise(equal)
    # Equal weights: the unweighted pairwise win rates.
    np.testing.assert_allclose(shares, equal.pairwise, equal_nan=True)
    peer = rank_reviews(rs, RankOptions(elo=False, bootstrap=0, weights="peerrank"))
    weighted = weighted_pairwise(peer)
    off = ~np.eye(4, dtype=bool)
    np.testing.assert_allclose((weighted + weighted.T)[off], 1.0)
    assert np.isnan(np.diag(weighted)).all()
    # By hand: weighted win value of m0 over m1 / weighted battles between them.
    w = peer.peerrank.weights
    win = peer.tallies.win
    expected = w @ win[:, 0, 1] / (w @ (win[:, 0, 1] + win[:, 1, 0]))
    assert weighted[0, 1] == pytest.approx(expected)
    assert not np.allclose(weighted[off], shares[off])  # the weights matter here
    # Never compared: NaN.
    lonely = encode_reviews(frame([("q1", "X", "Y", "J", "A"), ("q1", "Z", "W", "J", "B")]))
    apart = weighted_pairwise(rank_reviews(lonely, RankOptions(elo=False, bootstrap=0)))
    x, y, z = (lonely.contestants.index(name) for name in "XYZ")
    assert np.isnan(apart[x, z]) and (apart[x, y], apart[y, x]) == (1.0, 0.0)
