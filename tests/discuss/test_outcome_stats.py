"""`replace` and `add` outcomes, and the discussion statistics, on constructed logs."""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest

from arena.discuss import (
    DISCUSSION_REVIEWER,
    TABLE,
    apply_discussions,
    discussion_stats,
)
from arena.rank import RankOptions, encode_reviews, rank_reviews
from arena.store._schema import empty_frame, normalize_row

REVIEWERS = ["r1", "r2"]


def _reviews() -> pl.DataFrame:
    """Both reviewers say y beats x in both orders of q1..q3; z loses to both once."""
    rows: list[dict[str, Any]] = []
    for q in ("q1", "q2", "q3"):
        for r in REVIEWERS:
            rows.append(
                {
                    "id": f"{q}-xy-{r}",
                    "question_id": q,
                    "model_a": "x",
                    "model_b": "y",
                    "reviewer": r,
                    "verdict": "B",
                    "status": "ok",
                }
            )
            rows.append(
                {
                    "id": f"{q}-yx-{r}",
                    "question_id": q,
                    "model_a": "y",
                    "model_b": "x",
                    "reviewer": r,
                    "verdict": "A",
                    "status": "ok",
                }
            )
    for m in ("x", "y"):
        for r in REVIEWERS:
            rows.append(
                {
                    "id": f"z-{m}-{r}",
                    "question_id": "q1",
                    "model_a": m,
                    "model_b": "z",
                    "reviewer": r,
                    "verdict": "A",
                    "status": "ok",
                }
            )
    rows.append(
        {
            "id": "failed",
            "question_id": "q1",
            "model_a": "x",
            "model_b": "y",
            "reviewer": "r3",
            "verdict": None,
            "status": "failed",
        }
    )
    return pl.DataFrame(rows)


def _row(**kw: Any) -> dict[str, Any]:
    base = {"context": "c1", "status": "ok", "attempt": 1, "leader": "a", "follower": "b"}
    return normalize_row(TABLE, {**base, **kw})


def _final(
    did: str, q: str, a: str, b: str, outcome: str, verdict: str | None, turn: int = 2, **kw: Any
) -> dict[str, Any]:
    return _row(
        id=f"{did}-final",
        discussion_id=did,
        battle_id=f"{q}{a}{b}",
        kind="final",
        turn=turn,
        question_id=q,
        model_a=a,
        model_b=b,
        outcome=outcome,
        verdict=verdict,
        answer_a_id=f"{q}-{a}",
        answer_b_id=f"{q}-{b}",
        **kw,
    )


def _discussions(*rows: dict[str, Any]) -> pl.DataFrame:
    return pl.concat(
        [empty_frame(TABLE), pl.DataFrame(list(rows), schema=empty_frame(TABLE).schema)]
    )


def _win_rates(reviews: pl.DataFrame) -> dict[str, float]:
    reviewers = sorted(set(reviews["reviewer"].to_list()) - {"r3"})
    rs = encode_reviews(reviews, contestants=["x", "y", "z"], reviewers=reviewers)
    ranking = rank_reviews(rs, RankOptions(bootstrap=0, elo=False))
    return dict(zip(rs.contestants, ranking.peerrank.win_rate.tolist(), strict=True))


DISCUSSED = _discussions(
    # x is agreed better in both orders of q1 and q2; q3's discussion is unresolved
    _final("d1", "q1", "x", "y", "agreed", "A"),
    _final("d2", "q1", "y", "x", "agreed", "B"),
    _final("d3", "q2", "x", "y", "agreed", "A"),
    _final("d4", "q2", "y", "x", "agreed", "B"),
    _final("d5", "q3", "x", "y", "unresolved", None),
    _final("d6", "q3", "y", "x", "agreed", "B", context="old"),
)


def test_replace_gives_every_review_of_a_discussed_battle_the_agreed_verdict() -> None:
    reviews = _reviews()
    out = apply_discussions(reviews, DISCUSSED, outcome="replace", context="c1")
    assert out.columns == reviews.columns and out.schema == reviews.schema
    assert out["id"].to_list() == reviews["id"].to_list()
    changed = out.join(reviews, on="id").filter(pl.col("verdict") != pl.col("verdict_right"))
    assert sorted(changed["id"].to_list()) == sorted(
        f"{q}-{o}-{r}" for q in ("q1", "q2") for o in ("xy", "yx") for r in REVIEWERS
    )
    assert out.filter(pl.col("id") == "q1-xy-r1")["verdict"].item() == "A"
    assert out.filter(pl.col("id") == "q1-yx-r2")["verdict"].item() == "B"
    assert out.filter(pl.col("id") == "failed")["status"].item() == "failed"
    # the leaderboard changes as specified: x now beats y (4 of 6 battles each way)
    before, after = _win_rates(reviews), _win_rates(out)
    assert before["y"] > before["x"] and after["x"] > after["y"]
    # without a context filter the old configuration's discussion counts too
    everything = apply_discussions(reviews, DISCUSSED, outcome="replace")
    assert everything.filter(pl.col("id") == "q3-yx-r1")["verdict"].item() == "B"


