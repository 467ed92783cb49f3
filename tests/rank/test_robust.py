"""Unbalanced designs: weighted-mean PeerRank, damping, ranks, ties, intervals (crafted files)."""

from __future__ import annotations

import numpy as np
import pytest

from arena.rank import (
    RankOptions,
    encode_reviews,
    human_agreement,
    peerrank,
    rank_models,
    rank_reviews,
    tally_reviews,
    weights_from_scores,
)
from tests.rank._frames import Row, frame

# No reviewer judges its own battles; two questions, every ordered pair once.
NO_SELF_12: list[Row] = [
    ("q1", "X", "Y", "Z", "B"),
    ("q1", "X", "Z", "Y", "B"),
    ("q1", "Y", "X", "Z", "A"),
    ("q1", "Y", "Z", "X", "B"),
    ("q1", "Z", "X", "Y", "A"),
    ("q1", "Z", "Y", "X", "B"),
    ("q2", "X", "Y", "Z", "B"),
    ("q2", "X", "Z", "Y", "A"),
    ("q2", "Y", "X", "Z", "B"),
    ("q2", "Y", "Z", "X", "A"),
    ("q2", "Z", "X", "Y", "A"),
    ("q2", "Z", "Y", "X", "B"),
]

# Four models, no self-judgements: the plain iteration spirals in so slowly
# that 100 updates do not reach the fixed point.
SLOW_17: list[Row] = [
    ("q1", "W", "X", "Y", "A"),
    ("q1", "W", "X", "Z", "tie"),
    ("q1", "W", "Y", "Z", "tie"),
    ("q1", "W", "Z", "X", "tie"),
    ("q1", "X", "W", "Z", "tie"),
    ("q1", "X", "Y", "W", "tie"),
    ("q1", "X", "Y", "Z", "B"),
    ("q1", "X", "Z", "W", "tie"),
    ("q1", "X", "Z", "Y", "B"),
    ("q1", "Y", "W", "X", "tie"),
    ("q1", "Y", "W", "Z", "A"),
    ("q1", "Y", "X", "Z", "tie"),
    ("q1", "Y", "Z", "W", "tie"),
    ("q1", "Z", "W", "X", "tie"),
    ("q1", "Z", "X", "W", "B"),
    ("q1", "Z", "X", "Y", "tie"),
    ("q1", "Z", "Y", "W", "B"),
]


