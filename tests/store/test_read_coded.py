"""`RunLog.read_coded`: a table's few-valued texts as codes and plan-made ids as their
digits (one 96-bit number), row for row what `RunLog.read` gives."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from arena.store import (
    DIGEST_ID,
    RunLog,
    digest_fingerprint,
    digest_keys,
    digest_keys_of,
    digest_order,
    part_rows,
)
from arena.store._files import halves_order, keys_of_halves
from tests.store.test_store_log import review, write_rows

CODED = ["question_id", "model_a", "model_b", "reviewer", "verdict", "status", "answer_a_id"]
COLUMNS = [*CODED, "p_a", "weight"]


def digest(letter: str, i: int) -> str:
    return f"{letter}-{hashlib.sha256(str(i).encode()).hexdigest()[:24]}"


def as_text(frame: pl.DataFrame, letter: str) -> pl.DataFrame:
    """The frame with its codes as texts and its numeric ids as the ids' texts again."""
    out = frame.with_columns(pl.col(c).cast(pl.String) for c in CODED)
    if out.schema["id"] != pl.Int128:
        return out
    digits = [f"{letter}-{value:024x}" for value in out["id"].to_list()]
    return out.with_columns(pl.Series("id", digits, dtype=pl.String))


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


def test_plan_ids_come_as_their_digits_in_id_order(tmp_path: Path) -> None:
    ids = [digest("r", i) for i in range(300)]
    answers: list[str | None] = [None if i % 11 == 0 else digest("a", i % 17) for i in range(300)]
    write_reviews(tmp_path, ids, answers)
    log = RunLog(tmp_path)
    got = log.read_coded("reviews", COLUMNS, CODED)
    assert got.schema["id"] == pl.Int128
    assert got["id"].flags["SORTED_ASC"]
    assert all(isinstance(got.schema[c], pl.Enum) for c in CODED)
    expected = log.read("reviews", COLUMNS).sort("id")
    assert as_text(got, "r").select(expected.columns).equals(expected)
    assert got.filter(pl.col("answer_a_id").is_null()).height == answers.count(None)
    assert got.filter(pl.col("verdict") == "B")["id"].to_list()[0] >= 0
    # The parts' footers count every row written, the superseded one too.
    assert part_rows(tmp_path, "reviews") == 301
    assert part_rows(tmp_path, "answers") == 0
    assert part_rows(tmp_path / "nowhere", "reviews") == 0 and not (tmp_path / "nowhere").exists()


def test_a_known_fingerprint_spares_the_keys_and_keeps_the_id_order(tmp_path: Path) -> None:
    """Told the fingerprint its ids have (the plan's), `read_coded` makes no key: the
    same rows in the same id order, without the `id` column. Any other fingerprint
    (one id fewer, another id) and the keys are made as ever."""
    ids = [digest("r", i) for i in range(300)]
    answers: list[str | None] = [digest("a", i % 17) for i in range(300)]
    write_reviews(tmp_path, ids, answers)
    log = RunLog(tmp_path)
    keyed = log.read_coded("reviews", COLUMNS, CODED)
    known = digest_fingerprint(digest_keys_of(pl.Series(ids)))
    assert known == digest_fingerprint(keyed["id"])  # the latest row of each id, once
    keyless = log.read_coded("reviews", COLUMNS, CODED, known=known)
    assert "id" not in keyless.columns
    assert keyless.equals(keyed.drop("id"))  # same rows, same (id) order, same Enums
    for other in (ids[1:], [*ids[1:], digest("r", 999)]):
        print_ = digest_fingerprint(digest_keys_of(pl.Series(other)))
        assert log.read_coded("reviews", COLUMNS, CODED, known=print_).equals(keyed)


@pytest.mark.parametrize(
    "odd_id",
    [
        "r-not-a-digest",  # an id the plan did not make, in the last part
        digest("x", 999),  # a digest of another letter
        "r-" + "A" * 24,  # upper-case digits (as numbers, equal to another id)
    ],
)
def test_other_ids_come_as_text(tmp_path: Path, odd_id: str) -> None:
    ids = [digest("r", i) for i in range(299)] + [odd_id]
    answers: list[str | None] = [digest("a", i % 17) for i in range(300)]
    write_reviews(tmp_path, ids, answers)
    log = RunLog(tmp_path)
    got = log.read_coded("reviews", COLUMNS, CODED)
    assert got.schema["id"] == pl.String
    expected = log.read("reviews", COLUMNS).sort("id")
    assert as_text(got, "r").sort("id").select(expected.columns).equals(expected)


