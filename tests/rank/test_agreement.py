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


# PRD's conventions (docs/ranking.md, "Human agreement"): X = code 0, Y = code 1.
PRD_REVIEWS = [
    ("q1", "X", "Y", "R1", "A"),
    ("q1", "X", "Y", "R2", "B"),
    ("q1", "X", "Y", "R3", "tie"),
    ("q1", "Y", "X", "R1", "B"),
    ("q1", "Y", "X", "R2", "B"),
    ("q1", "Y", "X", "R3", "A"),
    ("q2", "X", "Y", "R1", "tie"),
    ("q2", "X", "Y", "R2", "A"),
    ("q2", "X", "Y", "R3", "B"),
    ("q2", "Y", "X", "R1", "A"),
    ("q2", "Y", "X", "R2", "tie"),
    ("q2", "Y", "X", "R3", "tie"),
]
PRD_HUMANS = [
    # q1: X, tie, tie -> plurality "tie", sign of the mean "X".
    ("q1", "X", "Y", "h1", "A"),
    ("q1", "X", "Y", "h2", "tie"),
    ("q1", "X", "Y", "h3", "tie"),
    # q2: Y, X, tie -> "tie" both ways.
    ("q2", "Y", "X", "h1", "A"),
    ("q2", "Y", "X", "h2", "B"),
    ("q2", "Y", "X", "h3", "tie"),
]
PRD_WEIGHTS = [0.5, 0.3, 0.2]


def _prd_agreement(**conventions: str):  # type: ignore[no-untyped-def]
    import numpy as np

    rs = encode_reviews(frame(PRD_REVIEWS))
    human = encode_reviews(frame(PRD_HUMANS), contestants=rs.contestants)
    return human_agreement(rs, human, np.array(PRD_WEIGHTS), {}, bootstrap=0, **conventions)


def test_human_labels_merged_by_the_sign_of_their_mean() -> None:
    # R1 says X, X (q1, both orders), tie, Y (q2).
    plurality = _prd_agreement(human_merge="plurality")
    assert plurality.reviewers["R1"].accuracy == pytest.approx(0.25)  # q1 truth: tie
    mean_sign = _prd_agreement(human_merge="mean-sign")
    assert mean_sign.reviewers["R1"].accuracy == pytest.approx(0.75)  # q1 truth: X
    assert mean_sign.human_merge == "mean-sign" and plurality.human_merge == "plurality"


def test_weighted_majority_per_ordered_battle() -> None:
    agreement = _prd_agreement(human_merge="mean-sign", majority="ordered-mean")
    # Weighted mean scores: q1 XY -0.2 (X), q1 YX +0.6 (X), q2 XY -0.1 (X), q2 YX -0.5 (Y);
    # truth X, X, tie, tie.
    w = agreement.weighted_majority
    assert (w.n, w.accuracy) == (4, 0.5)
    # Model order: (X,X) (X,X) (X,tie) (Y,tie): P = 1/2, Pe = 30/64.
    assert w.kappa == pytest.approx(1 / 17)
    pooled = _prd_agreement(human_merge="mean-sign", majority="plurality").weighted_majority
    # Pooled: q1 X 1.3, Y 0.5, tie 0.2 -> X; q2 X 0.3, Y 0.7, tie 1.0 -> tie.
    assert (pooled.n, pooled.accuracy) == (2, 1.0)


def test_kappa_categories_by_position() -> None:
    agreement = _prd_agreement(
        human_merge="mean-sign", majority="ordered-mean", kappa_categories="position"
    )
    w = agreement.weighted_majority
    assert (w.n, w.accuracy) == (4, 0.5)  # the coding changes kappa only
    # By position: (A,A) (B,B) (A,tie) (A,tie): P = 1/2, Pe = 3/8.
    assert w.kappa == pytest.approx(0.2)
    # R2 by position: (B,A) (B,B) (A,tie) (tie,tie): P = 1/2, shares A 2/8 B 3/8 tie 3/8.
    r2 = agreement.reviewers["R2"]
    assert r2.kappa == pytest.approx((0.5 - 22 / 64) / (1 - 22 / 64))
    by_model = _prd_agreement(human_merge="mean-sign", majority="ordered-mean")
    # R2 by model order: (Y,X) (X,X) (X,tie) (tie,tie): shares X 4/8, Y 1/8, tie 3/8.
    assert by_model.reviewers["R2"].kappa == pytest.approx((0.5 - 26 / 64) / (1 - 26 / 64))


def test_ordered_majority_ties_within_epsilon() -> None:
    import numpy as np

    from arena.rank import MAJORITY_EPSILON

    rows = [
        ("q1", "X", "Y", "J1", "A"),
        ("q1", "X", "Y", "J2", "B"),
        ("q1", "X", "Y", "J3", "tie"),
    ]
    rs = encode_reviews(frame(rows))
    human = encode_reviews(frame([("q1", "X", "Y", "H", "tie")]), contestants=rs.contestants)
    # Weighted mean -0.005: within 0.01 of zero, a tie (a plurality would say X).
    weights = np.array([0.5, 0.495, 0.005])
    assert MAJORITY_EPSILON == 0.01
    ordered = human_agreement(rs, human, weights, {}, majority="ordered-mean")
    assert ordered.weighted_majority.accuracy == 1.0
    pooled = human_agreement(rs, human, weights, {}, majority="plurality")
    assert pooled.weighted_majority.accuracy == 0.0


def test_prd_conventions_named_and_checked() -> None:
    import numpy as np

    from arena.rank import AGREEMENT_CONVENTIONS

    assert AGREEMENT_CONVENTIONS["prd"] == {
        "human_merge": "mean-sign",
        "majority": "ordered-mean",
        "kappa_categories": "position",
    }
    rs = encode_reviews(frame(PRD_REVIEWS))
    with pytest.raises(ValueError, match="kappa_categories must be one of model, position"):
        human_agreement(rs, rs, np.ones(3), {}, kappa_categories="order")