def test_replace_drops_the_graded_share_and_weight_of_a_replaced_verdict() -> None:
    # Reviews logged with declared graded tokens (`review.verdicts`): a strong B.
    reviews = _reviews().with_columns(
        pl.when(pl.col("verdict") == "B").then(0.25).otherwise(None).alias("p_a"),
        pl.when(pl.col("verdict") == "B").then(3.0).otherwise(None).alias("weight"),
    )
    out = apply_discussions(reviews, DISCUSSED, outcome="replace", context="c1")
    replaced = out.filter(pl.col("id") == "q1-xy-r1")
    assert replaced.select("verdict", "p_a", "weight").row(0) == ("A", None, None)
    kept = out.filter(pl.col("id") == "q3-xy-r1")  # q3's discussion is unresolved
    assert kept.select("verdict", "p_a", "weight").row(0) == ("B", 0.25, 3.0)
    # Ranked, the agreed verdict counts as a plain A, not as a heavy B.
    plain = apply_discussions(_reviews(), DISCUSSED, outcome="replace", context="c1")
    graded_plain = _win_rates(plain.filter(pl.col("question_id") != "q3"))
    assert _win_rates(out.filter(pl.col("question_id") != "q3")) == pytest.approx(graded_plain)


def test_add_appends_weight_reviews_by_the_discussion_pseudo_reviewer() -> None:
    reviews = _reviews()
    once = apply_discussions(reviews, DISCUSSED, outcome="add", weight=1, context="c1")
    assert once.height == reviews.height + 4
    added = once.filter(pl.col("reviewer") == DISCUSSION_REVIEWER)
    assert sorted(added["id"].to_list()) == ["d1#1", "d2#1", "d3#1", "d4#1"]
    assert sorted(added["verdict"].to_list()) == ["A", "A", "B", "B"]
    assert (added["status"] == "ok").all()
    assert once.head(reviews.height).equals(reviews)
    heavy = apply_discussions(reviews, DISCUSSED, outcome="add", weight=4, context="c1")
    assert heavy.filter(pl.col("reviewer") == DISCUSSION_REVIEWER).height == 16
    # x-y: 12 reviews for y; one added review per discussion leaves y ahead,
    # four each (16 for x) put x ahead
    assert _win_rates(once)["y"] > _win_rates(once)["x"]
    assert _win_rates(heavy)["x"] > _win_rates(heavy)["y"]


def test_add_keeps_integer_question_ids_and_nothing_agreed_changes_nothing() -> None:
    reviews = _reviews().with_columns(pl.col("question_id").str.slice(1).cast(pl.Int64))
    discussed = _discussions(_final("d1", "1", "x", "y", "agreed", "tie"))
    out = apply_discussions(reviews, discussed, outcome="add")
    assert out.schema == reviews.schema
    assert out.filter(pl.col("reviewer") == DISCUSSION_REVIEWER)["question_id"].to_list() == [1]
    replaced = apply_discussions(reviews, discussed, outcome="replace")
    assert replaced.filter(
        (pl.col("question_id") == 1)
        & (pl.col("model_a") == "x")
        & (pl.col("model_b") == "y")
        & (pl.col("status") == "ok")
    )["verdict"].unique().to_list() == ["tie"]
    unresolved = _discussions(_final("d5", "q3", "x", "y", "unresolved", None))
    assert apply_discussions(_reviews(), unresolved).equals(_reviews())
    assert apply_discussions(_reviews(), empty_frame(TABLE), outcome="add").equals(_reviews())
    with pytest.raises(ValueError):
        apply_discussions(_reviews(), DISCUSSED, outcome="merge")  # type: ignore[arg-type]