def test_a_log_of_the_known_ids_each_once_is_ordered_in_place_as_ever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log holding each known id once (no retried row) is ordered on its ids' first
    halves in place: the same rows in the same order as the keyed read."""
    import arena.store._log as store_log

    ids = [digest("r", i) for i in range(300)]
    rows = [("reviews", review(i, id=rid, question_id=f"q{i % 7}")) for i, rid in enumerate(ids)]
    write_rows(tmp_path, rows, compact_every=40)
    log = RunLog(tmp_path)
    consumed: list[bool] = []
    real = store_log.halves_order

    def order(high: np.ndarray, low: np.ndarray, **kwargs: bool) -> np.ndarray:
        consumed.append(kwargs.get("consume", False))
        return real(high, low, **kwargs)

    monkeypatch.setattr(store_log, "halves_order", order)
    keyed = log.read_coded("reviews", COLUMNS, CODED, parts=3)
    known = digest_fingerprint(digest_keys_of(pl.Series(ids)))
    keyless = log.read_coded("reviews", COLUMNS, CODED, known=known, parts=3)
    assert consumed == [False, True]
    assert "id" not in keyless.columns and keyless.equals(keyed.drop("id"))


def test_ordering_in_place_orders_as_the_copy_does() -> None:
    """`halves_order(consume=True)` sorts the first halves themselves and keeps only the
    bits the packing drops: keys equal in their kept bits (or in all 64 first bits)
    are put in order by those and the last 32, as the copy's order does."""
    rng = np.random.default_rng(3)
    high = rng.integers(0, 1 << 63, size=5000, dtype=np.uint64)
    low = rng.integers(0, 1 << 32, size=5000, dtype=np.uint64).astype(np.uint32)
    kept = np.uint64(~((1 << 13) - 1) & ((1 << 64) - 1))  # 5000 rows: 13 position bits
    high[100:140] = (high[7] & kept) | rng.integers(0, 1 << 13, size=40, dtype=np.uint64)
    high[200:210] = high[9]  # equal first halves: the last 32 bits tell
    want = halves_order(high, low)
    got = halves_order(high.copy(), low, consume=True)
    assert got.tolist() == want.tolist()
    assert want.tolist() == np.lexsort((np.arange(5000), low, high)).tolist()


def test_digest_keys_compare_as_the_texts_do() -> None:
    texts = pl.Series([digest("r", i) for i in range(50)] + ["r-" + "0" * 24, "r-" + "f" * 24])
    found = digest_keys(texts)
    assert found is not None and found.dtype == pl.Int128
    assert found.arg_sort().to_list() == texts.arg_sort().to_list()
    assert found.to_list()[-2:] == [0, (1 << 96) - 1]
    assert digest_keys(pl.Series(["r-" + "0" * 24, "a-" + "0" * 24])) is None  # two letters
    assert digest_keys(pl.Series(["r-" + "0" * 23])) is None
    assert digest_keys(pl.Series(["r-+" + "0" * 23])) is None  # a sign is not a digit
    assert digest_keys(pl.Series([None, "a-" + "1" * 24])) is not None  # nulls stay null
    # The ids of a plan file compared with them: the digests, the others left out.
    assert digest_keys_of(pl.Series(["r-" + "1" * 24, "r-1", None])).to_list() == [
        int("1" * 24, 16)
    ]
    assert pl.Series(["r-" + "a" * 24]).str.contains(DIGEST_ID).all()


