"""`arena leaderboard` piped: complete numbers at any width, and CSV that reads back."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from tests.rank._frames import random_reviews

# Long names and eight models: the tables are far wider than 80 columns.
NAMES = {f"m{i}": f"organisation-{i}/very-long-model-name-{i}-instruct" for i in range(8)}
FAST = ["--elo-orders", "3", "--bootstrap", "10"]


def _reviews_file(tmp_path: Path) -> Path:
    frame = random_reviews(models=8, questions=5, seed=3)
    frame = frame.with_columns(frame[c].replace(NAMES) for c in ("model_a", "model_b", "reviewer"))
    path = tmp_path / "reviews.csv"
    frame.write_csv(path)
    return path


def _leaderboard(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "arena", "leaderboard", *args, *FAST],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


def test_piped_table_has_every_number_in_full(tmp_path: Path) -> None:
    path = _reviews_file(tmp_path)
    table = _leaderboard(str(path))  # stdout is a pipe, not a terminal
    json_out = CliRunner().invoke(main, ["leaderboard", str(path), "--format", "json", *FAST])
    board = json.loads(json_out.output)
    assert "…" not in table and "..." not in table
    assert max(len(line) for line in table.splitlines()) > 120
    for m in board["models"]:
        row = next(line for line in table.splitlines() if f" {m['model']} " in line)
        cells = row.split()
        assert f"{m['bt']:.0f}" in cells
        assert f"{m['bt_ci_low']:.0f}-{m['bt_ci_high']:.0f}" in cells
        assert f"{m['win_rate']:.3f}" in cells and f"{m['weighted_win_rate']:.3f}" in cells
        assert f"{m['elo']:.0f}" in cells


def test_csv_reads_back_as_the_json(tmp_path: Path) -> None:
    path = _reviews_file(tmp_path)
    runner = CliRunner()
    board = json.loads(
        runner.invoke(main, ["leaderboard", str(path), "--format", "json", *FAST]).output
    )
    result = runner.invoke(main, ["leaderboard", str(path), "--format", "csv", *FAST])
    assert result.exit_code == 0, result.output
    rows = list(csv.DictReader(io.StringIO(result.output)))
    assert [r["model"] for r in rows] == [m["model"] for m in board["models"]]
    assert [int(r["rank"]) for r in rows] == list(range(1, 9))
    for row, model in zip(rows, board["models"], strict=True):
        for key, value in model.items():
            if key == "model":
                continue
            if value is None:
                assert row[key] == ""
            elif isinstance(value, bool | str):
                assert row[key] == str(value), key
            else:
                assert float(row[key]) == value, key  # full precision, not rounded


def test_history_csv(tmp_path: Path) -> None:
    from tests.conftest import small_tournament

    yaml_path = small_tournament(tmp_path, models=2, questions=1)
    runner = CliRunner()
    for night in range(2):  # tagged, so the unchanged second night adds a snapshot too
        assert runner.invoke(main, ["run", str(yaml_path), "--tag", f"n{night}"]).exit_code == 0
    out = runner.invoke(
        main, ["leaderboard", str(tmp_path / "out"), "--history", "--format", "csv"]
    )
    rows = list(csv.DictReader(io.StringIO(out.output)))
    assert len(rows) == 2 * 2 and {r["model"] for r in rows} == {"m0", "m1"}
    assert len({r["snapshot"] for r in rows}) == 2
    diff = runner.invoke(main, ["leaderboard", str(tmp_path / "out"), "--diff", "--format", "csv"])
    changes = list(csv.DictReader(io.StringIO(diff.output)))
    assert {r["model"] for r in changes} == {"m0", "m1"}
