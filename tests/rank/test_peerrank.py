"""PeerRank win rates and reviewer weights, worked out by hand on tiny tables."""

from __future__ import annotations

import numpy as np
import pytest

from arena.rank import encode_reviews, peerrank, tally_reviews, weights_from_scores, win_counts
from tests.rank._frames import frame


def _rank(rows, **kwargs):  # type: ignore[no-untyped-def]
    rs = encode_reviews(frame(rows), **kwargs)
    tallies = tally_reviews(rs, per_question=False)
    return rs, tallies, peerrank(tallies)


def test_ties_count_half_and_a_lone_judge_changes_nothing() -> None:
    # One judge J that is not a contestant. By hand:
    # X: 2 wins + 1 tie in 3 battles = 2.5/3; Y: 1 win + 1 tie in 4 = 1.5/4;
    # Z: 2 ties in 3 = 1/3.
    rows = [
        ("q1", "X", "Y", "J", "A"),
        ("q1", "Y", "X", "J", "B"),
        ("q1", "X", "Z", "J", "tie"),
        ("q1", "Y", "Z", "J", "A"),
        ("q2", "Z", "Y", "J", "tie"),
    ]
    rs, tallies, pr = _rank(rows)
    assert rs.contestants == ("X", "Y", "Z")
    np.testing.assert_allclose(pr.win_rate, [2.5 / 3, 1.5 / 4, 1 / 3])
    np.testing.assert_allclose(pr.weighted_win_rate, pr.win_rate)
    np.testing.assert_allclose(pr.weights, [1.0])
    assert pr.iterations == 1 and pr.converged
    counts = win_counts(tallies)
    assert counts.wins.tolist() == [2, 1, 0]
    assert counts.ties.tolist() == [1, 1, 2]
    assert counts.losses.tolist() == [0, 2, 1]


def test_weakest_reviewer_gets_zero_weight() -> None:
    # Every reviewer agrees, so scores do not depend on weights: X 1, Y 1/2, Z 0.
    # Weights: min-max (1, 1/2, 0), divided by their sum 3/2 -> (2/3, 1/3, 0).
    rows = [
        ("q1", a, b, r, "A")
        for a, b in (("X", "Y"), ("X", "Z"), ("Y", "Z"))
        for r in ("X", "Y", "Z")
    ]
    _, _, pr = _rank(rows)
    np.testing.assert_allclose(pr.win_rate, [1.0, 0.5, 0.0])
    np.testing.assert_allclose(pr.weighted_win_rate, [1.0, 0.5, 0.0])
    np.testing.assert_allclose(pr.weights, [2 / 3, 1 / 3, 0.0])
    # Iteration 1 moves the weights off equal, iteration 2 finds them unchanged.
    assert pr.iterations == 2 and pr.converged


def test_non_contestant_reviewer_gets_the_mean_weight() -> None:
    # X and J say X wins, Y says Y wins. Iteration 1 (weights 1/3 each): X 2/3,
    # Y 1/3 -> min-max X 1, Y 0; J gets their mean 1/2; normalised (2/3, 0, 1/3).
    # Iteration 2 (mean-normalised 2, 0, 1): X (2*1 + 0*0 + 1*1)/3 = 1, Y 0 ->
    # the same weights: the fixed point.
    rows = [
        ("q1", "X", "Y", "X", "A"),
        ("q1", "X", "Y", "Y", "B"),
        ("q1", "X", "Y", "J", "A"),
    ]
    rs, _, pr = _rank(rows)
    assert rs.reviewers == ("J", "X", "Y")
    np.testing.assert_allclose(pr.win_rate, [2 / 3, 1 / 3])
    np.testing.assert_allclose(pr.weighted_win_rate, [1.0, 0.0])
    np.testing.assert_allclose(pr.weights, [1 / 3, 2 / 3, 0.0])
    assert pr.iterations == 2


def test_all_equal_scores_keep_equal_weights() -> None:
    rows = [("q1", "X", "Y", "X", "A"), ("q1", "X", "Y", "Y", "B")]
    _, _, pr = _rank(rows)
    np.testing.assert_allclose(pr.win_rate, [0.5, 0.5])
    np.testing.assert_allclose(pr.weighted_win_rate, [0.5, 0.5])
    np.testing.assert_allclose(pr.weights, [0.5, 0.5])
    assert pr.iterations == 1


def test_invalid_and_failed_reviews_are_counted_but_never_battles() -> None:
    rows = [
        ("q1", "X", "Y", "J", "A"),
        ("q1", "Y", "X", "J", "invalid"),
        ("q2", "X", "Y", "J", None),  # failed call: no verdict
        ("q2", "Y", "X", "J", "B", "failed"),
        ("q3", "X", "Y", "J", "tie", "invalid"),
    ]
    rs, tallies, pr = _rank(rows)
    assert (rs.n_rows, rs.n_invalid, rs.n_failed, rs.n_battles) == (5, 2, 2, 1)
    np.testing.assert_allclose(pr.win_rate, [1.0, 0.0])
    assert win_counts(tallies).ties.tolist() == [0, 0]


def test_weights_from_scores_rules() -> None:
    as_contestant = np.array([0, 1, -1, 2])
    weights = weights_from_scores(np.array([[0.2, 0.6, 1.0]]), as_contestant)
    # min-max (0, 0.5, 1) / 1.5; the non-contestant gets the mean 1/3; renormalised.
    expected = np.array([0.0, 1 / 3, 1 / 3, 2 / 3])
    np.testing.assert_allclose(weights[0], expected / expected.sum())
    equal = weights_from_scores(np.array([[0.5, 0.5, 0.5]]), as_contestant)
    np.testing.assert_allclose(equal[0], [0.25] * 4)
    # A contestant without battles (NaN score) is treated like a non-contestant.
    partial = weights_from_scores(np.array([[0.0, np.nan, 1.0]]), as_contestant)
    np.testing.assert_allclose(partial[0], np.array([0.0, 0.5, 0.5, 1.0]) / 2.0)


def test_contestant_and_reviewer_filters() -> None:
    rows = [
        ("q1", "X", "Y", "J", "A"),
        ("q1", "X", "Old", "J", "B"),  # Old left the tournament
        ("q1", "Y", "X", "Gone", "A"),  # reviewer no longer listed
    ]
    rs, _, pr = _rank(rows, contestants=["X", "Y"], reviewers=["J"])
    assert rs.contestants == ("X", "Y") and rs.reviewers == ("J",)
    assert rs.n_rows == 1
    np.testing.assert_allclose(pr.win_rate, [1.0, 0.0])


@pytest.mark.parametrize("bad", ["maybe", "a"])
def test_unknown_verdict_is_an_error(bad: str) -> None:
    with pytest.raises(ValueError, match="unknown verdict"):
        encode_reviews(frame([("q1", "X", "Y", "J", bad)]))


def test_self_battle_is_an_error() -> None:
    with pytest.raises(ValueError, match="against itself"):
        encode_reviews(frame([("q1", "X", "X", "J", "A")]))


def test_unknown_verdict_of_a_left_out_model_is_ignored() -> None:
    rows = [("q1", "X", "Y", "J", "A"), ("q1", "X", "Old", "J", "???")]
    rs = encode_reviews(frame(rows), contestants=["X", "Y"])
    assert rs.n_rows == 1 and rs.score.tolist() == [-1]