def test_digest_order_sorts_by_all_96_bits_and_keeps_equal_keys_in_order() -> None:
    # Random keys, keys sharing their first 64 bits (only the last 32 tell them apart) and
    # keys equal in all 96: the order is that of a stable sort of the whole numbers.
    texts = [digest("r", i) for i in range(300)]
    texts += [texts[7][:18] + f"{i:08x}" for i in (9, 3, 3, 0, 7)]  # one 64-bit prefix
    texts += [texts[11], texts[40], texts[11]]  # whole repeats
    texts += ["r-" + "0" * 24, "r-" + "f" * 24, "r-" + "0" * 16 + "00000001"]
    keys = digest_keys(pl.Series(texts))
    assert keys is not None
    want = sorted(range(len(texts)), key=lambda i: (texts[i], i))
    assert digest_order(keys).tolist() == want
    # With `latest`, each key's last row alone: what `drop_repeats` keeps, in key order.
    last = {text: i for i, text in enumerate(texts)}
    assert digest_order(keys, latest=True).tolist() == [last[t] for t in sorted(last)]
    assert digest_order(keys.head(0)).tolist() == []
    assert digest_order(keys.head(1)).tolist() == [0]
    # The same order from the keys' two halves (as `read_coded` holds ids while reading),
    # and the keys made again from the halves in that order.
    high = pl.Series([int(t[2:18], 16) for t in texts], dtype=pl.UInt64).to_numpy()
    low = pl.Series([int(t[18:], 16) for t in texts], dtype=pl.UInt32).to_numpy()
    assert halves_order(high, low).tolist() == want
    latest = halves_order(high, low, latest=True)
    assert latest.tolist() == [last[t] for t in sorted(last)]
    assert keys_of_halves(high, low, latest).to_list() == keys.gather(latest).to_list()
    assert high.tolist() == [int(t[2:18], 16) for t in texts]  # the halves are left as given


@pytest.mark.parametrize("parts_per_frame", [1, 3, 64])
def test_texts_first_seen_in_later_parts_get_the_codes_of_their_text_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parts_per_frame: int
) -> None:
    """Each frame keeps its own codes (a byte or two a row) until the Enums are known: a
    question or model first written in a later part, and sorting before the earlier
    ones, still gets the code of its place in text order."""
    monkeypatch.setattr("arena.store._log.CODED_PARTS", parts_per_frame)
    ids = [digest("r", i) for i in range(400)]
    rows = [
        (
            "reviews",
            review(
                i,
                id=rid,
                question_id=f"q{(400 - i) // 37:03d}",  # later parts: smaller texts
                model_a="m9" if i >= 360 else f"m{i % 3}",  # m9 only in the last parts
                reviewer=f"m{i % 4}",
                status="failed" if i % 53 == 0 else "ok",
                verdict=None if i % 53 == 0 else "A" if i % 2 else "tie",
                answer_a_id=None if i % 11 == 0 else digest("a", i // 5),
            ),
        )
        for i, rid in enumerate(ids)
    ]
    write_rows(tmp_path, rows, compact_every=40)
    log = RunLog(tmp_path)
    got = log.read_coded("reviews", COLUMNS, CODED)
    expected = log.read("reviews", COLUMNS).sort("id")
    assert as_text(got, "r").select(expected.columns).equals(expected)
    for c in CODED:
        values = got.schema[c].categories.to_list()  # type: ignore[union-attr]
        assert values == sorted(expected[c].drop_nulls().unique().to_list())
        codes = got[c].to_physical().drop_nulls().to_numpy()
        assert codes.dtype.itemsize <= 2  # a frame's codes, narrowed


def test_a_column_null_in_some_parts_only_keeps_its_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Graded columns null in whole frames stand as Null columns while read; a column with
    values in some frames is read as written, one null everywhere comes as a Null column."""
    monkeypatch.setattr("arena.store._log.CODED_PARTS", 1)
    ids = [digest("r", i) for i in range(200)]
    rows = [
        ("reviews", review(i, id=rid, p_a=0.25 if 120 <= i < 150 else None, weight=None))
        for i, rid in enumerate(ids)
    ]
    write_rows(tmp_path, rows, compact_every=40)
    log = RunLog(tmp_path)
    got = log.read_coded("reviews", COLUMNS, CODED)
    expected = log.read("reviews", COLUMNS).sort("id")
    assert got.schema["p_a"] == pl.Float64 and got.schema["weight"] == pl.Null
    assert got["p_a"].drop_nulls().len() == 30
    texts = as_text(got, "r").with_columns(pl.col("weight").cast(pl.Float64))
    assert texts.select(expected.columns).equals(expected)
