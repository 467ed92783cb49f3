"""What `arena run` and `arena retry-failed` do around the engine: plan file, counts, history."""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from arena.config import ConfigError, load_tournament
from arena.errors import ArenaInputError
from arena.rundir._attribution import results_hash, tournament_context
from arena.rundir._gc import ARCHIVE_DIR, restore_archived
from arena.rundir._history import (
    HISTORY_TABLE,
    RATING_FIELDS,
    append_history,
    read_history,
    snapshot_ids,
    snapshot_rows,
)
from arena.rundir._planfile import (
    KEYS,
    PLAN_FILE,
    plan_changes,
    plan_chunks,
    plan_frame,
    read_plan,
    write_plan,
)
from arena.rundir._status import Classifier, classify
from arena.shard import recorded_shard, shard_tournament
from arena.store import RunLog
from arena.types import CallStatus

if TYPE_CHECKING:
    from arena.config import Tournament
    from arena.pipeline import Plan

__all__ = [
    "PlanChanged",
    "RunStart",
    "call_states",
    "failed_only",
    "load_for_directory",
    "record_history",
    "recorded_config",
    "start_run",
]


@dataclass(frozen=True)
class RunStart:
    """A run's plan as a frame, with the state of every call when the run started.

    `compact()` keeps the counts per state and only the stale calls' rows (a
    million-call plan's frame need not stay in memory while the run goes on).
    """

    states: pl.DataFrame
    counts: dict[str, int] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.counts and self.states.height:
            tally = self.states["state"].value_counts()
            self.counts.update(zip(tally["state"].to_list(), tally["count"].to_list(), strict=True))

    def count(self, state: str) -> int:
        """Calls of the plan in `state` at the start."""
        return int(self.counts.get(state, 0))

    def compact(self) -> RunStart:
        """The same counts, and of the frame only the stale calls (id, stage, state)."""
        stale = self.states.filter(pl.col("state") == "stale").select("id", "stage", "state")
        return RunStart(stale, dict(self.counts))

    def to_json(self) -> dict[str, int]:
        """Calls this run has to make: never run, stale, and failed before."""
        return {
            "new": self.count("pending"),
            "stale": self.count("stale"),
            "retried": self.count("failed"),
        }


def start_run(t: Tournament, plan: Plan, *, same_plan: bool = False) -> RunStart:
    """Write DIR/plan.parquet for `plan` and classify its calls against the log.

    With `same_plan` (`arena retry-failed`), raise PlanChanged unless DIR has
    no plan file yet or the plan is the one the last run wrote; the RunStart
    then holds every call's state (`failed_only` picks from them). Otherwise
    the plan is written and classified a slice at a time (`plan_chunks`) and
    the RunStart is already compact: the counts and the stale calls, so a
    plan of millions of calls never stands in memory as a frame of strings.
    """
    if not same_plan and not (t.output_dir / ARCHIVE_DIR).is_dir():
        return _start_streamed(t, plan)
    frame = plan_frame(t, plan)
    previous = read_plan(t.output_dir) if same_plan else None
    if previous is not None:
        added, removed = plan_changes(previous, frame)
        if added or removed:
            raise PlanChanged(t.output_dir, added, removed)
    write_plan(t.output_dir, frame)
    restore_archived(t.output_dir, frame)  # calls `arena gc` archived: reused, not paid again
    states = classify(frame, RunLog(t.output_dir))
    _remember_stale(t.output_dir, states)
    return RunStart(states)


def _start_streamed(t: Tournament, plan: Plan) -> RunStart:
    """`start_run` of a directory without archived calls, one slice of the plan at a time.

    As when the plan is classified whole, the plan file is written even when the log
    cannot be read (a newer format, say): the error is raised once the file is in place.
    """
    counts: dict[str, int] = {}
    stale: list[pl.DataFrame] = []
    by_state: Classifier | None = None
    failed: Exception | None = None

    def written() -> Iterator[pl.DataFrame]:
        nonlocal by_state, failed
        for chunk in plan_chunks(t, plan):
            yield chunk
            if failed is not None:
                continue
            try:
                if by_state is None:
                    by_state = Classifier(RunLog(t.output_dir))
                states = by_state(chunk)
            except Exception as exc:  # noqa: BLE001 - raised after the plan file is written
                failed = exc
                continue
            tally = states["state"].value_counts()
            for state, n in zip(tally["state"].to_list(), tally["count"].to_list(), strict=True):
                counts[state] = counts.get(state, 0) + int(n)
            stale.append(states.filter(pl.col("state") == "stale").select("id", "stage", "state"))

    write_plan(t.output_dir, written())
    if failed is not None:
        raise failed
    states = pl.concat(stale) if stale else pl.DataFrame(schema=_STALE_SCHEMA)
    _remember_stale(t.output_dir, states)
    return RunStart(states, counts)


