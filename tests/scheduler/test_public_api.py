"""The public surface of arena.scheduler is a contract."""

from __future__ import annotations

import dataclasses

import arena.scheduler as scheduler


def test_public_names() -> None:
    for name in ("Scheduler", "CallOutcome", "Governor", "PriceTable", "Budget"):
        assert name in scheduler.__all__
        assert getattr(scheduler, name) is not None
    assert sorted(scheduler.__all__) == scheduler.__all__


def test_call_outcome_fields_match_the_design() -> None:
    fields = [f.name for f in dataclasses.fields(scheduler.CallOutcome)]
    assert fields == [
        "status",
        "result",
        "error",
        "error_kind",
        "attempts",
        "latency_s",
        "cost_usd",
        "started_at",
        "finished_at",
        "usage",
    ]
