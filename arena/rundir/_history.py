"""The `history` table: one leaderboard snapshot per completed run, and diffs between them."""

from __future__ import annotations

import json
import math
import os
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from arena.store import Column, RunLog, TableSchema, register_table

__all__ = [
    "HISTORY_SCHEMA",
    "HISTORY_TABLE",
    "ModelChange",
    "append_history",
    "anchor_shift",
    "diff_snapshots",
    "order_probability",
    "read_history",
    "select_range",
    "select_snapshot",
    "snapshot_ids",
    "snapshot_numbers",
    "remember_numbers",
    "snapshot_rows",
]

HISTORY_TABLE = "history"

# The per-model rating fields copied from the leaderboard's JSON `models` list.
RATING_FIELDS = (
    "bt",
    "bt_ci_low",
    "bt_ci_high",
    "win_rate",
    "weighted_win_rate",
    "elo",
    "wins",
    "ties",
    "losses",
)

# One row per model per snapshot; the snapshot columns repeat on each of its rows.
HISTORY_SCHEMA = TableSchema(
    [
        Column("id", pl.String),  # "<snapshot>:<model>"
        Column("snapshot", pl.String),
        Column("at", pl.Float64),  # epoch seconds
        Column("command", pl.String),  # "run" | "retry-failed"
        Column("config_hash", pl.String),
        Column("n_models", pl.Int64),  # models ranked (unranked ones are not counted)
        Column("n_questions", pl.Int64),
        Column("reviews", pl.Int64),  # reviews counted as battles
        Column("invalid", pl.Int64),
        Column("failed", pl.Int64),
        Column("calls_planned", pl.Int64),  # answers and reviews of the plan
        Column("calls_open", pl.Int64),  # of which failed, stale or pending
        Column("model", pl.String),
        Column("rank", pl.Int64),  # 1 = best, by bt as in the leaderboard; null: unranked
        Column("bt", pl.Float64),
        Column("bt_ci_low", pl.Float64),
        Column("bt_ci_high", pl.Float64),
        Column("win_rate", pl.Float64),
        Column("weighted_win_rate", pl.Float64),
        Column("elo", pl.Float64),
        Column("wins", pl.Float64),
        Column("ties", pl.Float64),
        Column("losses", pl.Float64),
        # Added for change attribution (null in snapshots of older arena versions).
        Column("run_id", pl.String),  # the run that took the snapshot
        Column("tag", pl.String),  # `arena run --tag`
        Column("context", pl.String),  # JSON: what the snapshot depends on (_attribution)
        Column("rerun_answers", pl.Int64),  # stale answers the run made again
        Column("rerun_reviews", pl.Int64),  # stale reviews the run made again
        # The rank interval of the leaderboard, when it gives one (null otherwise).
        Column("rank_low", pl.Int64),
        Column("rank_high", pl.Int64),
    ]
)

register_table(HISTORY_TABLE, HISTORY_SCHEMA)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _ranked(entry: Mapping[str, Any]) -> bool:
    """Whether a leaderboard entry has a rating (a model with no usable battle has none)."""
    bt = entry.get("bt")
    if bt is None or (isinstance(bt, float) and math.isnan(bt)):
        return False
    return not ("rank" in entry and entry["rank"] is None)


