"""Anchor conventions as options: --games, CSV with vs_baseline, avg_length (issue 47 items
6-7)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard

FAST = ["--elo-orders", "0", "--bootstrap", "0"]


def _run(*args: str) -> str:
    result = CliRunner().invoke(leaderboard, [*args, *FAST], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _pairs(tmp_path: Path) -> Path:
    winners = [
        ("model_2", "model_2"),
        ("model_2", "model_1"),
        ("tie", "model_2"),
        ("model_1", "model_1"),
    ]
    rows = [
        {
            "question_id": q,
            "model_1": "x",
            "model_2": "y",
            "g1_winner": g1,
            "g2_winner": g2,
            "judge": ["judge", "pair-v2"],
            "turn": 1,
        }
        for q, (g1, g2) in enumerate(winners, 1)
    ]
    rows.append({**rows[0], "question_id": 9, "g2_winner": "error"})
    path = tmp_path / "pair.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_games_merged_counts_a_record_as_fastchat_does(tmp_path: Path) -> None:
    path = _pairs(tmp_path)
    separate = json.loads(_run(str(path), "--format", "json"))
    merged = json.loads(_run(str(path), "--format", "json", "--games", "merged"))
    rate = {m["model"]: m["win_rate"] for m in separate["models"]}
    # Separate: 9 counted games (the error game is invalid); y wins 5.5 of them.
    assert separate["counts"]["reviews"] == 10 and rate["y"] == (5 + 0.5) / 9
    # Merged: y won q1, q2 and q3 split (a tie), x won q4; q9 had an error game.
    rate = {m["model"]: m["win_rate"] for m in merged["models"]}
    assert merged["counts"]["reviews"] == 5 and merged["counts"]["invalid"] == 1
    assert rate["y"] == (1 + 0.5 + 0.5) / 4


def _annotations(tmp_path: Path) -> Path:
    rows: list[dict[str, Any]] = []
    for q in range(6):
        for model, output in (("m1", "abcd" if q else ""), ("m2", "x" * (10 + q))):
            rows.append(
                {
                    "instruction": f"Q{q}",
                    "output_1": "reference",
                    "generator_1": "ref",
                    "output_2": output,
                    "generator_2": model,
                    "annotator": "judge",
                    "preference": 1.0 + (q % 3) / 2,
                }
            )
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(rows))
    return path


def test_csv_carries_the_baseline_figures_and_empty_answers_count(tmp_path: Path) -> None:
    path = _annotations(tmp_path)
    args = ["--reviews", str(path), "--baseline", "ref", "--length-control"]
    board = json.loads(_run(*args, "--format", "json"))
    rows = {r["model"]: r for r in csv.DictReader(io.StringIO(_run(*args, "--format", "csv")))}
    for entry in board["vs_baseline"]:
        row = rows[entry["model"]]
        assert row["baseline"] == "ref"
        assert float(row["vs_baseline_win_rate"]) == entry["win_rate"]
        assert float(row["lc_win_rate"]) == entry["lc_win_rate"]
    assert rows["ref"]["lc_win_rate"] == ""
    # An empty answer is an answer of length 0 (as AlpacaEval's avg_length counts it).
    lengths = {e["model"]: e["avg_length"] for e in board["vs_baseline"]}
    assert lengths["m1"] == 4 * 5 / 6
