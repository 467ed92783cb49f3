"""The stage object: everything `arena.stages` registers, from this package."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from arena.config import ConfigError, StageSection, Tournament, TournamentConfig
from arena.pipeline import AllPairsPlanner
from arena.stage import (
    BoardInputs,
    BoardText,
    EstimateInputs,
    ModelCalls,
    Stage,
    StageBoard,
    StageCommand,
    StageEstimate,
    StageReport,
    StageRun,
    StageStatus,
    StageTable,
    StatusInputs,
)
from arena.store import RunLog
from tests.toystage._planner import STAGE, GradesPlanner, grade_id
from tests.toystage._schema import TABLE, GradesConfig
from tests.toystage._sim import grade_reply


def _section(t: Tournament) -> GradesConfig | None:
    section: GradesConfig | None = t.config.section("grades")
    return section


def check_section(cfg: TournamentConfig, section: GradesConfig, file: str | Path) -> None:
    """The grader is a model of the tournament."""
    if section.grader not in cfg.models:
        raise ConfigError(file, "grades.grader", f"undefined model '{section.grader}'")


class GradesRun(StageRun):
    def planner(self, t: Tournament, base: AllPairsPlanner) -> GradesPlanner | None:
        section = _section(t)
        return None if section is None else GradesPlanner(t, base, section)


@dataclass(frozen=True)
class GradeCalls:
    """`arena plan`'s block: one grading call per answer of the plan."""

    answers: int
    grader: str

    def to_json(self) -> dict[str, Any]:
        return {"answers": self.answers, "grader": self.grader}


def _states(log: RunLog | None, ids: list[str]) -> list[str]:
    """Each call's state: done (graded or invalid), failed or pending."""
    logged: dict[str, str] = {}
    if log is not None:
        frame = log.read(TABLE, columns=["status"])
        logged = dict(zip(frame["id"].to_list(), frame["status"].to_list(), strict=True))
    states = {"ok": "done", "invalid": "invalid", "failed": "failed"}
    return [states.get(logged.get(i, ""), "pending") for i in ids]


class GradesPlanStatus(StageReport):
    plan_key = "grades"
    plan_column = "grades"

    def estimate(self, inputs: EstimateInputs) -> StageEstimate:
        section = _section(inputs.t)
        if section is None:
            return StageEstimate()
        ids = [grade_id(a.id, section.grader) for a in inputs.plan.answers]
        calls = [
            ModelCalls(section.grader, state, est_in=200, est_out=section.max_tokens)
            for state in _states(inputs.log, ids)
        ]
        block = GradeCalls(len(ids), section.grader)
        note = f"grades: {block.answers} answers graded by {block.grader}."
        return StageEstimate(block=block, calls=calls, notes=[note])

    def status(self, inputs: StatusInputs) -> StageStatus:
        t, plan = inputs.t, inputs.plan
        section = None if t is None else _section(t)
        if t is None or plan is None or section is None:
            return StageStatus()
        ids = [grade_id(a.id, section.grader) for a in plan.answers]
        frame = pl.DataFrame(
            {
                "provider": [t.provider_of(section.grader)] * len(ids),
                "state": _states(inputs.log, ids),
            },
            schema={"provider": pl.String, "state": pl.String},
        )
        return StageStatus(calls=frame)


class GradesBoard(StageBoard):
    key = "grades"
    title = "Grades"

    def block(self, inputs: BoardInputs) -> dict[str, Any] | None:
        frames = [RunLog(d).read(TABLE, columns=["model", "grade"]) for d in inputs.directories]
        graded = pl.concat(frames).drop_nulls("grade")
        if graded.height == 0:
            return None
        means = dict(graded.group_by("model").agg(pl.col("grade").mean()).iter_rows())
        rows = [{"model": m, "mean_grade": round(means[m], 3)} for m in inputs.order if m in means]
        return {"rows": rows}

    def text(self, block: Mapping[str, Any]) -> BoardText:
        rows = [[r["model"], f"{r['mean_grade']:.2f}"] for r in block["rows"]]
        return BoardText(
            [GradesTable("Grades", ["model", "mean grade"], rows, [])],
            [f"Grades: {len(rows)} models graded from 1 to 5."],
        )


@dataclass
class GradesTable:
    title: str
    header: list[str]
    rows: list[list[str]]
    notes: list[str]


GRADES_STAGE = Stage(
    name=STAGE,
    tables=(StageTable(TABLE, "tests.toystage._schema:TABLE_SCHEMA", model_column="grader"),),
    run=GradesRun(),
    report=GradesPlanStatus(),
    board=GradesBoard(),
    section=StageSection("grades", GradesConfig, check_section),
    command=StageCommand(
        "grades", "tests.toystage._cli:grades_cmd", "Print the mean grade of each model in DIR."
    ),
    sim=grade_reply,
)