_STALE_SCHEMA = {"id": pl.String, "stage": pl.String, "state": pl.String}


class PlanChanged(ArenaInputError):
    """The tournament's plan is not the one the last run of DIR wrote."""

    def __init__(self, directory: Path, added: int, removed: int) -> None:
        super().__init__(
            f"{directory}: the tournament changed since the last run ({added} calls new or "
            f"stale, {removed} no longer planned); `arena run` runs the new plan, or pass "
            "--config with the YAML of the last run"
        )
        self.added = added
        self.removed = removed


def call_states(t: Tournament, plan: Plan, log: RunLog) -> dict[str, str]:
    """The state (one of STATES) of every call of a plan, by id."""
    states = classify(plan_frame(t, plan), log)
    return dict(zip(states["id"].to_list(), states["state"].to_list(), strict=True))


def failed_only(plan: Plan, start: RunStart) -> tuple[Plan, int]:
    """The failed calls of a plan plus the reviews a failed answer kept from running.

    Returns the partial plan and how many of its reviews were such blocked ones.
    """
    states = dict(zip(start.states["id"].to_list(), start.states["state"].to_list(), strict=True))
    answers = tuple(a for a in plan.answers if states.get(a.id) == "failed")
    failed_answers = {a.id for a in answers}
    reviews: list[int] = []
    blocked = 0
    for index, r in enumerate(plan.reviews):
        state = states.get(r.id)
        if state == "failed":
            reviews.append(index)
        elif state in ("pending", "stale") and (
            r.answer_a_id in failed_answers or r.answer_b_id in failed_answers
        ):
            reviews.append(index)
            blocked += 1
    return dataclasses.replace(plan, answers=answers, reviews=plan.reviews.take(reviews)), blocked


def record_history(
    t: Tournament,
    plan: Plan,
    command: str,
    leaderboard: Callable[[], Mapping[str, Any]],
    *,
    start: RunStart | None = None,
    run_id: str | None = None,
    tag: str | None = None,
    added: bool = True,
    calls_open: int | None = None,
) -> str | None:
    """Append the leaderboard (its `--format json` shape) to DIR's history table.

    The snapshot carries what it depends on (`tournament_context`), the stale
    calls `start` found (made again by this run), the run id and `tag`.
    Returns why nothing was appended (no rankable reviews yet, or nothing
    changed since the last snapshot and no tag was given), else None. A run
    that logged nothing (`added` False) is found unchanged before any ranking:
    the last snapshot has the same config and the same planned and open calls.
    `calls_open` (failed, stale or pending calls of the plan) is counted from
    the log's ids and statuses unless the caller knows it. The caller holds
    the run lock.
    """
    open_calls = _open_calls(t, plan) if calls_open is None else calls_open
    context = tournament_context(t)
    config_hash = results_hash(context)
    if (
        tag is None
        and not added
        and _last_snapshot_matches(t.output_dir, config_hash, plan.size, open_calls)
    ):
        return "no new history snapshot: nothing changed since the last one"
    try:
        board = leaderboard()
    except (ConfigError, ValueError) as exc:
        return f"no leaderboard snapshot for the history: {exc}"
    if not board.get("models"):
        return "no leaderboard snapshot for the history: no ranked models"
    rerun = _rerun_since_snapshot(t.output_dir, start)
    rows = snapshot_rows(
        board,
        command=command,
        config_hash=config_hash,
        n_questions=len(t.questions),
        calls_planned=plan.size,
        calls_open=open_calls,
        run_id=run_id,
        tag=tag,
        context=context,
        rerun=rerun,
    )
    if tag is None and _same_as_last(t.output_dir, rows):
        return "no new history snapshot: nothing changed since the last one"
    append_history(t.output_dir, rows)
    (t.output_dir / RERUN_FILE).unlink(missing_ok=True)  # counted in this snapshot
    return None


# Stale calls found at the start of the runs since the last snapshot (id, stage): a
# night stopped before its snapshot (interrupted, budget) re-ran some of them, and
# the next snapshot counts them too.
RERUN_FILE = "rerun_since_snapshot.parquet"


def _remember_stale(directory: Path, states: pl.DataFrame) -> None:
    """Add the stale calls of `states` (classify) to DIR's RERUN_FILE."""
    stale = states.filter(pl.col("state") == "stale").select("id", "stage")
    path = directory / RERUN_FILE
    if path.is_file():
        stale = pl.concat([pl.read_parquet(path).select("id", "stage"), stale]).unique("id")
    elif not stale.height:
        return
    tmp = directory / f".{RERUN_FILE}.tmp"
    stale.write_parquet(tmp)
    os.replace(tmp, path)