def snapshot_rows(
    leaderboard: Mapping[str, Any],
    *,
    command: str,
    config_hash: str,
    n_questions: int,
    calls_planned: int,
    calls_open: int,
    at: float | None = None,
    run_id: str | None = None,
    tag: str | None = None,
    context: Mapping[str, Any] | None = None,
    rerun: Mapping[str, int] | None = None,
) -> list[dict[str, Any]]:
    """History rows of one leaderboard (its `--format json` shape), in rank order.

    A model without a rating (no usable battle yet, e.g. its provider was down)
    is stored unranked: `rank` and the ratings null, after the ranked ones, and
    not counted in `n_models`.
    """
    snapshot = uuid.uuid4().hex[:12]
    entries = list(leaderboard.get("models", []))
    models = [e for e in entries if _ranked(e)]
    unranked = [e for e in entries if not _ranked(e)]
    counts = leaderboard.get("counts", {})
    common: dict[str, Any] = {
        "snapshot": snapshot,
        "at": time.time() if at is None else at,
        "command": command,
        "config_hash": config_hash,
        "n_models": len(models),
        "n_questions": n_questions,
        "reviews": int(counts.get("reviews", 0)),
        "invalid": int(counts.get("invalid", 0)),
        "failed": int(counts.get("failed", 0)),
        "calls_planned": calls_planned,
        "calls_open": calls_open,
        "run_id": run_id,
        "tag": tag,
        "context": None if context is None else json.dumps(context, sort_keys=True),
        "rerun_answers": None if rerun is None else int(rerun.get("answers", 0)),
        "rerun_reviews": None if rerun is None else int(rerun.get("reviews", 0)),
    }
    rows: list[dict[str, Any]] = []
    ranks: list[int | None] = [*range(1, len(models) + 1), *([None] * len(unranked))]
    for rank, entry in zip(ranks, [*models, *unranked], strict=True):
        row = dict(common, id=f"{snapshot}:{entry['model']}", model=str(entry["model"]), rank=rank)
        row.update({k: _float(entry.get(k)) for k in RATING_FIELDS})
        for k in ("rank_low", "rank_high"):
            row[k] = None if rank is None or entry.get(k) is None else int(entry[k])
        rows.append(row)
    return rows


async def _write(directory: str | os.PathLike[str], rows: list[dict[str, Any]]) -> None:
    import asyncio  # here: the commands that only read the history do not load it

    async with RunLog(directory).writer() as writer:
        await asyncio.gather(*(writer.write(HISTORY_TABLE, row) for row in rows))


def append_history(directory: str | os.PathLike[str], rows: list[dict[str, Any]]) -> None:
    """Append a snapshot's rows to DIR's history table (the caller holds the run lock)."""
    if rows:
        import asyncio

        asyncio.run(_write(directory, rows))


def read_history(directory: str | os.PathLike[str]) -> pl.DataFrame:
    """Every snapshot of DIR, oldest first, models in rank order, unranked ones last.

    A model stored with a rank but no rating (snapshots of older arena versions
    gave an unranked model the next rank) reads as unranked.
    """
    history = RunLog(directory).read(HISTORY_TABLE)
    unrated = pl.col("bt").is_null() | pl.col("bt").is_nan()
    history = history.with_columns(
        rank=pl.when(unrated).then(None).otherwise(pl.col("rank")),
        rank_low=pl.when(unrated).then(None).otherwise(pl.col("rank_low")),
        rank_high=pl.when(unrated).then(None).otherwise(pl.col("rank_high")),
    )
    history = history.sort("at", "snapshot", "rank", "model", nulls_last=True)
    numbers = number_snapshots(history, _known_numbers(directory))
    return history.with_columns(
        number=pl.col("snapshot").replace_strict(numbers, return_dtype=pl.Int64, default=None)
    )


# A move counts as significant at this probability (two-sided 95%).
SIGNIFICANCE = 0.95
_Z95 = 1.959963984540054


def _se(low: float | None, high: float | None) -> float | None:
    """Standard error from a 95% bootstrap interval (normal approximation); None without one."""
    if low is None or high is None or math.isnan(low) or math.isnan(high):
        return None
    return max(0.0, (high - low) / (2 * _Z95))


def _phi(z: float) -> float:
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


def order_probability(
    bt_hi: float, se_hi: float | None, bt_lo: float, se_lo: float | None
) -> float | None:
    """Probability that the model rated `bt_hi` is really ahead of the one rated `bt_lo`."""
    if se_hi is None or se_lo is None:
        return None
    spread = math.hypot(se_hi, se_lo)
    if spread == 0:
        return 1.0 if bt_hi > bt_lo else 0.5
    return _phi((bt_hi - bt_lo) / spread)


