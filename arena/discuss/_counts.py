"""How the discussions of a run directory stand, for `arena plan` and `arena status`."""

from __future__ import annotations

import polars as pl

from arena.discuss._schema import TABLE
from arena.store import RunLog

__all__ = ["discussion_counts"]


def discussion_counts(log: RunLog, context: str | None = None) -> dict[str, int]:
    """Discussions in the log: how many, how they ended, and their calls.

    `logged` discussions are `agreed`, `unresolved` or `in_progress` (no final
    row yet, e.g. interrupted or a call failed); `calls` are the model calls
    they made (initial reviews copied from the reviews table are not calls),
    `failed_calls` of them failed. With `context` (the discussion settings in
    force), discussions logged under other settings count apart as `stale`.
    """
    out = dict.fromkeys(
        ("logged", "agreed", "unresolved", "in_progress", "stale", "calls", "failed_calls"), 0
    )
    frame = log.read(TABLE)
    if not frame.height:
        return out
    if context is not None:
        out["stale"] = frame.filter(pl.col("context") != context)["discussion_id"].n_unique()
        frame = frame.filter(pl.col("context") == context)
    finals = frame.filter(pl.col("kind") == "final")
    calls = frame.filter(pl.col("kind").is_in(["initial", "turn"]) & pl.col("review_id").is_null())
    out["logged"] = frame["discussion_id"].n_unique()
    out["agreed"] = int((finals["outcome"] == "agreed").sum())
    out["unresolved"] = int((finals["outcome"] == "unresolved").sum())
    out["in_progress"] = out["logged"] - finals["discussion_id"].n_unique()
    out["calls"] = calls.height
    out["failed_calls"] = int((calls["status"] == "failed").sum())
    return out
