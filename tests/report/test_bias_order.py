"""The default order under a shared bias (issue 47, item 4): style-controlled where the
style effect is significant, as before where it is not; a simulated bloc named exactly."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from click.testing import CliRunner

from arena.cli import main as cli
from arena.cli._leaderboard import leaderboard

FAST = ["--elo-orders", "0", "--bootstrap", "0"]
SKILL = {"m0": 1.2, "m1": 0.6, "m2": 0.0, "m3": -0.6, "m4": -1.2}
# Answer length against skill: the weakest write the longest answers.
WORDS = {"m0": 150, "m1": 300, "m2": 600, "m3": 1200, "m4": 2400}


def _rows(length_bias: float, seed: int = 5) -> list[dict[str, Any]]:
    """Two judges on 40 questions, every ordered pair; the longer answer gets
    `length_bias` times tanh(relative length gap) added to its logit."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(40):
        length = {m: WORDS[m] * math.exp(0.3 * rng.normal()) for m in SKILL}
        for a in SKILL:
            for b in SKILL:
                if a == b:
                    continue
                gap = (length[a] - length[b]) / (0.5 * (length[a] + length[b]))
                logit = SKILL[a] - SKILL[b] + length_bias * math.tanh(gap)
                for judge in ("j1", "j2"):
                    won = rng.random() < 1 / (1 + math.exp(-logit))
                    rows.append(
                        {
                            "question_id": f"q{q}",
                            "model_a": a,
                            "model_b": b,
                            "reviewer": judge,
                            "verdict": "A" if won else "B",
                            "length_a": round(length[a]),
                            "length_b": round(length[b]),
                        }
                    )
    return rows


def _leaderboard(path: Path, *args: str) -> str:
    result = CliRunner().invoke(
        leaderboard, ["--reviews", str(path), *FAST, *args], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    return result.output


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_a_significant_style_effect_ranks_style_controlled_and_says_so(tmp_path: Path) -> None:
    path = _write(tmp_path / "long.jsonl", _rows(length_bias=3.0))
    board = json.loads(_leaderboard(path, "--format", "json"))
    assert board["rank_by"] == "bt_style"
    (line,) = [w for w in board["warnings"] if w.startswith("style effect")]
    assert "more length" in line and "rank, rank_low and rank_high follow" in line
    models = board["models"]
    # rank is the style-controlled rank; the raw Bradley-Terry rank stands beside it.
    assert [m["rank"] for m in models] == [1, 2, 3, 4, 5]
    assert all(m["rank"] == m["style_rank"] for m in models)
    raw = sorted(models, key=lambda m: -m["bt"])
    assert [m["bt_rank"] for m in raw] == [1, 2, 3, 4, 5]
    assert all(m["bt_rank_low"] <= m["bt_rank"] <= m["bt_rank_high"] for m in models)
    # The controlled order finds the truth; the raw one rewards length.
    assert [m["model"] for m in models] == list(SKILL)
    assert [m["model"] for m in raw] != list(SKILL)
    assert all(m["rank_low"] <= m["rank"] <= m["rank_high"] for m in models)
    assert [n["upper"] for n in board["neighbours"]] == list(SKILL)[:-1]
    assert [n["upper"] for n in board["bt_neighbours"]] == [m["model"] for m in raw][:-1]
    # The table leads with the controlled order and names it; CSV carries both ranks.
    table = _leaderboard(path)
    assert "Models (ordered by style-controlled Bradley-Terry)" in table
    assert "Order: style-controlled Bradley-Terry" in table and "BT #" in table
    csv_text = _leaderboard(path, "--format", "csv")
    header = csv_text.splitlines()[0].split(",")
    assert header[0] == "rank" and "bt_rank" in header and "bt_rank_low" in header


def test_without_a_style_effect_the_order_is_raw_bradley_terry(tmp_path: Path) -> None:
    path = _write(tmp_path / "plain.jsonl", _rows(length_bias=0.0))
    board = json.loads(_leaderboard(path, "--format", "json"))
    assert not any(w.startswith("style effect") for w in board.get("warnings", []))
    assert "rank_by" not in board and "bt_neighbours" not in board
    models = board["models"]
    assert all("bt_rank" not in m for m in models)
    assert [m["model"] for m in models] == [
        m["model"] for m in sorted(models, key=lambda m: -m["bt"])
    ]
    assert [m["rank"] for m in models] == [1, 2, 3, 4, 5]
    table = _leaderboard(path)
    assert "Models (ordered by Bradley-Terry)" in table and "BT #" not in table


def _bloc_tournament(folder: Path) -> Path:
    """Six honest sim models and four alike weak ones that vote for each other."""
    questions = [json.dumps({"id": f"q{i}", "text": f"Question {i}?"}) for i in range(5)]
    (folder / "questions.jsonl").write_text("\n".join(questions) + "\n")
    honest = {f"h{k}": {"skill": 1.5 - 0.4 * k} for k in range(6)}
    bloc = {
        f"b{k}": {"skill": -0.9 - 0.4 * k, "style": "bloc", "ally_preference": 4.0}
        for k in range(4)
    }
    config = {
        "name": "bloc",
        "seed": 3,
        "questions": "questions.jsonl",
        "output": str(folder / "out"),
        "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 256}}},
        "models": {m: {"provider": "sim", "sim": p} for m, p in {**honest, **bloc}.items()},
        "contestants": [*honest, *bloc],
    }
    path = folder / "bloc.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def test_a_simulated_bloc_is_named_exactly_under_peerrank_weights(tmp_path: Path) -> None:
    runner = CliRunner()
    ran = runner.invoke(cli, ["run", str(_bloc_tournament(tmp_path))], catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    result = runner.invoke(
        cli,
        ["leaderboard", str(tmp_path / "out"), "--weights", "peerrank", *FAST, "--format", "json"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    board = json.loads(result.output)
    (line,) = [w for w in board["warnings"] if w.startswith("reviewer bloc")]
    members = line.split(": ", 1)[1].split(" agree")[0].split(", ")
    assert members == ["b0", "b1", "b2", "b3"]
    assert "4 of 10 reviewers" in line and "peerrank weight" in line