def _rerun_since_snapshot(directory: Path, start: RunStart | None) -> dict[str, int] | None:
    """Stale calls made again since the last snapshot, per stage: those this run found
    stale (it went through its plan), and those earlier runs found stale and logged."""
    path = directory / RERUN_FILE
    carried = pl.read_parquet(path).select("id", "stage") if path.is_file() else None
    if start is None and carried is None:
        return None
    frames = []
    if start is not None:
        frames.append(start.states.filter(pl.col("state") == "stale").select("id", "stage"))
    if carried is not None and carried.height:
        log = RunLog(directory)
        for stage in KEYS:
            logged = log.ids(stage)
            mine = carried.filter((pl.col("stage") == stage) & pl.col("id").is_in(list(logged)))
            frames.append(mine)
    ids = pl.concat(frames).unique("id") if frames else pl.DataFrame({"id": [], "stage": []})
    return {
        "answers": int((ids["stage"] == "answers").sum()),
        "reviews": int((ids["stage"] == "reviews").sum()),
    }


def _open_calls(t: Tournament, plan: Plan) -> int:
    """Calls of the plan not logged with a result (failed, stale or pending).

    Only ids and statuses are read: the plan's ids from DIR/plan.parquet (the
    run wrote it) and the logged ids whose status is ok or invalid.
    """
    path = t.output_dir / PLAN_FILE
    if path.is_file():
        planned = pl.scan_parquet(path).select("id", "stage").collect()
    else:
        planned = plan_frame(t, plan).select("id", "stage")
    log = RunLog(t.output_dir)
    settled = 0
    for table in KEYS:
        logged = log.read(table, columns=["status"]).filter(
            pl.col("status").is_in([CallStatus.OK.value, CallStatus.INVALID.value])
        )
        ids = planned.filter(pl.col("stage") == table).select("id")
        settled += ids.join(logged.select("id"), on="id", how="semi").height
    return planned.height - settled


def _last_snapshot_matches(
    directory: Path, config_hash: str, planned: int, open_calls: int
) -> bool:
    """Whether DIR's latest history snapshot has this config hash and these call counts."""
    history = RunLog(directory).read(
        HISTORY_TABLE, columns=["snapshot", "at", "config_hash", "calls_planned", "calls_open"]
    )
    if history.height == 0:
        return False
    last = history.sort("at", "snapshot").row(-1, named=True)
    return (last["config_hash"], last["calls_planned"], last["calls_open"]) == (
        config_hash,
        planned,
        open_calls,
    )


# Columns that decide whether a snapshot says anything new (ratings to 0.01).
_SAME_COLUMNS = ("config_hash", "reviews", "invalid", "failed", "calls_planned", "calls_open")


def _same_as_last(directory: Path, rows: list[dict[str, Any]]) -> bool:
    """Whether `rows` repeat DIR's latest snapshot: same config, counts, models and ratings."""
    history = read_history(directory)
    if not history.height:
        return False
    last = history.filter(pl.col("snapshot") == snapshot_ids(history)[-1])
    if last.height != len(rows) or last["context"][0] is None:
        return False

    def key(row: Mapping[str, Any]) -> tuple[Any, ...]:
        ratings = tuple(
            None if row[k] is None or row[k] != row[k] else round(float(row[k]), 2)
            for k in RATING_FIELDS
        )
        return (row["model"], row["rank"], *ratings, *(row[k] for k in _SAME_COLUMNS))

    return sorted(map(key, last.iter_rows(named=True)), key=repr) == sorted(
        map(key, rows), key=repr
    )


def recorded_config(directory: str | os.PathLike[str]) -> Path | None:
    """The tournament YAML recorded in DIR/tournament.json by the last run, if any."""
    path = Path(directory) / "tournament.json"
    try:
        snapshot = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # missing, not a directory, unreadable, not JSON
        return None
    recorded = snapshot.get("config_path") if isinstance(snapshot, dict) else None
    return Path(recorded) if isinstance(recorded, str) else None


def load_for_directory(directory: str | os.PathLike[str], config: Path | None) -> Tournament:
    """The tournament of run directory DIR: `config`, else the YAML its last run recorded.

    The output directory is DIR whatever the YAML says. Raises ConfigError.
    """
    folder = Path(directory)
    path = config if config is not None else recorded_config(folder)
    if path is None:
        raise ConfigError(
            folder,
            "",
            "not a run directory of a tournament (no tournament.json "
            "with config_path); pass --config FILE",
        )
    t = load_tournament(path, folder)
    shard = recorded_shard(_snapshot(folder))
    return t if shard is None else shard_tournament(t, shard)


def _snapshot(folder: Path) -> dict[str, Any]:
    """DIR/tournament.json, or {} when missing or unreadable."""
    try:
        data = json.loads((folder / "tournament.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
