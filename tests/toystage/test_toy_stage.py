"""A toy stage added as docs/DESIGN.md ("Adding a stage") says: its package and one line.

The package (`tests/toystage/`) declares the `grades` stage: its YAML section,
its log table, its planner, its simulator replies, its share of `arena plan`,
`arena status` and the leaderboard, and its own command. The one line is the
registration each program below runs before the CLI; everything else goes
through the `arena` command line, on a tiny simulated tournament.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import small_tournament

ROOT = Path(__file__).resolve().parents[2]
# The `arena` program with the toy stage registered: the one registry line.
PROGRAM = (
    "import sys\n"
    "from arena.stages import register_stage\n"
    "register_stage('tests.toystage:GRADES_STAGE')\n"
    "from arena.cli import main\n"
    "main(sys.argv[1:])\n"
)
# The `arena` program as shipped (no toy stage).
PLAIN = "import sys\nfrom arena.cli import main\nmain(sys.argv[1:])\n"


def arena(*args: str, program: str = PROGRAM) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-c", program, *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=300,
    )


def tournament(tmp: Path, grades: dict[str, Any]) -> Path:
    return small_tournament(tmp, models=3, questions=2, extra={"grades": grades})


def test_the_section_is_validated_only_once_the_stage_is_registered(tmp_path: Path) -> None:
    config = tournament(tmp_path, {"grader": "m0"})
    plain = arena("check", str(config), program=PLAIN)
    assert plain.returncode == 2
    assert f"{config}: grades: unknown key" in plain.stderr

    bad = tournament(tmp_path, {"grader": "nobody"})
    out = arena("check", str(bad))
    assert out.returncode == 2
    assert f"{bad}: grades.grader: undefined model 'nobody'" in out.stderr
    typo = tournament(tmp_path, {"grader": "m0", "max_token": 5})
    out = arena("check", str(typo))
    assert out.returncode == 2
    assert f"{typo}: grades.max_token: unknown key" in out.stderr


def test_a_tiny_tournament_runs_the_toy_stage_end_to_end(tmp_path: Path) -> None:
    config = tournament(tmp_path, {"grader": "m0"})
    out_dir = tmp_path / "out"

    # `arena plan`: the stage's block, its column and its note.
    plan = arena("plan", str(config), "--json")
    assert plan.returncode == 0, plan.stderr
    planned = json.loads(plan.stdout)
    assert planned["grades"] == {"answers": 6, "grader": "m0"}
    grader_row = next(r for r in planned["rows"] if r["model"] == "m0")
    assert grader_row["grades"] == 6
    assert planned["total"]["grades"] == 6
    text = arena("plan", str(config))
    assert "grades: 6 answers graded by m0." in text.stdout

    # `arena run`: the stage's planner runs after the answers; its table is written.
    run = arena("run", str(config), "--out", str(out_dir))
    assert run.returncode == 0, run.stderr
    assert list((out_dir / "log" / "grades").glob("*.parquet"))

    # Its own command reads the table: the simulator grades by simulated quality.
    grades = arena("grades", str(out_dir))
    assert grades.returncode == 0, grades.stderr
    means = {m: float(g) for m, g in (line.split("\t") for line in grades.stdout.splitlines())}
    assert set(means) == {"m0", "m1", "m2"}
    assert means["m0"] >= means["m1"] >= means["m2"]
    assert means["m0"] > means["m2"]

    # `arena status`: its calls are rows of the table, its block their totals.
    status = arena("status", str(out_dir), "--config", str(config), "--json")
    assert status.returncode == 0, status.stderr
    report = json.loads(status.stdout)
    rows = [r for r in report["rows"] if r["stage"] == "grades"]
    assert [(r["provider"], r["planned"], r["done"], r["pending"]) for r in rows] == [
        ("sim", 6, 6, 0)
    ]
    assert report["grades"]["done"] == 6

    # The leaderboard: its block under its key, its table and its footer line.
    board = arena("leaderboard", str(out_dir), "--format", "json")
    assert board.returncode == 0, board.stderr
    block = json.loads(board.stdout)["grades"]
    assert [r["model"] for r in block["rows"]] == ["m0", "m1", "m2"]
    assert {r["model"]: r["mean_grade"] for r in block["rows"]} == pytest.approx(means, abs=1e-3)
    shown = arena("leaderboard", str(out_dir))
    assert "Grades" in shown.stdout
    assert "Grades: 3 models graded from 1 to 5." in shown.stdout


def test_the_stage_command_is_listed_with_its_summary() -> None:
    shown = arena("--help")
    assert shown.returncode == 0
    assert "Print the mean grade of each model in DIR." in shown.stdout
