"""Agreement with human labels, by hand."""

from __future__ import annotations

import pytest

from arena.rank import (
    encode_reviews,
    human_agreement,
    peerrank,
    rank_correlation,
    tally_reviews,
)
from tests.rank._frames import frame

REVIEWS = [
    # R1 agrees with the humans everywhere.
    ("q1", "X", "Y", "R1", "A"),
    ("q1", "Y", "X", "R1", "B"),
    ("q1", "Y", "Z", "R1", "B"),
    ("q1", "Z", "Y", "R1", "A"),
    # R2 only on the last one.
    ("q1", "X", "Y", "R2", "B"),
    ("q1", "Y", "X", "R2", "A"),
    ("q1", "Y", "Z", "R2", "tie"),
    ("q1", "Z", "Y", "R2", "A"),
]
HUMANS = [
    ("q1", "X", "Y", "ann", "A"),
    ("q1", "Y", "X", "bob", "B"),  # X again, in the other order
    ("q1", "Y", "Z", "ann", "B"),
    ("q1", "Y", "Z", "bob", "B"),
    ("q1", "Z", "Y", "cid", "B"),  # the minority says Y: majority Z
]


def _agreement():  # type: ignore[no-untyped-def]
    rs = encode_reviews(frame(REVIEWS))
    tallies = tally_reviews(rs, per_question=False)
    pr = peerrank(tallies)
    human = encode_reviews(frame(HUMANS), contestants=rs.contestants)
    return pr, human_agreement(rs, human, pr.weights, {"win_rate": pr.win_rate})


def test_per_reviewer_accuracy_and_kappa() -> None:
    _, agreement = _agreement()
    assert agreement.battles == 2
    r1, r2 = agreement.reviewers["R1"], agreement.reviewers["R2"]
    assert (r1.n, r1.accuracy, r1.kappa) == (4, 1.0, pytest.approx(1.0))
    assert r2.n == 4 and r2.accuracy == pytest.approx(0.25)
    # Pairs (judge, human): (Y,X) (Y,X) (tie,Z) (Z,Z): P = 1/4, Pe = 15/32.
    assert r2.kappa == pytest.approx((0.25 - 15 / 32) / (1 - 15 / 32))


def test_weighted_majority() -> None:
    pr, agreement = _agreement()
    assert pr.weights.tolist() == [0.5, 0.5]  # judges only: equal weights
    w = agreement.weighted_majority
    # X-Y: R1 says X twice, R2 says Y twice -> a tie at the top -> "tie" (humans: X).
    # Y-Z: Z 1.5 vs tie 0.5 -> Z (humans: Z).
    assert (w.n, w.accuracy) == (2, 0.5)
    assert w.kappa == pytest.approx(0.2)


def test_rankings_against_the_human_ranking() -> None:
    pr, agreement = _agreement()
    # Humans: X 2/2, Y 1/5, Z 2/3 -> X > Z > Y. Reviewers: Z > X > Y.
    assert agreement.human_win_rate == pytest.approx({"X": 1.0, "Y": 0.2, "Z": 2 / 3})
    corr = agreement.rankings["win_rate"]
    assert corr.kendall_tau == pytest.approx(1 / 3)
    assert corr.spearman == pytest.approx(0.5)


def test_rank_correlation_ignores_missing() -> None:
    import numpy as np

    corr = rank_correlation(np.array([1.0, 2.0, np.nan, 3.0]), np.array([1.0, 2.0, 5.0, 3.0]))
    assert corr.kendall_tau == pytest.approx(1.0)


def test_rank_statistics_match_scipy() -> None:
    import numpy as np
    from scipy.stats import kendalltau, spearmanr

    from arena.rank import kendall_tau, spearman_rho

    rng = np.random.default_rng(4)
    for _ in range(20):
        x = rng.integers(0, 5, size=9).astype(float)  # with ties
        y = rng.integers(0, 5, size=9).astype(float)
        if len(set(x)) > 1 and len(set(y)) > 1:
            assert kendall_tau(x, y) == pytest.approx(kendalltau(x, y).statistic)
            assert spearman_rho(x, y) == pytest.approx(spearmanr(x, y).statistic)