def _count_denominator(rows: list[Row], iterations: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The old arithmetic (divide by the unweighted count): (scores, weights) per iteration."""
    rs = encode_reviews(frame(rows))
    win = tally_reviews(rs, per_question=False).win
    value = win.sum(axis=2)  # (R, C)
    battles = (win + np.swapaxes(win, 1, 2)).sum(axis=2).sum(axis=0)
    weights = np.full(rs.n_reviewers, 1.0 / rs.n_reviewers)
    out = []
    for _ in range(iterations):
        scores = (weights * rs.n_reviewers) @ value / battles
        weights = weights_from_scores(scores[None], rs.reviewer_as_contestant)[0]
        out.append((scores, weights))
    return out


def test_weighted_mean_stops_the_flip_flop_and_stays_in_unit_interval() -> None:
    old = _count_denominator(NO_SELF_12, 101)
    # The count denominator flips between two weightings forever, so 100 and
    # 101 iterations disagree, and a "win rate" of 1.125 appears.
    assert not np.allclose(old[-1][1], old[-2][1])
    np.testing.assert_allclose(old[-1][1], old[-3][1])
    assert max(float(s.max()) for s, _ in old) == pytest.approx(1.125)
    tallies = tally_reviews(encode_reviews(frame(NO_SELF_12)), per_question=False)
    for max_iter in (100, 101):
        pr = peerrank(tallies, max_iter=max_iter)
        assert pr.converged and pr.damping == 0.0 and pr.iterations == 3
        # By hand: with weights (0, 1/2, 1/2) X is judged only by Y and Z:
        # 1 win in 4 battles; Y and Z win 3 of their 4 reviews by weighted judges.
        np.testing.assert_allclose(pr.weights, [0.0, 0.5, 0.5], atol=1e-12)
        np.testing.assert_allclose(pr.weighted_win_rate, [0.25, 0.75, 0.75])
        np.testing.assert_allclose(pr.win_rate, [0.25, 0.75, 0.5])


def test_six_rows_where_the_count_denominator_gives_two() -> None:
    rows: list[Row] = [
        ("q0", "X", "Z", "J", "tie"),
        ("q1", "X", "Y", "Z", "B"),
        ("q2", "X", "Z", "Y", "tie"),
        ("q3", "X", "Y", "Z", "B"),
        ("q4", "Y", "X", "Z", "A"),
        ("q5", "Z", "X", "J", "A"),
    ]
    # Y is judged only by Z: once Z's mean-normalised weight reaches 2, Y's
    # "rate" (3 wins x 2 over 3 battles) is 2.
    assert max(float(s.max()) for s, _ in _count_denominator(rows, 6)) == pytest.approx(2.0)
    pr = peerrank(tally_reviews(encode_reviews(frame(rows)), per_question=False))
    assert pr.converged
    assert np.all((pr.weighted_win_rate >= 0) & (pr.weighted_win_rate <= 1))
    # By hand: X 2 ties in 6 battles, Y 3 wins in 3, Z 2 ties and a win in 3.
    np.testing.assert_allclose(pr.win_rate, [1 / 6, 1.0, 2 / 3])


def test_balanced_design_keeps_the_published_arithmetic() -> None:
    # Every contestant meets every reviewer equally often: the weighted mean
    # equals the published sum / count formula at any weights.
    rows: list[Row] = [
        (f"q{q}", a, b, r, v)
        for q, verdicts in enumerate((("A", "B", "tie"), ("B", "B", "A")))
        for (a, b), v in zip((("X", "Y"), ("Y", "Z"), ("Z", "X")), verdicts, strict=True)
        for r in ("X", "Y", "Z")
    ]
    rs = encode_reviews(frame(rows))
    tallies = tally_reviews(rs, per_question=False)
    pr = peerrank(tallies)
    value = tallies.win.sum(axis=2)
    battles = (tallies.win + np.swapaxes(tallies.win, 1, 2)).sum(axis=2).sum(axis=0)
    published = (pr.weights * rs.n_reviewers) @ value / battles
    np.testing.assert_allclose(pr.weighted_win_rate, published)


def test_slow_iteration_is_damped_to_the_same_fixed_point() -> None:
    tallies = tally_reviews(encode_reviews(frame(SLOW_17)), per_question=False)
    damped = peerrank(tallies, max_iter=100)
    assert damped.converged and damped.damping == pytest.approx(0.5)
    assert damped.iterations > 100 and damped.residual < 1e-8
    # Given enough plain iterations, the undamped fixed point is the same.
    plain = peerrank(tallies, max_iter=150)
    assert plain.converged and plain.damping == 0.0
    np.testing.assert_allclose(damped.weights, plain.weights, atol=1e-7)
    np.testing.assert_allclose(damped.weighted_win_rate, plain.weighted_win_rate, atol=1e-7)
    # Where the plain phase stopped does not matter.
    again = peerrank(tallies, max_iter=101)
    np.testing.assert_allclose(again.weights, damped.weights, atol=1e-9)
    assert np.all((damped.weighted_win_rate >= 0) & (damped.weighted_win_rate <= 1))


def test_a_true_two_cycle_settles_and_reports_its_residual() -> None:
    # Two humble judges: X says Y is better (twice), Y says X is better (once).
    # Whoever holds the weight makes the other the better reviewer: no fixed point.
    rows: list[Row] = [
        ("q1", "X", "Y", "X", "B"),
        ("q1", "Y", "X", "X", "A"),
        ("q1", "X", "Y", "Y", "A"),
    ]
    tallies = tally_reviews(encode_reviews(frame(rows)), per_question=False)
    results = [peerrank(tallies, max_iter=m) for m in (100, 101)]
    for pr in results:
        # Damping settles where both reviewers' scores are equal: w_X / w_Y = 1/2.
        np.testing.assert_allclose(pr.weights, [1 / 3, 2 / 3], atol=1e-8)
        np.testing.assert_allclose(pr.weighted_win_rate, [0.5, 0.5], atol=1e-8)
        assert pr.converged and pr.damping > 0.99
        assert pr.residual == pytest.approx(1 / 3, abs=1e-6)


def test_ranks_within_groups_unranked_models_and_exact_ties() -> None:
    rows: list[Row] = [
        # Group 1: A and B split evenly, so their ratings are exactly tied.
        ("q1", "A", "B", "J", "A"),
        ("q2", "A", "B", "J", "B"),
        ("q1", "A", "C", "J", "A"),
        ("q1", "B", "C", "J", "A"),
        ("q2", "C", "A", "J", "tie"),
        ("q2", "C", "B", "J", "tie"),
        # Group 2, never compared with group 1.
        ("q1", "D", "E", "J", "A"),
        ("q2", "E", "D", "J", "tie"),
    ]
    rs = encode_reviews(frame(rows), contestants=["A", "B", "C", "D", "E", "Idle"])
    ranking = rank_reviews(rs, RankOptions(elo=False, bootstrap=0))
    ranks = dict(zip(rs.contestants, ranking.ranks.rank.tolist(), strict=True))
    groups = dict(zip(rs.contestants, ranking.ranks.group.tolist(), strict=True))
    assert ranks == {"A": 1, "B": 1, "C": 3, "D": 1, "E": 2, "Idle": 0}
    assert groups == {"A": 0, "B": 0, "C": 0, "D": 1, "E": 1, "Idle": -1}
    assert [rs.contestants[i] for i in ranking.ranks.order][-1] == "Idle"
    # 1-ulp differences count as ties too.
    table = rank_models(
        np.array([1000.0, np.nextafter(1000.0, 0.0), 990.0]),
        np.full(3, np.nan),
        np.full(3, np.nan),
        [[0, 1, 2]],
    )
    assert table.rank.tolist() == [1, 1, 3]


def test_rank_intervals_and_neighbour_shares() -> None:
    rating = np.array([1100.0, 1080.0, 1000.0, 900.0])
    low = np.array([1060.0, 1040.0, 960.0, 850.0])
    high = np.array([1140.0, 1120.0, 1070.0, 950.0])
    boot = np.array(
        [
            [1100.0, 1090.0, 1000.0, 900.0],
            [1090.0, 1100.0, 1000.0, 900.0],
            [1110.0, 1080.0, 1000.0, 900.0],
            [1100.0, 1100.0, 1000.0, 900.0],
        ]
    )
    table = rank_models(rating, low, high, [[0, 1, 2, 3]], boot)
    # Model 2: nobody's interval lies entirely above its own (1070 >= 1060, 1040),
    # so its best rank is 1; three intervals do not lie entirely below it.
    assert table.rank_low.tolist() == [1, 1, 1, 4]
    assert table.rank_high.tolist() == [3, 3, 3, 4]
    shares = [(n.upper, n.lower, n.share, n.separated) for n in table.neighbours]
    assert shares == [(0, 1, 0.625, False), (1, 2, 1.0, False), (2, 3, 1.0, True)]


def test_weighted_majority_ties_are_not_decided_by_rounding() -> None:
    # 0.1 + 0.2 != 0.3 in floats: the two small judges against the big one is a tie.
    rows: list[Row] = [
        ("q1", "X", "Y", "J1", "A"),
        ("q1", "X", "Y", "J2", "A"),
        ("q1", "X", "Y", "J3", "B"),
    ]
    rs = encode_reviews(frame(rows))
    assert 0.1 + 0.2 != 0.3
    human = encode_reviews(frame([("q1", "X", "Y", "H", "tie")]), contestants=rs.contestants)
    agreement = human_agreement(rs, human, np.array([0.1, 0.2, 0.3]), {})
    assert agreement.weighted_majority.accuracy == 1.0


def test_human_accuracy_has_a_bootstrap_interval() -> None:
    rows: list[Row] = [
        (f"q{q}", "X", "Y", judge, "A" if (q + k) % 3 else "B")
        for q in range(12)
        for k, judge in enumerate(("J1", "J2"))
    ]
    rs = encode_reviews(frame(rows))
    human = encode_reviews(
        frame([(f"q{q}", "X", "Y", "H", "A") for q in range(12)]), contestants=rs.contestants
    )
    agreement = human_agreement(rs, human, np.array([0.5, 0.5]), {}, bootstrap=300, seed=1)
    score = agreement.reviewers["J1"]
    assert score.accuracy == pytest.approx(8 / 12)
    assert 0.0 <= score.accuracy_low < score.accuracy < score.accuracy_high <= 1.0
