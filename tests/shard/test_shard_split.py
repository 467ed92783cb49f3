"""How `--shard K/N` splits a tournament: by question, every call of a question together."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.config import load_tournament
from arena.engine import build_plan
from arena.shard import Shard, parse_shard, shard_of, shard_tournament
from tests.conftest import small_tournament


def test_parse_shard() -> None:
    assert parse_shard("2/5") == Shard(2, 5)
    assert str(parse_shard(" 1 / 1 ")) == "1/1"
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "-1/2"):
        with pytest.raises(ValueError, match="shard"):
            parse_shard(bad)


def test_shard_of_is_stable_and_spreads() -> None:
    # SHA-256 of the id: these values never change between machines or versions.
    ids = ("q0", "q1", "q2", "q3", "q4", "q5")
    assert [shard_of(q, 3) for q in ids] == [1, 2, 3, 2, 3, 1]
    counts = [0, 0, 0, 0]
    for i in range(4000):
        counts[shard_of(f"question-{i}", 4) - 1] += 1
    assert min(counts) > 900  # about a quarter each


def test_shards_partition_the_plan_by_question(tmp_path: Path) -> None:
    t = load_tournament(small_tournament(tmp_path, models=3, questions=12))
    full = build_plan(t)
    answers: list[str] = []
    reviews: list[str] = []
    for k in (1, 2, 3):
        part = build_plan(shard_tournament(t, Shard(k, 3)))
        assert all(shard_of(a.question.id, 3) == k for a in part.answers)
        # Each review's answers are made in the same shard.
        own = {a.id for a in part.answers}
        assert all({r.answer_a_id, r.answer_b_id} <= own for r in part.reviews)
        answers += [a.id for a in part.answers]
        reviews += [r.id for r in part.reviews]
    # Together the shards make exactly the unsplit run's calls, each once, same ids.
    assert sorted(answers) == sorted(a.id for a in full.answers)
    assert sorted(reviews) == sorted(r.id for r in full.reviews)