@dataclass(frozen=True)
class ModelChange:
    """How one model moved between two snapshots (None where it is absent).

    `bt_change` is anchored: the later snapshot's ratings are shifted by
    `shift` so that the models ranked both times keep their mean (or the
    anchor model its rating), so adding or removing a model does not move
    everyone else. `p_order_changed` is the largest probability, over the
    models ranked both times whose order with this one flipped, that the
    order really changed (product of both snapshots' order probabilities
    from the normal approximation of their bootstrap intervals).
    """

    model: str
    rank_before: int | None
    rank_after: int | None
    bt_before: float | None
    bt_after: float | None
    returning: bool = False
    shift: float = 0.0
    se_before: float | None = None
    se_after: float | None = None
    p_order_changed: float | None = None
    flipped: int = 0  # models ranked both times whose order with this one flipped
    unranked: bool = False  # in the later snapshot without a rating (no usable battle yet)
    # Rank intervals (best, worst) of the leaderboard when both snapshots have them.
    ranks_before: tuple[int, int] | None = None
    ranks_after: tuple[int, int] | None = None

    @property
    def status(self) -> str:
        """'unranked' (in the later snapshot without a rating), 'new', 'returning' (ranked
        in an earlier snapshot), 'dropped' or 'kept'."""
        if self.unranked:
            return "unranked"
        if self.rank_before is None:
            return "returning" if self.returning else "new"
        if self.rank_after is None:
            return "dropped"
        return "kept"

    @property
    def rank_move(self) -> int | None:
        """Places gained (positive = moved up)."""
        if self.rank_before is None or self.rank_after is None:
            return None
        return self.rank_before - self.rank_after

    @property
    def bt_change_raw(self) -> float | None:
        """Rating change on the Bradley-Terry scale as stored."""
        if self.bt_before is None or self.bt_after is None:
            return None
        return self.bt_after - self.bt_before

    @property
    def bt_after_anchored(self) -> float | None:
        """The later rating on the earlier snapshot's scale (shifted by `shift`), so that
        `bt_before + bt_change == bt_after_anchored`."""
        return None if self.bt_after is None else self.bt_after - self.shift

    @property
    def bt_change(self) -> float | None:
        """Anchored rating change (see the class)."""
        raw = self.bt_change_raw
        return None if raw is None else raw - self.shift

    @property
    def rating_significant(self) -> bool | None:
        """Whether the anchored change exceeds the 95% band of both intervals.

        None without intervals (bootstrap off).
        """
        change = self.bt_change
        if change is None or self.se_before is None or self.se_after is None:
            return None
        return abs(change) > _Z95 * math.hypot(self.se_before, self.se_after)

    @property
    def rank_significant(self) -> bool | None:
        """Whether a rank move is more than chance (None: no move, or no intervals).

        With the leaderboard's rank intervals in both snapshots: when they do
        not overlap; else when `p_order_changed` is at least SIGNIFICANCE. A
        move with no flipped pair (models added or removed above it) is not
        significant.
        """
        if not self.rank_move:
            return None
        if self.flipped == 0:
            return False
        if self.ranks_before is not None and self.ranks_after is not None:
            # The leaderboard's rank intervals: a move is real when they do not overlap.
            (low_b, high_b), (low_a, high_a) = self.ranks_before, self.ranks_after
            return high_a < low_b or high_b < low_a
        if self.p_order_changed is None:
            return None
        return self.p_order_changed >= SIGNIFICANCE

    def to_json(self) -> dict[str, Any]:
        """Plain JSON data."""
        return {
            "model": self.model,
            "status": self.status,
            "rank_before": self.rank_before,
            "rank_after": self.rank_after,
            "rank_move": self.rank_move,
            "rank_significant": self.rank_significant,
            "p_order_changed": self.p_order_changed,
            "bt_before": self.bt_before,
            "bt_after": self.bt_after,
            "bt_after_anchored": self.bt_after_anchored,
            "bt_change": self.bt_change,
            "bt_change_raw": self.bt_change_raw,
            "rating_significant": self.rating_significant,
        }


def snapshot_ids(history: pl.DataFrame) -> list[str]:
    """Snapshot ids, oldest first."""
    firsts = history.group_by("snapshot").agg(pl.col("at").min()).sort("at", "snapshot")
    return [str(s) for s in firsts["snapshot"].to_list()]


# DIR/snapshot_numbers.json: {snapshot id: number} as `arena gc --keep-history` found
# them, so that a snapshot keeps its number after older ones are removed.
NUMBERS_FILE = "snapshot_numbers.json"


