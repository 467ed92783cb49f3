"""Encoding is exact on any text: long, similar, unicode and many names, nulls,
frames in several chunks or sliced; checked against a plain-Python reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

from arena.rank import ReviewSet, encode_reviews

SCORE = {"A": -1, "tie": 0, "B": 1}

# Names that differ only after the 12 bytes a string view holds inline, share
# their 4-byte prefix and length, or are multi-byte.
MODELS = [
    "claude-3-5-sonnet-20241022",
    "claude-3-5-sonnet-20240620",
    "claude-3-5-haiku-20241022x",
    "gpt-4o-2024-08-06",
    "gpt-4o-2024-05-13",
    "m",
    "model-twelve",  # exactly 12 bytes
    "model-thirteen",
    "modèle-ünïcødé-名前",
    "",
]
REVIEWERS = [*MODELS[:4], "judge-with-a-rather-long-name-0001"]


def reference(frame: pl.DataFrame) -> dict[str, Any]:
    """What encode_reviews must give, by dictionaries and sorting."""
    rows = frame.to_dicts()
    contestants = sorted({r["model_a"] for r in rows} | {r["model_b"] for r in rows})
    reviewers = sorted({r["reviewer"] for r in rows})
    counted = [
        r for r in rows if r["verdict"] in SCORE and r.get("status") not in ("invalid", "failed")
    ]
    questions = sorted({r["question_id"] for r in counted})
    return {
        "contestants": tuple(contestants),
        "reviewers": tuple(reviewers),
        "questions": tuple(questions),
        "question": [questions.index(r["question_id"]) for r in counted],
        "model_a": [contestants.index(r["model_a"]) for r in counted],
        "model_b": [contestants.index(r["model_b"]) for r in counted],
        "reviewer": [reviewers.index(r["reviewer"]) for r in counted],
        "score": [SCORE[r["verdict"]] for r in counted],
        "n_invalid": sum(
            1
            for r in rows
            if r.get("status") != "failed"
            and r["verdict"] is not None
            and (r["verdict"] == "invalid" or r.get("status") == "invalid")
        ),
    }


def assert_matches(rs: ReviewSet, expected: dict[str, Any]) -> None:
    assert rs.contestants == expected["contestants"]
    assert rs.reviewers == expected["reviewers"]
    assert rs.questions == expected["questions"]
    for name in ("question", "model_a", "model_b", "reviewer", "score"):
        assert getattr(rs, name).tolist() == expected[name], name
    assert rs.n_invalid == expected["n_invalid"]


def awkward_reviews(n: int, seed: int, questions: int = 3000) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(MODELS), n)
    b = (a + rng.integers(1, len(MODELS), n)) % len(MODELS)
    verdicts = np.array(["A", "B", "tie", "invalid", None], dtype=object)
    statuses = np.array(["ok", "ok", "ok", "invalid", "failed", None], dtype=object)
    # Question ids: many (the code table grows several times), short and long.
    question = [
        f"q{k}" if k % 2 else f"question-from-a-long-benchmark-{k:06d}"
        for k in rng.integers(0, questions, n)
    ]
    return pl.DataFrame(
        {
            "question_id": question,
            "model_a": [MODELS[i] for i in a],
            "model_b": [MODELS[i] for i in b],
            "reviewer": [REVIEWERS[i] for i in rng.integers(0, len(REVIEWERS), n)],
            "verdict": verdicts[rng.integers(0, len(verdicts), n)].tolist(),
            "status": statuses[rng.integers(0, len(statuses), n)].tolist(),
        },
        schema={c: pl.String for c in ("question_id", "model_a", "model_b", "reviewer")}
        | {"verdict": pl.String, "status": pl.String},
    )


@pytest.mark.parametrize("seed", [0, 1])
def test_awkward_text_encodes_exactly(seed: int) -> None:
    reviews = awkward_reviews(20_000, seed)
    assert_matches(encode_reviews(reviews), reference(reviews))


def test_frames_in_chunks_and_slices_encode_exactly() -> None:
    parts = [awkward_reviews(3_000, seed) for seed in range(4)]
    chunked = pl.concat(parts, rechunk=False)
    assert chunked["model_a"].n_chunks() > 1
    assert_matches(encode_reviews(chunked), reference(chunked))
    sliced = chunked.slice(1_234, 5_000)
    assert_matches(encode_reviews(sliced), reference(sliced))


def test_large_frame_is_coded_on_threads_alike() -> None:
    """Past the size where columns are coded on several threads, same result."""
    reviews = awkward_reviews(250_000, 7, questions=50)
    expected = reference(reviews)
    assert_matches(encode_reviews(reviews), expected)


def test_left_out_rows_and_self_exclusion_match_a_reference() -> None:
    reviews = awkward_reviews(5_000, 3)
    keep = MODELS[:5]
    rs = encode_reviews(reviews, contestants=keep, reviewers=REVIEWERS, exclude_self=True)
    rows = [
        r
        for r in reviews.to_dicts()
        if r["model_a"] in keep
        and r["model_b"] in keep
        and r["reviewer"] not in (r["model_a"], r["model_b"])
    ]
    counted = [
        r for r in rows if r["verdict"] in SCORE and r["status"] not in ("invalid", "failed")
    ]
    own = sum(
        1
        for r in reviews.to_dicts()
        if r["model_a"] in keep
        and r["model_b"] in keep
        and r["reviewer"] in (r["model_a"], r["model_b"])
    )
    assert rs.contestants == tuple(keep)
    assert rs.n_rows == len(rows)
    assert rs.n_self_excluded == own
    assert rs.n_battles == len(counted)
    assert rs.score.tolist() == [SCORE[r["verdict"]] for r in counted]
    assert rs.model_a.tolist() == [keep.index(r["model_a"]) for r in counted]


def test_errors_name_the_row_values() -> None:
    reviews = awkward_reviews(100, 5)
    odd = reviews.with_columns(
        verdict=pl.when(pl.int_range(pl.len()) == 57).then(pl.lit("A>B")).otherwise("verdict")
    )
    with pytest.raises(ValueError, match="unknown verdict 'A>B'"):
        encode_reviews(odd)
    same = reviews.with_columns(
        model_b=pl.when(pl.int_range(pl.len()) == 42).then("model_a").otherwise("model_b")
    )
    name = reviews["model_a"][42]
    with pytest.raises(ValueError, match=f"model '{name}' is reviewed against itself"):
        encode_reviews(same)


def test_counts_in_blocks_of_questions_equal_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many questions are counted a block at a time, on battles sorted by question; the
    ranking does not change."""
    from arena.rank import RankOptions, rank_reviews

    reviews = awkward_reviews(30_000, 11, questions=400)
    rs = encode_reviews(reviews)
    options = RankOptions(bootstrap=20, elo=False)
    whole = rank_reviews(rs, options)
    monkeypatch.setattr("arena.rank._aggregate._BLOCK_CELLS", 3 * 60 * len(MODELS) ** 2 * 5)
    blocks = rank_reviews(rs, options)
    np.testing.assert_array_equal(
        whole.peerrank.weighted_win_rate, blocks.peerrank.weighted_win_rate
    )
    np.testing.assert_allclose(whole.bt.rating, blocks.bt.rating, rtol=0, atol=1e-9)
    np.testing.assert_allclose(whole.bt.ci_low, blocks.bt.ci_low, rtol=0, atol=1e-9)
    assert whole.questions.tolist() == blocks.questions.tolist()
    assert whole.fleiss_kappa == pytest.approx(blocks.fleiss_kappa, abs=1e-12)
