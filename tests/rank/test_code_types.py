"""A review set's codes are the narrowest integers that hold them (a byte a battle for a
tournament's models), and nothing computed from them depends on that: every
result equals the one from the same codes widened to int32."""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from arena.rank import (
    RankOptions,
    ReviewSet,
    bootstrap_counts,
    encode_reviews,
    rank_reviews,
    resample,
    tally_reviews,
)
from arena.rank._sandwich import question_pairs
from tests.rank._frames import frame, random_reviews


def widened(rs: ReviewSet) -> ReviewSet:
    """The same review set with every code an int32 (the type codes had before)."""
    return dataclasses.replace(
        rs,
        question=rs.question.astype(np.int32),
        model_a=rs.model_a.astype(np.int32),
        model_b=rs.model_b.astype(np.int32),
        reviewer=rs.reviewer.astype(np.int32),
    )


def with_lengths(reviews: pl.DataFrame, seed: int) -> pl.DataFrame:
    """Random answer lengths per (question, model), as style control reads them."""
    rng = np.random.default_rng(seed)
    keys = sorted(set(reviews["question_id"]) | set(reviews["model_a"]))
    length = {key: float(v) for key, v in zip(keys, rng.integers(50, 900, len(keys)), strict=True)}
    return reviews.with_columns(
        length_a=pl.col("model_a").replace_strict(length, return_dtype=pl.Float64)
        + pl.col("question_id").replace_strict(length, default=0.0, return_dtype=pl.Float64),
        length_b=pl.col("model_b").replace_strict(length, return_dtype=pl.Float64)
        + pl.col("question_id").replace_strict(length, default=0.0, return_dtype=pl.Float64),
    )


def assert_same_ranking(options: RankOptions, rs: ReviewSet) -> None:
    narrow, wide = rank_reviews(rs, options), rank_reviews(widened(rs), options)
    for name in ("rating", "ci_low", "ci_high"):
        np.testing.assert_array_equal(getattr(narrow.bt, name), getattr(wide.bt, name))
    np.testing.assert_array_equal(narrow.peerrank.weights, wide.peerrank.weights)
    np.testing.assert_array_equal(
        narrow.peerrank.weighted_win_rate, wide.peerrank.weighted_win_rate
    )
    np.testing.assert_array_equal(narrow.win_rate_ci, wide.win_rate_ci)
    np.testing.assert_array_equal(narrow.pair_battles, wide.pair_battles)
    assert narrow.elo is not None and wide.elo is not None
    np.testing.assert_array_equal(narrow.elo.rating, wide.elo.rating)
    np.testing.assert_array_equal(narrow.elo_ci, wide.elo_ci)
    assert (narrow.style is None) == (wide.style is None)
    if narrow.style is not None and wide.style is not None:
        np.testing.assert_allclose(narrow.style.rating, wide.style.rating, rtol=0, atol=1e-9)
    if narrow.bt_covariance is not None:
        np.testing.assert_allclose(narrow.bt_covariance, wide.bt_covariance, rtol=0, atol=1e-9)


@pytest.mark.parametrize(
    ("weights", "intervals"),
    [("peerrank", "bootstrap"), ("reliability", "sandwich"), ("equal", "bootstrap")],
)
def test_many_questions_code_in_two_bytes_and_rank_as_wide_codes(
    weights: str, intervals: str
) -> None:
    """300 questions (int16 codes, past any byte) of 4 models judged by 4 reviewers (int8)."""
    reviews = with_lengths(random_reviews(models=4, questions=300, seed=3), seed=3)
    rs = encode_reviews(reviews)
    assert rs.question.dtype == np.int16
    assert rs.model_a.dtype == rs.model_b.dtype == rs.reviewer.dtype == np.int8
    assert rs.n_questions == 300 and int(rs.question.max()) == 299
    options = RankOptions(bootstrap=30, elo_orders=4, seed=2, weights=weights, intervals=intervals)
    assert_same_ranking(options, rs)


def test_more_than_128_models_code_in_two_bytes() -> None:
    """130 contestants: model codes up to 129 need int16; two reviewers stay int8."""
    rng = np.random.default_rng(7)
    names = [f"m{i:03d}" for i in range(130)]
    rows: list[tuple[str, str, str, str, str | None]] = []
    for q in range(6):
        for i in range(130):
            for j in rng.choice([k for k in range(130) if k != i], size=5, replace=False):
                for reviewer in ("m000", "m129"):
                    verdict = "A" if i > j else "B" if rng.random() < 0.8 else "tie"
                    rows.append((f"q{q}", names[i], names[int(j)], reviewer, verdict))
    rs = encode_reviews(frame(rows), reviewers=["m000", "m129"])
    assert rs.model_a.dtype == rs.model_b.dtype == np.int16
    assert rs.reviewer.dtype == rs.question.dtype == np.int8
    assert int(rs.model_a.max()) == 129
    assert_same_ranking(RankOptions(bootstrap=2, elo_orders=2, seed=1), rs)


def test_question_features_widen_when_a_cell_holds_many_battles() -> None:
    """A byte holds a question's doubled win values while its cells have a few battles;
    a reviewer judging one pair 40 times in one question needs two bytes. Either way
    the bootstrap's resampled tensors and the sandwich's per-question pairs are those
    of the int32 features."""
    few = encode_reviews(random_reviews(models=3, questions=8, seed=1))
    many_rows = [("q0", "m0", "m1", "m0", "A")] * 40 + [("q1", "m1", "m0", "m2", "tie")] * 3
    many = encode_reviews(
        pl.concat([random_reviews(models=3, questions=8, seed=1), frame(many_rows)])
    )
    for rs, dtype in ((few, np.int8), (many, np.int16)):
        features = tally_reviews(rs).features
        assert features is not None and isinstance(features.matrix, np.ndarray)
        assert features.matrix.dtype == dtype
        wide = dataclasses.replace(features, matrix=features.matrix.astype(np.int32))
        counts = bootstrap_counts(rs.n_questions, 25, seed=4)
        np.testing.assert_array_equal(resample(features, counts), resample(wide, counts))
        weights = np.random.default_rng(2).random(features.shape)
        np.testing.assert_array_equal(
            question_pairs(features, weights), question_pairs(wide, weights)
        )
    assert int(tally_reviews(many).features.matrix.max()) == 80  # type: ignore[union-attr]


def test_sandwich_pairs_are_the_same_a_block_of_questions_at_a_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`question_pairs` weighs a block of questions at a time; blocks of one question
    give what one block of all of them gives."""
    import arena.rank._sandwich as sandwich

    rs = encode_reviews(random_reviews(models=4, questions=30, seed=8))
    features = tally_reviews(rs).features
    assert features is not None
    weights = np.random.default_rng(5).random(features.shape)
    whole = question_pairs(features, weights)
    cells = int(np.prod(features.shape))
    monkeypatch.setattr(sandwich, "_BLOCK_CELLS", cells)  # one question a block
    np.testing.assert_array_equal(question_pairs(features, weights), whole)
    assert whole.shape == (30, 4, 4)
