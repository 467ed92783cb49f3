"""Biases that warn: style effect, position bias, reviewer blocs (issue 47, item 4)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard

FAST = ["--elo-orders", "0", "--bootstrap", "0", "--format", "json"]


def _board(path: Path, *args: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        leaderboard, ["--reviews", str(path), *args, *FAST], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    board: dict[str, Any] = json.loads(result.output)
    return board


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _bloc_rows(seed: int = 0) -> list[dict[str, Any]]:
    """Six honest judges and a bloc of four weak models that vote for each other."""
    rng = np.random.default_rng(seed)
    honest = [f"h{k}" for k in range(6)]
    bloc = [f"b{k}" for k in range(4)]
    skill = {**{m: 1.0 - 0.2 * k for k, m in enumerate(honest)}, **dict.fromkeys(bloc, -1.0)}
    models = honest + bloc
    rows = []
    for q in range(20):
        for i, a in enumerate(models):
            for b in models[i + 1 :]:
                p_a = 1 / (1 + math.exp(-(skill[a] - skill[b])))
                for reviewer in models:
                    if reviewer in bloc and (a in bloc) != (b in bloc):
                        verdict = "A" if a in bloc else "B"  # the bloc's own side
                    elif reviewer in bloc:
                        verdict = "A" if (q + i) % 2 else "B"  # the bloc's shared coin
                    else:
                        verdict = "A" if rng.random() < p_a else "B"
                    rows.append(
                        {
                            "question_id": f"q{q}",
                            "model_a": a,
                            "model_b": b,
                            "reviewer": reviewer,
                            "verdict": verdict,
                        }
                    )
    return rows


def test_a_bloc_is_named_member_by_member(tmp_path: Path) -> None:
    path = _write(tmp_path / "bloc.jsonl", _bloc_rows())
    board = _board(path, "--weights", "peerrank")
    (line,) = [w for w in board["warnings"] if w.startswith("reviewer bloc")]
    assert line.startswith("reviewer bloc: b0, b1, b2, b3 agree with each other")
    assert not any(f"h{k}" in line for k in range(6))
    assert "4 of 10 reviewers" in line
    weights = board["reviewer_weights"]
    share = sum(weights[f"b{k}"] for k in range(4)) / sum(weights.values())
    if share > 0.4:
        assert "outsized" in line


def test_honest_judges_alone_make_no_bloc(tmp_path: Path) -> None:
    rows = [r for r in _bloc_rows() if not r["reviewer"].startswith("b")]
    board = _board(_write(tmp_path / "honest.jsonl", rows))
    assert not any(w.startswith("reviewer bloc") for w in board.get("warnings", []))


def test_length_effect_and_position_bias_warn(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    rows = []
    models = ["m0", "m1", "m2", "m3"]
    for q in range(40):
        length = {m: float(rng.uniform(100, 2000)) for m in models}
        for a in models:
            for b in models:
                if a == b:
                    continue
                # The judge prefers the longer answer; `lefty` prefers position A too.
                logit = 2.5 * math.tanh((length[a] - length[b]) / 500)
                for reviewer, bias in (("judge", 0.0), ("lefty", 1.5)):
                    won = rng.random() < 1 / (1 + math.exp(-(logit + bias)))
                    rows.append(
                        {
                            "question_id": f"q{q}",
                            "model_a": a,
                            "model_b": b,
                            "reviewer": reviewer,
                            "verdict": "A" if won else "B",
                            "length_a": round(length[a]),
                            "length_b": round(length[b]),
                        }
                    )
    board = _board(_write(tmp_path / "long.jsonl", rows))
    style = [w for w in board["warnings"] if w.startswith("style effect")]
    assert len(style) == 1 and "more length" in style[0]
    position = [w for w in board["warnings"] if w.startswith("position bias")]
    assert len(position) == 1 and position[0].startswith("position bias: lefty favours")
