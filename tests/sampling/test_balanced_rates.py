"""Opponent-balanced win rates: the mean over opponents of per-pair rates, imputed where unmet."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

from arena.rank import RankOptions, encode_reviews, rank_reviews


def _frame(rows: list[tuple[str, str, str, str, str]]) -> pl.DataFrame:
    q, a, b, r, v = zip(*rows, strict=True)
    return pl.DataFrame({"question_id": q, "model_a": a, "model_b": b, "reviewer": r, "verdict": v})


def test_on_a_full_design_balanced_rates_equal_the_plain_ones() -> None:
    rng = np.random.default_rng(4)
    names = ["a", "b", "c", "d"]
    rows = [
        (f"q{k}", x, y, r, str(rng.choice(["A", "B", "tie"])))
        for k in range(6)
        for x, y in itertools.permutations(names, 2)
        for r in names
    ]
    rs = encode_reviews(_frame(rows))
    plain = rank_reviews(rs, RankOptions(bootstrap=20, elo=False, style=False, weights="peerrank"))
    balanced = rank_reviews(
        rs, RankOptions(bootstrap=20, elo=False, style=False, balanced=True, weights="peerrank")
    )
    np.testing.assert_allclose(balanced.peerrank.win_rate, plain.peerrank.win_rate, atol=1e-12)
    np.testing.assert_allclose(
        balanced.peerrank.weighted_win_rate, plain.peerrank.weighted_win_rate, atol=1e-12
    )
    np.testing.assert_allclose(balanced.peerrank.weights, plain.peerrank.weights, atol=1e-12)


def _lopsided() -> pl.DataFrame:
    """x met only the weak z (many times); y met x and z once each; one judge."""
    rows = []
    for k in range(8):  # x beats z 6 of 8
        rows.append((f"q{k}", "x", "z", "j", "A" if k < 6 else "B"))
    rows.append(("q0", "y", "x", "j", "A"))  # y beats x
    rows.append(("q1", "y", "z", "j", "B"))  # z beats y
    return _frame(rows)


def test_balanced_rate_is_the_mean_of_per_pair_rates() -> None:
    rs = encode_reviews(_lopsided())
    plain = rank_reviews(rs, RankOptions(bootstrap=0, elo=False, style=False))
    balanced = rank_reviews(rs, RankOptions(bootstrap=0, elo=False, style=False, balanced=True))
    i = {name: k for k, name in enumerate(rs.contestants)}
    # Plain: x won 6 of its 9 battles. Balanced: mean of 6/8 (vs z) and 0/1 (vs y).
    assert plain.peerrank.win_rate[i["x"]] == pytest.approx(6 / 9)
    assert balanced.peerrank.win_rate[i["x"]] == pytest.approx((6 / 8 + 0.0) / 2)
    assert balanced.peerrank.win_rate[i["y"]] == pytest.approx((1.0 + 0.0) / 2)
    assert balanced.peerrank.win_rate[i["z"]] == pytest.approx((2 / 8 + 1.0) / 2)


def test_a_pair_never_compared_is_imputed_from_bradley_terry() -> None:
    rows = []
    for k in range(4):  # x beats y 3 of 4, y beats z 3 of 4, x and z never meet
        rows.append((f"q{k}", "x", "y", "j", "A" if k < 3 else "B"))
        rows.append((f"q{k}", "y", "z", "j", "A" if k < 3 else "B"))
    rs = encode_reviews(_frame(rows))
    balanced = rank_reviews(rs, RankOptions(bootstrap=0, elo=False, style=False, balanced=True))
    i = {name: k for k, name in enumerate(rs.contestants)}
    rate_x = balanced.peerrank.win_rate[i["x"]]
    # x's rate vs z is imputed above 3/4 (x is two steps above z), so its mean is above 3/4.
    imputed = 2 * rate_x - 0.75
    assert 0.75 < imputed < 1.0
    assert balanced.peerrank.win_rate[i["z"]] == pytest.approx((0.25 + (1 - imputed)) / 2)
    assert 0.0 <= balanced.peerrank.weighted_win_rate.min()
    assert balanced.peerrank.weighted_win_rate.max() <= 1.0