def _known_numbers(directory: str | os.PathLike[str]) -> dict[str, int]:
    try:
        data = json.loads((Path(directory) / NUMBERS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {str(k): int(v) for k, v in data.items() if isinstance(v, int)}


def number_snapshots(history: pl.DataFrame, known: Mapping[str, int]) -> dict[str, int]:
    """Each snapshot's number: the one it had when `arena gc` last removed snapshots
    (`known`), else the next after every number given so far, oldest first."""
    out: dict[str, int] = {}
    last = max(known.values(), default=0)
    for sid in snapshot_ids(history):
        if sid in known:
            out[sid] = known[sid]
        else:
            last = max(last, max(out.values(), default=0)) + 1
            out[sid] = last
    return out


def snapshot_numbers(history: pl.DataFrame) -> dict[str, int]:
    """Each snapshot's number in a history read by `read_history` (its `number` column),
    else its place, oldest first, from 1."""
    if "number" in history.columns and history.height:
        pairs = history.select("snapshot", "number").unique("snapshot")
        return {str(s): int(n) for s, n in pairs.iter_rows()}
    return {sid: i for i, sid in enumerate(snapshot_ids(history), 1)}


def remember_numbers(directory: str | os.PathLike[str]) -> None:
    """Write DIR's snapshot numbers as they are now (before gc removes snapshots)."""
    from arena.rundir._files import write_json_atomic

    numbers = snapshot_numbers(read_history(directory))
    if numbers:
        write_json_atomic(Path(directory) / NUMBERS_FILE, numbers)


def _num(value: Any) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return float(value)


def _interval(row: Mapping[str, Any]) -> tuple[int, int] | None:
    low, high = row.get("rank_low"), row.get("rank_high")
    return None if low is None or high is None else (int(low), int(high))


def anchor_shift(
    before: Mapping[str, float | None], after: Mapping[str, float | None], anchor: str | None
) -> float:
    """Offset of `after`'s ratings against `before`'s: the anchor model's change, else the
    mean change of the models rated in both (0 when none is)."""
    moves: dict[str, float] = {}
    for model, now in after.items():
        was = before.get(model)
        if now is not None and was is not None:
            moves[model] = now - was
    if anchor is not None and anchor in moves:
        return moves[anchor]
    return sum(moves.values()) / len(moves) if moves else 0.0


def diff_snapshots(
    history: pl.DataFrame, before: str, after: str, *, anchor: str | None = None
) -> list[ModelChange]:
    """Per-model changes from snapshot `before` to `after`: `after`'s order, dropped ones last.

    Ratings are anchored on `anchor` when it is ranked in both, else on the
    models ranked in both (see ModelChange). A model unranked in a snapshot
    counts as absent from its ranking: unranked in `after`, it is listed last
    with status 'unranked'; unranked in `before` and ranked in `after`, it is
    'new' (or 'returning' when an earlier snapshot ranked it).
    """
    ids = snapshot_ids(history)
    earlier = ids[: ids.index(before)] if before in ids else []
    ranked = history.filter(pl.col("rank").is_not_null() & pl.col("bt").is_not_null())
    seen_earlier = set(ranked.filter(pl.col("snapshot").is_in(earlier))["model"].to_list())
    old_rows = ranked.filter(pl.col("snapshot") == before).iter_rows(named=True)
    old = {r["model"]: r for r in old_rows}
    new_frame = ranked.filter(pl.col("snapshot") == after).sort("rank")
    new = {r["model"]: r for r in new_frame.iter_rows(named=True)}
    unranked_after = [
        str(m)
        for m in history.filter(
            (pl.col("snapshot") == after) & (pl.col("rank").is_null() | pl.col("bt").is_null())
        )["model"].to_list()
    ]
    shift = anchor_shift(
        {m: _num(r["bt"]) for m, r in old.items()},
        {m: _num(r["bt"]) for m, r in new.items()},
        anchor,
    )
    se_old = {m: _se(_num(r["bt_ci_low"]), _num(r["bt_ci_high"])) for m, r in old.items()}
    se_new = {m: _se(_num(r["bt_ci_low"]), _num(r["bt_ci_high"])) for m, r in new.items()}
    common = [m for m in new if m in old]
    changes: list[ModelChange] = []
    for model, r in new.items():
        prev = old.get(model)
        flipped, p_changed = 0, None
        if prev is not None:
            probs: list[float | None] = []
            for other in common:
                if other == model:
                    continue
                was_ahead = prev["rank"] < old[other]["rank"]
                is_ahead = r["rank"] < new[other]["rank"]
                if was_ahead == is_ahead:
                    continue
                flipped += 1
                hi_b, lo_b = (model, other) if was_ahead else (other, model)
                hi_a, lo_a = (model, other) if is_ahead else (other, model)
                p_b = order_probability(
                    float(old[hi_b]["bt"]), se_old[hi_b], float(old[lo_b]["bt"]), se_old[lo_b]
                )
                p_a = order_probability(
                    float(new[hi_a]["bt"]), se_new[hi_a], float(new[lo_a]["bt"]), se_new[lo_a]
                )
                probs.append(None if p_b is None or p_a is None else p_b * p_a)
            known = [p for p in probs if p is not None]
            p_changed = max(known) if known and len(known) == len(probs) else None
        changes.append(
            ModelChange(
                model,
                None if prev is None else prev["rank"],
                r["rank"],
                None if prev is None else _num(prev["bt"]),
                _num(r["bt"]),
                returning=prev is None and model in seen_earlier,
                shift=shift,
                se_before=se_old.get(model),
                se_after=se_new.get(model),
                p_order_changed=p_changed,
                flipped=flipped,
                ranks_before=None if prev is None else _interval(prev),
                ranks_after=_interval(r),
            )
        )
    for model, prev in sorted(old.items(), key=lambda item: item[1]["rank"]):
        if model not in new:
            changes.append(
                ModelChange(
                    model,
                    prev["rank"],
                    None,
                    _num(prev["bt"]),
                    None,
                    se_before=se_old[model],
                    unranked=model in unranked_after,
                )
            )
    for model in sorted(unranked_after):
        if model not in old:
            changes.append(ModelChange(model, None, None, None, None, unranked=True))
    return changes


def _snapshot_dates(history: pl.DataFrame) -> dict[str, str]:
    firsts = history.group_by("snapshot").agg(pl.col("at").min())
    return {
        str(s): time.strftime("%Y-%m-%d", time.localtime(float(a))) for s, a in firsts.iter_rows()
    }


def select_snapshot(history: pl.DataFrame, spec: str) -> str:
    """The snapshot named by `spec`: its number (1 = oldest, -1 = latest), a date
    YYYY-MM-DD (that day's latest snapshot, local time) or a tag (its latest snapshot).

    Raises ValueError saying what exists when nothing matches.
    """
    ids = snapshot_ids(history)
    text = spec.strip()
    if not ids:
        raise ValueError("the history has no snapshots")
    if text.lstrip("-").isdigit():
        n = int(text)
        numbers = snapshot_numbers(history)
        by_number = {v: k for k, v in numbers.items()}
        if n in by_number:
            return by_number[n]
        if -len(ids) <= n <= -1:
            return ids[n]
        first, last = numbers[ids[0]], numbers[ids[-1]]
        gone = " (older ones were removed by `arena gc --keep-history`)" if first > 1 else ""
        raise ValueError(
            f"no snapshot {n}: there are {len(ids)}, numbered {first} to {last}{gone}, "
            "or -1 the latest"
        )
    dates = _snapshot_dates(history)
    on_day = [s for s in ids if dates[s] == text]
    if on_day:
        return on_day[-1]
    tags = history.filter(pl.col("tag") == text).select("snapshot").unique()["snapshot"].to_list()
    tagged = [s for s in ids if s in set(tags)]
    if tagged:
        return tagged[-1]
    known = sorted({str(t) for t in history["tag"].drop_nulls().to_list()})
    hint = f"; tags: {', '.join(known)}" if known else ""
    raise ValueError(
        f"no snapshot {text!r}: give a number 1-{len(ids)}, a date YYYY-MM-DD "
        f"({dates[ids[0]]} to {dates[ids[-1]]}) or a tag{hint}"
    )


def select_range(history: pl.DataFrame, spec: str | None) -> tuple[str | None, str]:
    """`A..B` (B defaults to the latest, A.. too), or a single A compared with the latest;
    None or empty: the last two snapshots. Returns (before or None, after)."""
    ids = snapshot_ids(history)
    if not ids:
        raise ValueError("the history has no snapshots")
    if not spec:
        return (ids[-2] if len(ids) > 1 else None), ids[-1]
    first, sep, second = spec.partition("..")
    before = select_snapshot(history, first) if first.strip() else ids[0]
    after = select_snapshot(history, second) if sep and second.strip() else ids[-1]
    if ids.index(before) > ids.index(after):
        raise ValueError(f"{spec}: the first snapshot must not be later than the second")
    return before, after
