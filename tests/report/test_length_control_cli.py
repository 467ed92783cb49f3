"""`arena leaderboard --baseline MODEL --length-control` on AlpacaEval-format annotations."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard

FAST = ["--elo-orders", "0", "--bootstrap", "30"]


def _invoke(*args: str) -> click.testing.Result:
    return CliRunner().invoke(leaderboard, list(args), catch_exceptions=False)


def _annotations(tmp_path: Path, questions: int = 200) -> Path:
    """A judge that likes length: `verbose` is as good as the baseline but longer,
    `better` is better at the baseline's length (AlpacaEval's fields; preference 2:
    generator_2 wins, 1: the baseline wins)."""
    rng = random.Random(11)
    rows: list[dict[str, Any]] = []
    for q in range(questions):
        difficulty = rng.gauss(0.0, 0.5)
        ref = rng.randint(600, 1200)
        for model, strength, length in (
            ("verbose", 0.0, ref + rng.randint(200, 1400)),
            ("better", 0.7, max(ref + int(rng.gauss(0, 300)), 20)),
        ):
            logit = strength - difficulty + 1.5 * math.tanh((length - ref) / 600)
            wins = rng.random() < 1 / (1 + math.exp(-logit))
            rows.append(
                {
                    "instruction": f"instruction {q}",
                    "output_1": "r" * ref,
                    "generator_1": "ref",
                    "output_2": "m" * length,
                    "generator_2": model,
                    "annotator": "weighted_alpaca_eval_gpt4_turbo",
                    "dataset": "helpful_base",
                    "preference": 2.0 if wins else 1.0,
                }
            )
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(rows))
    return path


def test_json_holds_the_length_controlled_rates(tmp_path: Path) -> None:
    path = _annotations(tmp_path)
    args = ["--reviews", str(path), "--baseline", "ref", "--format", "json", *FAST]
    result = _invoke(*args, "--length-control")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    rows = {row["model"]: row for row in data["vs_baseline"]}
    verbose, better = rows["verbose"], rows["better"]
    # Raw, the longer model leads; at the baseline's length the better one does.
    assert verbose["win_rate"] > better["win_rate"]
    assert better["lc_win_rate"] > verbose["lc_win_rate"]
    # Most of its length edge goes (the default fit's length coefficient leans on its
    # prior, 1 logit, where this judge's is 1.5: a little edge is left).
    assert verbose["win_rate"] - verbose["lc_win_rate"] > 0.1
    assert abs(verbose["lc_win_rate"] - 0.5) < 0.15
    for row in rows.values():
        assert 0 <= row["lc_ci_low"] <= row["lc_win_rate"] <= row["lc_ci_high"] <= 1
    block = data["length_control"]
    assert block["fit"] == "per-model" and block["interval"] == "question bootstrap"
    assert block["difficulty"] == {"source": "none"}
    assert block["bootstrap"] == 30 and block["length_sd"] > 0
    assert block["length_coef"]["verbose"] > 0.5
    # Without the flag the entries carry no lc_* fields.
    plain = json.loads(_invoke(*args).output)
    assert "length_control" not in plain
    assert all("lc_win_rate" not in row for row in plain["vs_baseline"])


def test_table_column_and_bad_input(tmp_path: Path) -> None:
    path = _annotations(tmp_path, questions=60)
    result = _invoke(
        "--reviews",
        str(path),
        "--baseline",
        "ref",
        "--length-control",
        "--format",
        "markdown",
        *FAST,
    )
    assert result.exit_code == 0, result.output
    assert "LC win rate" in result.output and "LC 95% CI" in result.output
    result = CliRunner().invoke(leaderboard, ["--reviews", str(path), "--length-control"])
    assert result.exit_code == 2
    assert "--length-control needs --baseline MODEL" in result.stderr
    lengthless = tmp_path / "lengthless.csv"
    lengthless.write_text(
        "question_id,model_a,model_b,reviewer,score\nq1,m,ref,j,-1\nq2,ref,m,j,1\n"
    )
    result = CliRunner().invoke(
        leaderboard, ["--reviews", str(lengthless), "--baseline", "ref", "--length-control"]
    )
    assert result.exit_code == 2
    assert "needs the answers' lengths" in result.stderr
