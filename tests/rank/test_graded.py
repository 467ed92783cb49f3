"""Graded verdicts: a share `p_a` of a win for position A and a battle `weight`."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from arena.rank import RankOptions, encode_reviews, rank_reviews
from tests.rank._frames import frame, random_reviews

OPTIONS = RankOptions(elo_orders=0, elo=False, bootstrap=50, seed=3)


def _p_a(verdicts: pl.Series) -> pl.Series:
    return verdicts.replace_strict({"A": 1.0, "tie": 0.5, "B": 0.0}, default=None)


def test_plain_shares_and_unit_weights_change_nothing() -> None:
    reviews = random_reviews(models=4, questions=10, seed=5)
    plain = rank_reviews(encode_reviews(reviews), OPTIONS)
    graded_frame = reviews.with_columns(
        p_a=_p_a(reviews["verdict"]), weight=pl.lit(1.0, dtype=pl.Float64)
    )
    rs = encode_reviews(graded_frame)
    assert rs.graded
    graded = rank_reviews(rs, OPTIONS)
    for get in (
        lambda r: r.peerrank.win_rate,
        lambda r: r.peerrank.weighted_win_rate,
        lambda r: r.peerrank.weights,
        lambda r: r.bt.rating,
        lambda r: r.bt.ci_low,
        lambda r: r.win_rate_ci,
        lambda r: r.weighted_win_rate_ci,
        lambda r: r.pairwise,
    ):
        np.testing.assert_allclose(get(graded), get(plain), rtol=0, atol=1e-9)


def test_all_null_graded_columns_are_plain() -> None:
    reviews = random_reviews(models=3, questions=6, seed=1).with_columns(
        p_a=pl.lit(None, dtype=pl.Float64), weight=pl.lit(None, dtype=pl.Float64)
    )
    assert not encode_reviews(reviews).graded


def test_a_weight_counts_as_repeated_battles() -> None:
    rows = [
        ("q1", "x", "y", "r", "A"),
        ("q1", "y", "x", "r", "B"),
        ("q2", "x", "y", "r", "B"),
        ("q2", "y", "x", "r", "tie"),
        ("q3", "x", "y", "r", "tie"),
    ]
    weights = [3.0, 1.0, 1.0, 2.0, 1.0]
    weighted = frame(rows).with_columns(weight=pl.Series(weights))
    repeated = frame([row for row, w in zip(rows, weights, strict=True) for _ in range(int(w))])
    a = rank_reviews(encode_reviews(weighted), OPTIONS)
    b = rank_reviews(encode_reviews(repeated), OPTIONS)
    np.testing.assert_allclose(a.peerrank.win_rate, b.peerrank.win_rate, atol=1e-12)
    np.testing.assert_allclose(a.bt.rating, b.bt.rating, atol=1e-6)
    np.testing.assert_allclose(a.win_rate_ci, b.win_rate_ci, atol=1e-12)
    # Verdict counts stay counts of reviews.
    assert a.counts.battles.tolist() == [5, 5]


def test_fractional_shares_give_the_hand_computed_win_rate() -> None:
    rows = [
        ("q1", "x", "y", "r", "A"),
        ("q2", "x", "y", "r", "B"),
        ("q3", "y", "x", "r", "A"),
    ]
    reviews = frame(rows).with_columns(
        p_a=pl.Series([0.9, 0.3, 0.6]), weight=pl.Series([1.0, 2.0, 1.0])
    )
    ranking = rank_reviews(encode_reviews(reviews), OPTIONS)
    # x's win value: 0.9 + 2 * 0.3 + (1 - 0.6) = 1.9 of weight 4.
    x = ranking.reviews.contestants.index("x")
    assert ranking.peerrank.win_rate[x] == pytest.approx(1.9 / 4)
    assert ranking.pairwise[x, 1 - x] == pytest.approx(1.9 / 4)
    # BT on two models: the rating gap is the log-odds of the weighted share.
    gap = ranking.bt.rating[x] - ranking.bt.rating[1 - x]
    assert gap == pytest.approx(400 * np.log10(1.9 / 2.1), abs=1e-6)


@pytest.mark.parametrize(("column", "value"), [("p_a", 1.5), ("p_a", -0.1), ("weight", 0.0)])
def test_out_of_range_graded_values_are_refused(column: str, value: float) -> None:
    reviews = frame([("q1", "x", "y", "r", "A")]).with_columns(pl.Series(column, [value]))
    with pytest.raises(ValueError, match=column):
        encode_reviews(reviews)
