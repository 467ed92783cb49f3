"""Swapping positions (model_a <-> model_b, score negated) changes no ranking."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from arena.rank import RankOptions, encode_reviews, rank_reviews
from tests.rank._frames import random_reviews, swapped

OPTIONS = RankOptions(elo_orders=8, bootstrap=30, seed=11)


@pytest.fixture(scope="module")
def pair():  # type: ignore[no-untyped-def]
    reviews = random_reviews(models=4, questions=8, judges=1, seed=5)
    # Some unreadable and failed reviews too.
    reviews = reviews.with_columns(
        verdict=pl.when(pl.int_range(pl.len()) % 17 == 0)
        .then(pl.lit("invalid"))
        .otherwise(pl.col("verdict")),
        status=pl.when(pl.int_range(pl.len()) % 23 == 0)
        .then(pl.lit("failed"))
        .otherwise(pl.col("status")),
    )
    first = rank_reviews(encode_reviews(reviews), OPTIONS)
    second = rank_reviews(encode_reviews(swapped(reviews)), OPTIONS)
    return first, second


def test_ratings_do_not_depend_on_positions(pair) -> None:  # type: ignore[no-untyped-def]
    a, b = pair
    np.testing.assert_allclose(a.peerrank.win_rate, b.peerrank.win_rate, atol=1e-12)
    np.testing.assert_allclose(a.peerrank.weighted_win_rate, b.peerrank.weighted_win_rate)
    np.testing.assert_allclose(a.peerrank.weights, b.peerrank.weights, atol=1e-12)
    assert a.peerrank.iterations == b.peerrank.iterations
    np.testing.assert_allclose(a.bt.rating, b.bt.rating, atol=1e-6)
    np.testing.assert_allclose(a.bt.ci_low, b.bt.ci_low, atol=1e-6)
    np.testing.assert_allclose(a.bt.ci_high, b.bt.ci_high, atol=1e-6)
    assert a.elo is not None and b.elo is not None
    np.testing.assert_allclose(a.elo.rating, b.elo.rating, atol=1e-6)
    for field in ("wins", "ties", "losses"):
        assert getattr(a.counts, field).tolist() == getattr(b.counts, field).tolist()
    np.testing.assert_allclose(a.pairwise, b.pairwise, equal_nan=True)


def test_diagnostics_mirror(pair) -> None:  # type: ignore[no-untyped-def]
    a, b = pair
    assert a.fleiss_kappa == pytest.approx(b.fleiss_kappa)
    for x, y in zip(a.diagnostics, b.diagnostics, strict=True):
        assert x.position_a_share == pytest.approx(1 - y.position_a_share)
        assert x.swap_consistency == pytest.approx(y.swap_consistency)
        assert x.tie_rate == pytest.approx(y.tie_rate)
        assert x.invalid_rate == pytest.approx(y.invalid_rate)
        if np.isnan(x.self_preference):
            assert np.isnan(y.self_preference)
        else:
            assert x.self_preference == pytest.approx(y.self_preference)
