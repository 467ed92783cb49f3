"""Trigger selection on constructed review logs."""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

from arena.config import DiscussionConfig
from arena.discuss import battle_triggers, mirror_verdict, select_battles


def _reviews(
    rows: list[tuple[str, str, str, str, str]], status: list[str] | None = None
) -> pl.DataFrame:
    frame = pl.DataFrame(
        rows, orient="row", schema=["question_id", "model_a", "model_b", "reviewer", "verdict"]
    )
    if status is not None:
        frame = frame.with_columns(pl.Series("status", status))
    return frame


def _cfg(**kw: Any) -> DiscussionConfig:
    return DiscussionConfig.model_validate(kw)


def _selected(frame: pl.DataFrame, cfg: DiscussionConfig, **kw: Any) -> dict[tuple[str, ...], str]:
    out = select_battles(frame, cfg, **kw)
    return {(q, a, b): t for q, a, b, t in out.iter_rows()}


def test_tie_fires_on_a_balanced_or_near_balanced_weighted_verdict() -> None:
    frame = _reviews(
        [
            ("q1", "x", "y", "r1", "A"),
            ("q1", "x", "y", "r2", "B"),  # mean 0: tie
            ("q2", "x", "y", "r1", "A"),
            ("q2", "x", "y", "r2", "A"),  # clear A
            ("q3", "x", "y", "r1", "tie"),
            ("q3", "x", "y", "r2", "tie"),  # tie
            ("q4", "x", "y", "r1", "A"),
            ("q4", "x", "y", "r2", "tie"),  # mean -0.5
        ]
    )
    assert _selected(frame, _cfg(trigger="tie")) == {
        ("q1", "x", "y"): "tie",
        ("q3", "x", "y"): "tie",
    }
    wider = _selected(frame, _cfg(trigger="tie", tie_margin=0.5))
    assert set(wider) == {("q1", "x", "y"), ("q3", "x", "y"), ("q4", "x", "y")}


def test_disagreement_is_the_share_off_the_most_common_verdict() -> None:
    frame = _reviews(
        [("q1", "x", "y", r, v) for r, v in zip(["r1", "r2", "r3", "r4"], "AAAB", strict=True)]
        + [("q2", "x", "y", r, v) for r, v in zip(["r1", "r2", "r3", "r4"], "AABB", strict=True)]
    )
    assert set(_selected(frame, _cfg(trigger="disagreement", disagreement=0.3))) == {
        ("q2", "x", "y")
    }
    assert set(_selected(frame, _cfg(trigger="disagreement", disagreement=0.25))) == {
        ("q1", "x", "y"),
        ("q2", "x", "y"),
    }


def test_inconsistent_needs_both_orders_and_flags_both() -> None:
    frame = _reviews(
        [
            ("q1", "x", "y", "r1", "A"),
            ("q1", "y", "x", "r1", "A"),  # r1 favours position A
            ("q1", "x", "y", "r2", "A"),
            ("q1", "y", "x", "r2", "B"),  # r2 consistent
            ("q2", "x", "y", "r1", "B"),
            ("q2", "y", "x", "r1", "A"),
            ("q2", "x", "y", "r2", "tie"),
            ("q2", "y", "x", "r2", "tie"),
            ("q3", "x", "y", "r1", "A"),
            ("q3", "x", "y", "r2", "A"),  # mirror never judged
        ]
    )
    assert _selected(frame, _cfg(trigger="inconsistent")) == {
        ("q1", "x", "y"): "inconsistent",
        ("q1", "y", "x"): "inconsistent",
    }


def test_a_list_of_triggers_reports_every_one_that_fired() -> None:
    frame = _reviews(
        [
            ("q1", "x", "y", "r1", "A"),
            ("q1", "x", "y", "r2", "B"),
            ("q1", "y", "x", "r1", "A"),
            ("q1", "y", "x", "r2", "B"),
        ]
    )
    got = _selected(frame, _cfg(trigger=["tie", "disagreement", "inconsistent"]))
    assert got == {
        ("q1", "x", "y"): "tie,disagreement,inconsistent",
        ("q1", "y", "x"): "tie,disagreement,inconsistent",
    }


def test_a_battle_counts_only_once_every_reviewer_has_judged_it() -> None:
    frame = _reviews(
        [
            ("q1", "x", "y", "r1", "A"),
            ("q1", "x", "y", "r2", "B"),
            ("q2", "x", "y", "r1", "A"),
            ("q2", "x", "y", "r2", None),  # type: ignore[list-item]
            ("q3", "x", "y", "r1", "A"),
            ("q3", "x", "y", "r2", "invalid"),
        ],
        status=["ok", "ok", "ok", "failed", "ok", "invalid"],
    )
    # q2: r2 failed (not known); q3: r2 unreadable (known, not counted): mean -1.
    assert set(_selected(frame, _cfg(trigger="tie"))) == {("q1", "x", "y")}
    only_r1 = _selected(frame, _cfg(trigger="tie"), reviewers=["r1", "r2", "r3"])
    assert only_r1 == {}


def test_battle_triggers_without_a_known_mirror_skips_inconsistent() -> None:
    cfg = _cfg(trigger=["inconsistent", "tie"])
    assert battle_triggers({"r1": "A", "r2": "B"}, None, cfg) == ("tie",)
    assert battle_triggers({"r1": "A"}, {"r1": "A"}, cfg) == ("inconsistent",)
    assert battle_triggers({"r1": "invalid"}, {"r1": "A"}, cfg) == ()
    assert [mirror_verdict(v) for v in ("A", "B", "tie", "invalid")] == ["B", "A", "tie", "invalid"]


def test_inconsistent_share_sets_how_many_reviewers_must_contradict_themselves() -> None:
    # r1 flips (A both ways); r2, r3, r4 are consistent: 1 of 4 reviewers = 0.25
    verdicts = {"r1": "A", "r2": "A", "r3": "B", "r4": "tie"}
    mirror = {"r1": "A", "r2": "B", "r3": "A", "r4": "tie"}
    assert battle_triggers(verdicts, mirror, _cfg(trigger="inconsistent")) == ("inconsistent",)
    assert battle_triggers(
        verdicts, mirror, _cfg(trigger="inconsistent", inconsistent_share=0.2)
    ) == ("inconsistent",)
    assert (
        battle_triggers(verdicts, mirror, _cfg(trigger="inconsistent", inconsistent_share=0.25))
        == ()
    )
    consistent = {"r1": "B", "r2": "A", "r3": "B", "r4": "tie"}
    assert battle_triggers(consistent, mirror, _cfg(trigger="inconsistent")) == ()


@pytest.mark.parametrize(
    "bad",
    [
        {"trigger": "sometimes"},
        {"trigger": []},
        {"tie_margin": 1.0},
        {"disagreement": 0},
        {"inconsistent_share": 1.0},
    ],
)
def test_bad_trigger_settings_are_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        _cfg(**bad)
