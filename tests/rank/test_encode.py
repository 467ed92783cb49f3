"""Encoding reviews: dtypes, filters, counts."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from arena.rank import encode_reviews
from tests.rank._frames import frame, random_reviews


def test_enum_and_string_columns_encode_alike() -> None:
    reviews = random_reviews(models=3, questions=3, seed=1)
    models = pl.Enum(["m0", "m1", "m2", "unused"])
    typed = reviews.with_columns(
        pl.col("model_a", "model_b", "reviewer").cast(models),
        pl.col("verdict").cast(pl.Enum(["A", "B", "tie", "invalid"])),
    )
    plain, fast = encode_reviews(reviews), encode_reviews(typed)
    assert plain.contestants == fast.contestants == ("m0", "m1", "m2")
    for name in ("question", "model_a", "model_b", "reviewer", "score"):
        np.testing.assert_array_equal(getattr(plain, name), getattr(fast, name))


def test_integer_question_ids() -> None:
    reviews = frame([("7", "X", "Y", "J", "A"), ("1000000", "Y", "X", "J", "B")])
    rs = encode_reviews(reviews.with_columns(pl.col("question_id").cast(pl.Int64)))
    assert rs.questions == ("7", "1000000")
    assert rs.question.tolist() == [0, 1]


def test_reviewer_counts() -> None:
    rs = encode_reviews(
        frame(
            [
                ("q1", "X", "Y", "J", "A"),
                ("q1", "Y", "X", "J", "invalid"),
                ("q2", "X", "Y", "J", None),
                ("q2", "X", "Y", "K", "tie"),
            ]
        )
    )
    assert rs.reviewers == ("J", "K")
    assert rs.answered_per_reviewer.tolist() == [2, 1]
    assert rs.invalid_per_reviewer.tolist() == [1, 0]
    assert rs.reviewer_as_contestant.tolist() == [-1, -1]


def test_missing_values_and_columns() -> None:
    with pytest.raises(ValueError, match="lacks column"):
        encode_reviews(frame([("q1", "X", "Y", "J", "A")]).drop("reviewer"))
    bad = frame([("q1", "X", "Y", "J", "A")]).with_columns(model_b=pl.lit(None, pl.String))
    with pytest.raises(ValueError, match="missing value"):
        encode_reviews(bad)


def test_empty_frame() -> None:
    rs = encode_reviews(frame([]))
    assert rs.n_rows == 0 and rs.contestants == () and rs.n_battles == 0
