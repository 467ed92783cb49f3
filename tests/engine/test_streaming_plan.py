"""The plan held as columns, reviews made one at a time as the runner has room."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import arena.pipeline as pipeline
import arena.pipeline._allpairs as allpairs
from arena.config import load_tournament
from arena.engine import run_tournament
from arena.pipeline import ReviewCalls, answer_id, build_plan, review_context, review_id
from arena.pipeline._plan import _review_ids
from arena.store import RunLog
from tests.conftest import small_tournament


def test_review_ids_match_the_definition() -> None:
    # The per-question fast path hashes the same bytes as stable_id, odd question ids included.
    contexts = ["c-" + "1" * 24, "c-" + "2" * 24]
    pairs = [("a-" + "3" * 24, "a-" + "4" * 24), ("a-" + "4" * 24, "a-" + "3" * 24)]
    for qid in ("q1", 'say "hi"', "naïve\\path", "7", "tab\there", "日本"):
        fast = _review_ids(qid, pairs, contexts)
        assert fast == [review_id(qid, a, b, c) for a, b in pairs for c in contexts]


def test_plan_reviews_are_columns_with_the_same_calls(tmp_path: Path) -> None:
    t = load_tournament(small_tournament(tmp_path, models=3, questions=4))
    plan = build_plan(t)
    reviews = plan.reviews
    assert isinstance(reviews, ReviewCalls)
    assert len(reviews) == 4 * 3 * 2 * 3 and reviews.ids.dtype == np.dtype("S26")
    contexts = {r: review_context(t, r) for r in t.reviewers}
    expected = []
    for q in t.questions:
        ids = {m: answer_id(t, m, q) for m in t.contestants}
        for a in t.contestants:
            for b in t.contestants:
                if a != b:
                    for r in t.reviewers:
                        rid = review_id(q.id, ids[a], ids[b], contexts[r])
                        expected.append((rid, q.id, a, b, r, ids[a], ids[b]))
    got = [
        (c.id, c.question.id, c.model_a, c.model_b, c.reviewer, c.answer_a_id, c.answer_b_id)
        for c in reviews
    ]
    assert got == expected
    assert reviews[5] == list(reviews)[5] and reviews[-1] == list(reviews)[-1]
    assert [c.id for c in reviews[2:4]] == [e[0] for e in expected[2:4]]
    with pytest.raises(IndexError):
        reviews[len(reviews)]


def test_a_run_parks_few_reviews_and_makes_them_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # With room to park only 3 reviews, the planner walks the plan as answers come in
    # and still makes every review once.
    monkeypatch.setattr(allpairs, "_MAX_PARKED", 3)
    most = 0
    place = pipeline.AllPairsPlanner._place

    def watched(self: pipeline.AllPairsPlanner, index: int) -> None:
        nonlocal most
        place(self, index)
        most = max(most, self._parked)

    monkeypatch.setattr(pipeline.AllPairsPlanner, "_place", watched)
    t = load_tournament(small_tournament(tmp_path, models=3, questions=5))
    summary = asyncio.run(run_tournament(t, window=20))
    assert summary.pending == 0 and summary.failed == 0
    reviews = RunLog(t.output_dir).read("reviews")
    assert reviews.height == 5 * 3 * 2 * 3 and reviews["id"].n_unique() == reviews.height
    assert 0 < most <= 3


def test_plan_file_rows_from_columns_match_the_calls(tmp_path: Path) -> None:
    from arena.nightly import plan_frame

    t = load_tournament(small_tournament(tmp_path, models=3, questions=3))
    plan = build_plan(t)
    fast = plan_frame(t, plan)
    calls = fast.filter(pl.col("stage") == "reviews")
    one_by_one = [
        (r.id, t.provider_of(r.reviewer), r.question.id, r.model_a, r.model_b, r.reviewer)
        for r in plan.reviews
    ]
    keys = ["id", "provider", "question_id", "model_a", "model_b", "reviewer"]
    assert calls.select(keys).rows() == one_by_one and fast.height == plan.size