def test_replace_combines_disagreeing_discussions_of_one_battle() -> None:
    discussed = _discussions(
        _final("d1", "q1", "x", "y", "agreed", "A"),
        _final("d2", "q1", "x", "y", "agreed", "B"),
        _final("d3", "q2", "x", "y", "agreed", "A"),
        _final("d4", "q2", "x", "y", "agreed", "tie"),
    )
    out = apply_discussions(_reviews(), discussed)
    verdict = {q: out.filter(pl.col("id") == f"{q}-xy-r1")["verdict"].item() for q in ("q1", "q2")}
    assert verdict == {"q1": "tie", "q2": "A"}


def _step(
    did: str,
    kind: str,
    turn: int,
    speaker: str,
    preference: str | None,
    leader: str,
    follower: str,
    attempt: int = 1,
) -> dict[str, Any]:
    return _row(
        id=f"{did}-{kind}-{turn}-{speaker}-{attempt}",
        discussion_id=did,
        battle_id=did,
        kind=kind,
        turn=turn,
        speaker=speaker,
        preference=preference,
        leader=leader,
        follower=follower,
        attempt=attempt,
    )


def test_statistics_on_a_constructed_log() -> None:
    rows = [
        # d1: a leads and holds A; b follows and alters to A
        _step("d1", "initial", 0, "a", "A", "a", "b"),
        _step("d1", "initial", 0, "b", "B", "a", "b"),
        _step("d1", "turn", 1, "a", "A", "a", "b"),
        _step("d1", "turn", 2, "b", "A", "a", "b"),
        _final("d1", "q1", "x", "y", "agreed", "A", turn=2, trigger="tie,inconsistent"),
        # d2: b leads and concedes at once; a follows and holds (never speaks)
        _step("d2", "initial", 0, "b", "A", "b", "a"),
        _step("d2", "initial", 0, "a", "B", "b", "a"),
        _step("d2", "turn", 1, "b", "invalid", "b", "a"),
        _step("d2", "turn", 1, "b", "B", "b", "a", attempt=2),
        _final(
            "d2", "q2", "x", "y", "agreed", "B", turn=1, leader="b", follower="a", trigger="tie"
        ),
        # d3: they agreed from the start (not disputed)
        _step("d3", "initial", 0, "a", "A", "a", "b"),
        _step("d3", "initial", 0, "b", "A", "a", "b"),
        _step("d3", "turn", 1, "a", "A", "a", "b"),
        _final("d3", "q3", "x", "y", "agreed", "A", turn=1, trigger="tie"),
        # d4: both hold for four turns
        _step("d4", "initial", 0, "a", "A", "a", "b"),
        _step("d4", "initial", 0, "b", "B", "a", "b"),
        *[
            _step("d4", "turn", k, "a" if k % 2 else "b", "A" if k % 2 else "B", "a", "b")
            for k in range(1, 5)
        ],
        _final("d4", "q4", "x", "y", "unresolved", None, turn=4, trigger="inconsistent"),
        # d5: started, not finished
        _step("d5", "initial", 0, "a", "A", "a", "b"),
        # another configuration's discussion
        _final("d6", "q5", "x", "y", "agreed", "A", context="old"),
    ]
    stats = discussion_stats(_discussions(*rows), context="c1")
    assert (
        stats.discussions,
        stats.agreed,
        stats.unresolved,
        stats.in_progress,
        stats.disputed,
    ) == (4, 3, 1, 1, 3)
    assert stats.mean_turns == 2.0
    assert stats.verdicts == {"A": 2, "B": 1}
    assert stats.triggers == {"inconsistent": 2, "tie": 3}
    by = {m.model: m for m in stats.models}
    a, b = by["a"], by["b"]
    assert (
        a.led,
        a.followed,
        a.altered_as_leader,
        a.held_as_leader,
        a.altered_as_follower,
        a.held_as_follower,
    ) == (3, 1, 0, 2, 0, 1)
    assert (
        b.led,
        b.followed,
        b.altered_as_leader,
        b.held_as_leader,
        b.altered_as_follower,
        b.held_as_follower,
    ) == (1, 3, 1, 0, 1, 1)
    assert b.altering_as_leader == 1.0 and b.altering_as_follower == 0.5
    assert a.altering_as_leader == 0.0
    data = stats.to_json()
    assert data["models"][0]["model"] == "a" and data["agreed"] == 3
    assert discussion_stats(_discussions(*rows)).discussions == 5
    empty = discussion_stats(empty_frame(TABLE))
    assert empty.discussions == 0 and math.isnan(empty.mean_turns)
    assert empty.to_json()["mean_turns"] is None
