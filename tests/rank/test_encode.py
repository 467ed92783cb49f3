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


@pytest.mark.parametrize("extra_names", [0, 200, 40_000])
def test_enum_codes_of_any_width_with_nulls_encode_as_the_texts(extra_names: int) -> None:
    """Enum columns reach the row pass as their own codes (a byte a row for a few
    names, two for more), or as the narrowest signed codes when they hold nulls
    (null is -1): the battles and counts are those of the same columns as texts."""
    reviews = random_reviews(models=4, questions=5, seed=2)
    verdicts = reviews["verdict"].to_list()
    verdicts[::7] = [None] * len(verdicts[::7])  # failed calls: no verdict
    reviews = reviews.with_columns(pl.Series("verdict", verdicts, dtype=pl.String))
    extra = [f"zz{i:05d}" for i in range(extra_names)]
    names = sorted({*reviews["model_a"], *reviews["model_b"], *reviews["reviewer"]})
    typed = reviews.with_columns(
        pl.col("model_a", "model_b", "reviewer").cast(pl.Enum([*names, *extra])),
        pl.col("verdict").cast(pl.Enum(["A", "B", "tie", "invalid", *extra])),
        pl.col("question_id").cast(pl.Enum(sorted(set(reviews["question_id"])) + extra)),
    )
    wide = extra_names > 255
    assert typed["model_a"].to_physical().dtype == (pl.UInt16 if wide else pl.UInt8)
    plain, fast = encode_reviews(reviews), encode_reviews(typed)
    assert fast.n_failed == plain.n_failed == len(verdicts[::7])
    assert fast.contestants == plain.contestants and fast.questions == plain.questions
    for name in ("question", "model_a", "model_b", "reviewer", "score"):
        np.testing.assert_array_equal(getattr(plain, name), getattr(fast, name))
    np.testing.assert_array_equal(plain.answered_per_reviewer, fast.answered_per_reviewer)
