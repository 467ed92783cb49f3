"""A toy stage added as docs/DESIGN.md ("Adding a stage") says: its package and one line.

The package (`tests/toystage/`) declares the `grades` stage: its YAML section,
its log table, its planner, its simulator replies, its share of `arena plan`,
`arena status` and the leaderboard, and its own command. The one line is the
registration the program below runs before the CLI (a registration lasts for
the process, so each program runs in a process of its own); everything else
goes through the `arena` command line, on a tiny simulated tournament.
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
# The one registry line, then `arena` commands (each args list in turn, in this process).
REGISTERED = (
    "from arena.stages import register_stage\nregister_stage('tests.toystage:GRADES_STAGE')\n"
)
PROGRAM = (
    "import json, sys\n"
    "from click.testing import CliRunner\n"
    "from arena.cli import main\n"
    "out = []\n"
    "for args in json.loads(sys.argv[1]):\n"
    "    r = CliRunner().invoke(main, args)\n"
    "    out.append({'code': r.exit_code, 'stdout': r.stdout, 'stderr': r.stderr})\n"
    "print(json.dumps(out))\n"
)


def arena(*commands: list[str], registered: bool = True) -> list[dict[str, Any]]:
    """Each command's exit code, stdout and stderr, from one `arena` process."""
    path = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    done = subprocess.run(
        [sys.executable, "-c", (REGISTERED if registered else "") + PROGRAM, json.dumps(commands)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": path},
        timeout=300,
        check=True,
    )
    results: list[dict[str, Any]] = json.loads(done.stdout.splitlines()[-1])
    return results


def tournament(tmp: Path, grades: dict[str, Any], name: str = "t") -> Path:
    folder = tmp / name
    folder.mkdir()
    return small_tournament(folder, models=3, questions=2, extra={"grades": grades})


def test_the_section_is_validated_once_the_stage_is_registered(tmp_path: Path) -> None:
    config = tournament(tmp_path, {"grader": "m0"})
    bad = tournament(tmp_path, {"grader": "nobody"}, "bad")
    typo = tournament(tmp_path, {"grader": "m0", "max_token": 5}, "typo")
    [plain] = arena(["plan", str(config)], registered=False)
    assert plain["code"] == 2
    assert f"{config}: grades: unknown key" in plain["stderr"]

    good, undefined, unknown = arena(
        ["check", str(config)], ["plan", str(bad)], ["check", str(typo)]
    )
    assert good["code"] == 0, good["stderr"]
    assert undefined["code"] == 2
    assert f"{bad}: grades.grader: undefined model 'nobody'" in undefined["stderr"]
    assert unknown["code"] == 2
    assert f"{typo}: grades.max_token: unknown key" in unknown["stdout"] + unknown["stderr"]


def test_a_tiny_tournament_runs_the_toy_stage_end_to_end(tmp_path: Path) -> None:
    config = tournament(tmp_path, {"grader": "m0"})
    out_dir = tmp_path / "out"
    plan, text, run, grades, status, board, shown, listed = arena(
        ["plan", str(config), "--json"],
        ["plan", str(config)],
        ["run", str(config), "--out", str(out_dir)],
        ["grades", str(out_dir)],
        ["status", str(out_dir), "--config", str(config), "--json"],
        ["leaderboard", str(out_dir), "--format", "json"],
        ["leaderboard", str(out_dir)],
        ["--help"],
    )

    # `arena plan`: the stage's block, its column and its note.
    assert plan["code"] == 0, plan["stderr"]
    planned = json.loads(plan["stdout"])
    assert planned["grades"] == {"answers": 6, "grader": "m0"}
    assert next(r for r in planned["rows"] if r["model"] == "m0")["grades"] == 6
    assert planned["total"]["grades"] == 6
    assert "grades: 6 answers graded by m0." in text["stdout"]

    # `arena run`: the stage's planner runs after the answers; its table is written.
    assert run["code"] == 0, run["stderr"]
    assert list((out_dir / "log" / "grades").glob("*.parquet"))

    # Its own command reads the table: the simulator grades by simulated quality.
    assert grades["code"] == 0, grades["stderr"]
    means = {m: float(g) for m, g in (line.split("\t") for line in grades["stdout"].splitlines())}
    assert set(means) == {"m0", "m1", "m2"}
    assert means["m0"] >= means["m1"] >= means["m2"]
    assert means["m0"] > means["m2"]
    assert "Print the mean grade of each model in DIR." in listed["stdout"]

    # `arena status`: its calls are rows of the table, its block their totals.
    assert status["code"] == 0, status["stderr"]
    report = json.loads(status["stdout"])
    rows = [r for r in report["rows"] if r["stage"] == "grades"]
    assert [(r["provider"], r["planned"], r["done"], r["pending"]) for r in rows] == [
        ("sim", 6, 6, 0)
    ]
    assert report["grades"]["done"] == 6

    # The leaderboard: its block under its key, its table and its footer line.
    assert board["code"] == 0, board["stderr"]
    block = json.loads(board["stdout"])["grades"]
    assert [r["model"] for r in block["rows"]] == ["m0", "m1", "m2"]
    assert {r["model"]: r["mean_grade"] for r in block["rows"]} == pytest.approx(means, abs=1e-3)
    assert "Grades" in shown["stdout"]
    assert "Grades: 3 models graded from 1 to 5." in shown["stdout"]
