"""The id order ranking reads reviews in: the same as polars' text sort, found faster."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arena.report._order import sort_by_id, text_order
from arena.rundir import PLAN_SCHEMA, current_rows, write_plan


def _frame(ids: Sequence[str | None]) -> pl.DataFrame:
    return pl.DataFrame(
        {"id": ids, "row": list(range(len(ids)))}, schema_overrides={"id": pl.String}
    )


def _ids(n: int, alphabet: str, prefix: str, seed: int, longest: int = 12) -> list[str]:
    rng = random.Random(seed)
    return [
        prefix + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest)))
        for _ in range(n)
    ]


@pytest.mark.parametrize(
    ("alphabet", "prefix", "longest"),
    [
        ("0123456789abcdef", "r-", 24),  # a log's ids, some repeated
        ("ab\u00e9z\x01\x00", "", 12),  # any text: non-ASCII, NUL bytes, prefixes of others
        ("ab", "review-000", 6),  # a long prefix every id shares, few distinct bytes after
        ("xyz", "", 70),  # ids longer than 64 bytes: sorted as text
    ],
)
def test_sort_by_id_gives_the_text_sort(alphabet: str, prefix: str, longest: int) -> None:
    ids = _ids(25_000, alphabet, prefix, seed=len(alphabet), longest=longest)
    ids += ids[:500] + [prefix, prefix + "a", prefix + "a\x00"]  # ties keep their row order
    frame = _frame(ids)
    expected = frame.sort("id", maintain_order=True)
    got = sort_by_id(frame)
    assert got.equals(expected)
    assert sort_by_id(frame, nulls_last=True).equals(expected)
    order = text_order(frame["id"])
    if longest <= 64:
        assert order is not None and order.tolist() == expected["row"].to_list()
    else:
        assert order is None


def test_sort_by_id_with_nulls_and_without_ids() -> None:
    ids: list[str | None] = [*_ids(20_000, "abc", "q", seed=3), None, None]
    frame = _frame(ids)
    assert text_order(frame["id"]) is None
    assert sort_by_id(frame).equals(frame.sort("id", maintain_order=True))
    last = sort_by_id(frame, nulls_last=True)
    assert last.equals(frame.sort("id", maintain_order=True, nulls_last=True))
    assert last["id"][-1] is None
    plain = pl.DataFrame({"question_id": ["b", "a"]})
    assert sort_by_id(plain) is plain


def test_a_sorted_frame_is_not_sorted_again() -> None:
    frame = sort_by_id(_frame(_ids(20_000, "0123456789abcdef", "r-", seed=5)))
    assert frame["id"].flags["SORTED_ASC"]
    assert sort_by_id(frame) is frame


def test_current_rows_keeps_the_planned_rows_in_their_order(tmp_path: Path) -> None:
    planned = [f"r-{i}" for i in range(6)]
    plan = pl.DataFrame(
        {name: [None] * 7 for name in PLAN_SCHEMA.names()}, schema=PLAN_SCHEMA
    ).with_columns(
        pl.Series("id", [*planned, "a-0"]), pl.Series("stage", ["reviews"] * 6 + ["answers"])
    )
    write_plan(tmp_path, plan)
    everything = pl.DataFrame({"id": ["r-4", "r-1", "r-0"], "v": [4, 1, 0]})
    assert current_rows(tmp_path, "reviews", everything) is everything  # all planned: as is
    mixed = pl.DataFrame({"id": ["r-5", "gone", "r-2", "a-0", "r-3"], "v": [5, 9, 2, 7, 3]})
    kept = current_rows(tmp_path, "reviews", mixed)
    assert kept.to_dict(as_series=False) == {"id": ["r-5", "r-2", "r-3"], "v": [5, 2, 3]}
    assert current_rows(tmp_path / "none", "reviews", mixed) is mixed  # no plan: every row


def test_the_leaderboard_keeps_no_copy_of_the_reviews_while_it_ranks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Once coded, the reviews' frames (as read, sorted, with their answers' style) are
    # freed before the ranking: a million reviews' columns do not add to its peak.
    import gc
    import weakref

    from click.testing import CliRunner

    import arena.report._leaderboard as board_module
    from arena.cli import main
    from arena.report import build_leaderboard
    from tests.conftest import small_tournament

    config = small_tournament(tmp_path, models=3, questions=4)
    assert (
        CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "out")]).exit_code
        == 0
    )
    frames: list[weakref.ref[pl.DataFrame]] = []
    real_load, real_encode, real_rank = (
        getattr(board_module, name) for name in ("load_runs", "encode_reviews", "rank_reviews")
    )

    def load(*args: Any, **kwargs: Any) -> Any:
        run = real_load(*args, **kwargs)
        frames.append(weakref.ref(run.reviews))
        return run

    def encode(reviews: pl.DataFrame, **kwargs: Any) -> Any:
        frames.append(weakref.ref(reviews))
        return real_encode(reviews, **kwargs)

    alive: list[tuple[bool, ...]] = []

    def rank(*args: Any, **kwargs: Any) -> Any:
        gc.collect()
        alive.append(tuple(ref() is not None for ref in frames))
        return real_rank(*args, **kwargs)

    monkeypatch.setattr(board_module, "load_runs", load)
    monkeypatch.setattr(board_module, "encode_reviews", encode)
    monkeypatch.setattr(board_module, "rank_reviews", rank)
    board = build_leaderboard(tmp_path / "out")
    assert alive == [(False, False)]  # (as read and sorted, as coded with its style)
    assert board.order
    # --by category ranks the reviews again per category: the frame as read is kept
    # (the styled copy still goes).
    frames.clear()
    alive.clear()
    build_leaderboard(tmp_path / "out", by="category")
    assert alive[0] == (True, False)
