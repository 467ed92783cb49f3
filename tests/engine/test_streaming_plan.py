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
from arena.pipeline._plan import GridIds, PackedIds, ReviewGrid, _review_ids
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
    from arena.rundir import plan_frame

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


def test_plan_reviews_take_no_memory_per_review_and_index_like_arrays(tmp_path: Path) -> None:
    # A whole plan's codes come from the index and its ids are hashed when asked for;
    # both index like the (n, 4) int32 and S26 arrays they stand for.
    t = load_tournament(small_tournament(tmp_path, models=3, questions=4))
    reviews = build_plan(t).reviews
    n = len(reviews)
    assert isinstance(reviews.codes, ReviewGrid) and isinstance(reviews.ids, GridIds)
    assert not [v for v in vars(reviews.ids).values() if isinstance(v, np.ndarray) and v.size >= n]
    codes = np.asarray(reviews.codes)
    ids = np.asarray(reviews.ids)
    assert codes.shape == (n, 4) and codes.dtype == np.int32 and ids.dtype == np.dtype("S26")
    explicit = [
        (q, a, b, r)
        for q in range(4)
        for a in range(3)
        for b in range(3)
        if a != b
        for r in range(3)
    ]
    assert codes.tolist() == [list(row) for row in explicit]
    assert [rid.decode() for rid in ids] == [call.id for call in reviews]
    picks = np.array([n - 1, 0, 7, 7, 30], dtype=np.int64)
    assert np.array_equal(reviews.codes[picks], codes[picks])
    assert np.array_equal(reviews.codes[5:40:3], codes[5:40:3])
    assert reviews.codes[9].tolist() == codes[9].tolist()
    assert reviews.codes[-1, :3].tolist() == codes[-1, :3].tolist()
    assert np.array_equal(reviews.ids[picks], ids[picks]) and reviews.ids[-1] == ids[-1]
    assert np.array_equal(reviews.ids[3:9], ids[3:9]) and reviews.ids.tolist() == ids.tolist()
    assert np.array_equal(reviews.ids[-5:], ids[-5:]) and np.array_equal(reviews.ids[::7], ids[::7])
    assert np.array_equal(reviews.ids[17:60], ids[17:60]) and reviews.ids[9:9].size == 0
    assert reviews.ids.text(-2) == ids[-2].decode() and reviews.id_at(40) == ids[40].decode()
    for bad in (n, -n - 1):
        with pytest.raises(IndexError):
            reviews.codes[bad]
        with pytest.raises(IndexError):
            reviews.ids[bad]
    # A part of the plan (retry-failed, a selector's rounds) keeps the same calls.
    part = reviews.take(picks)
    assert isinstance(part.ids, PackedIds) and part.ids.packed.nbytes == 12 * len(picks)
    assert [c.id for c in part] == [reviews[int(i)].id for i in picks]
    assert part == [reviews[int(i)] for i in picks]


def test_packed_ids_take_review_ids_only() -> None:
    ids = np.array([b"r-" + bytes(f"{i:024x}", "ascii") for i in (0, 255, 2**95)], dtype="S26")
    packed = PackedIds.pack(ids)
    assert np.array_equal(np.asarray(packed), ids) and packed.text(2) == ids[2].decode()
    for bad in (b"a-" + b"0" * 24, b"r-" + b"0" * 23 + b"G", b"r-" + b"0" * 23 + b"A"):
        with pytest.raises(ValueError, match="not a review id"):
            PackedIds.pack(np.array([ids[0], bad], dtype="S26"))


def test_plan_file_written_in_slices_is_the_plan_frame(tmp_path: Path) -> None:
    from arena.rundir import plan_frame, read_plan, write_plan
    from arena.rundir._planfile import plan_chunks

    t = load_tournament(small_tournament(tmp_path, models=3, questions=3))
    plan = build_plan(t)
    chunks = list(plan_chunks(t, plan, rows=7))
    assert [c.height for c in chunks] == [9] + [7] * 7 + [5]
    assert all(c["stage"].n_unique() == 1 for c in chunks)
    whole = plan_frame(t, plan)
    assert pl.concat(chunks).equals(whole)
    write_plan(tmp_path / "a", whole)
    write_plan(tmp_path / "b", iter(chunks))
    a, b = read_plan(tmp_path / "a"), read_plan(tmp_path / "b")
    assert a is not None and b is not None and a.equals(b) and b.equals(whole)
    write_plan(tmp_path / "c", iter(()))  # no slice at all: an empty plan
    empty = read_plan(tmp_path / "c")
    assert empty is not None and empty.height == 0 and empty.schema == whole.schema


def test_a_run_start_classified_in_slices_counts_like_the_whole_plan(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Done, failed, stale and pending calls: start_run (slices of 5 rows) finds the
    # counts and the stale calls that classifying the whole plan frame finds.
    import arena.rundir._planfile as planfile
    from arena.rundir import classify, plan_frame, read_plan, start_run
    from tests.rundir._support import edit_yaml, run

    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    run(yaml_path)
    edit_yaml(yaml_path, lambda d: d["models"]["m1"].update(temperature=0.2))
    edit_yaml(yaml_path, lambda d: d.update(questions=_more_questions(tmp_path)))
    t = load_tournament(yaml_path)
    plan = build_plan(t)
    log = RunLog(t.output_dir)
    logged = set(log.read("reviews", columns=["status"])["id"])
    first = next(r.id for r in plan.reviews if r.id in logged)
    asyncio.run(_log_failed(t.output_dir, first))
    expected = classify(plan_frame(t, plan), log)
    monkeypatch.setattr(planfile, "PLAN_CHUNK_ROWS", 5)
    monkeypatch.setattr(planfile.plan_chunks, "__defaults__", (5,))
    start = start_run(t, plan)
    tally = expected["state"].value_counts()
    counts = dict(zip(tally["state"].to_list(), tally["count"].to_list(), strict=True))
    assert start.counts == counts and counts["stale"] > 0 and counts["pending"] > 0
    assert counts["failed"] == 1 and counts["done"] > 0
    stale = expected.filter(pl.col("state") == "stale").select("id", "stage", "state")
    assert start.states.equals(stale)
    written = read_plan(t.output_dir)
    assert written is not None and written.equals(plan_frame(t, plan))


def _more_questions(tmp_path: Path) -> str:
    path = tmp_path / "more_questions.jsonl"
    path.write_text(
        "".join(f'{{"id": "q{i}", "text": "Question number {i}?"}}\n' for i in range(3))
    )
    return str(path)


async def _log_failed(directory: Path, review_id: str) -> None:
    row = RunLog(directory).read("reviews").filter(pl.col("id") == review_id).to_dicts()[0]
    row.update(status="failed", error="HTTP 500", verdict=None, text=None)
    async with RunLog(directory).writer() as writer:
        await writer.write("reviews", row)
