"""`RunLog.read_coded`: a table's few-valued texts as codes and plan-made ids as their
digest bytes, row for row what `RunLog.read` gives."""

from __future__ import annotations

import hashlib
from pathlib import Path

import polars as pl
import pytest

from arena.store import DIGEST_ID, RunLog, digest_bytes, digest_bytes_of
from tests.store.test_store_log import review, write_rows

CODED = ["question_id", "model_a", "model_b", "reviewer", "verdict", "status"]
COLUMNS = [*CODED, "p_a", "weight"]


def digest(letter: str, i: int) -> str:
    return f"{letter}-{hashlib.sha256(str(i).encode()).hexdigest()[:24]}"


def as_text(frame: pl.DataFrame, letters: dict[str, str]) -> pl.DataFrame:
    """The frame with its digest-byte columns as the ids' texts again."""
    return frame.with_columns(
        (pl.lit(f"{letter}-") + pl.col(name).bin.encode("hex")).alias(name)
        for name, letter in letters.items()
        if frame.schema[name] == pl.Binary
    )


def write_reviews(directory: Path, ids: list[str], answers: list[str | None]) -> None:
    rows = [
        (
            "reviews",
            review(
                i,
                id=rid,
                question_id=f"q{i % 7}",
                model_a=f"m{i % 3}",
                reviewer=f"m{i % 4}",
                answer_a_id=answers[i],
            ),
        )
        for i, rid in enumerate(ids)
    ]
    # Written again later (a retried call): the last row of an id is the one read.
    rows += [("reviews", review(3, id=ids[3], verdict="B", answer_a_id=answers[3]))]
    write_rows(directory, rows, compact_every=40)


def test_plan_ids_come_as_their_digest_bytes_in_id_order(tmp_path: Path) -> None:
    ids = [digest("r", i) for i in range(300)]
    answers: list[str | None] = [None if i % 11 == 0 else digest("a", i % 17) for i in range(300)]
    write_reviews(tmp_path, ids, answers)
    log = RunLog(tmp_path)
    got = log.read_coded("reviews", COLUMNS, CODED, digests=["answer_a_id"])
    assert got.schema["id"] == pl.Binary and got.schema["answer_a_id"] == pl.Binary
    assert got["id"].flags["SORTED_ASC"]
    assert all(isinstance(got.schema[c], pl.Enum) for c in CODED)
    expected = log.read("reviews", [*COLUMNS, "answer_a_id"]).sort("id")
    text = as_text(got, {"id": "r", "answer_a_id": "a"}).with_columns(
        pl.col(c).cast(pl.String) for c in CODED
    )
    assert text.select(expected.columns).equals(expected)
    assert got.filter(pl.col("answer_a_id").is_null()).height == answers.count(None)


@pytest.mark.parametrize(
    ("odd_id", "odd_answer", "text_ids", "text_answers"),
    [
        ("r-not-a-digest", digest("a", 1), True, False),  # an id the plan did not make
        (digest("x", 999), digest("a", 1), True, False),  # a digest of another letter
        (digest("r", 999), "answer-7", False, True),  # an answer id that is not a digest
    ],
)
def test_other_ids_come_as_text_in_every_part(
    tmp_path: Path, odd_id: str, odd_answer: str, text_ids: bool, text_answers: bool
) -> None:
    ids = [digest("r", i) for i in range(299)] + [odd_id]
    answers: list[str | None] = [digest("a", i % 17) for i in range(299)] + [odd_answer]
    write_reviews(tmp_path, ids, answers)
    log = RunLog(tmp_path)
    got = log.read_coded("reviews", COLUMNS, CODED, digests=["answer_a_id"])
    expected = log.read("reviews", [*COLUMNS, "answer_a_id"]).sort("id")
    # The odd value is in the last part: the parts read before it are text again.
    assert (got.schema["id"] == pl.String) == text_ids
    assert (got.schema["answer_a_id"] == pl.String) == text_answers
    text = as_text(got, {"id": "r", "answer_a_id": "a"}).with_columns(
        pl.col(c).cast(pl.String) for c in CODED
    )
    assert text.sort("id").select(expected.columns).equals(expected)


def test_digest_bytes_compare_as_the_texts_do() -> None:
    texts = pl.Series([digest("r", i) for i in range(50)] + ["r-" + "0" * 24, "r-" + "f" * 24])
    found = digest_bytes(texts)
    assert found is not None and found.dtype == pl.Binary
    assert found.arg_sort().to_list() == texts.arg_sort().to_list()
    assert digest_bytes(pl.Series(["r-" + "0" * 24, "a-" + "0" * 24])) is None  # two letters
    assert digest_bytes(pl.Series(["r-" + "0" * 23])) is None
    assert digest_bytes(pl.Series([None, "a-" + "1" * 24])) is not None  # nulls stay null
    # The ids of a plan file compared with them: the digests, the others left out.
    assert digest_bytes_of(pl.Series(["r-" + "1" * 24, "r-1", None])).to_list() == [
        bytes.fromhex("1" * 24)
    ]
    assert pl.Series(["r-" + "a" * 24]).str.contains(DIGEST_ID).all()
