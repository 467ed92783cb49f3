"""A judge that always sees the baseline first (AlpacaEval's design) cannot show a position
bias apart from the baseline's strength: the reliability fit holds it at 0, says it is not
measurable, and settles; a judge that sees pairs in both orders gets it measured."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard

FAST = ["--elo-orders", "0", "--bootstrap", "0", "--format", "json"]


def _annotation(q: int, model: str, preference: float, swap: bool) -> dict[str, Any]:
    first, second = ("base", model) if not swap else (model, "base")
    return {
        "instruction": f"Question {q}",
        "output_1": f"answer of {first} to {q}",
        "generator_1": first,
        "output_2": f"answer of {second} to {q}",
        "generator_2": second,
        "annotator": "judge",
        "preference": preference if not swap else 3.0 - preference,
    }


def _board(tmp_path: Path, swap_some: bool) -> dict[str, Any]:
    rng = random.Random(3)
    records = [
        _annotation(q, model, 1.0 + rng.random(), swap_some and q % 2 == 1)
        for model in ("m1", "m2", "m3")
        for q in range(40)
    ]
    path = tmp_path / "annotations.json"
    path.write_text(json.dumps(records))
    result = CliRunner().invoke(leaderboard, [str(path), "--baseline", "base", *FAST])
    assert result.exit_code == 0, result.output
    board: dict[str, Any] = json.loads(result.output)
    return board


def test_baseline_always_first_leaves_position_bias_unmeasured(tmp_path: Path) -> None:
    board = _board(tmp_path, swap_some=False)
    fit = board["reliability"]
    assert fit["converged"] is True
    assert fit["reviewers"][0]["position_bias"] is None
    assert not any("did not settle" in w for w in board.get("warnings", []))
    assert {m["model"] for m in board["models"]} == {"base", "m1", "m2", "m3"}


def test_pairs_in_both_orders_measure_it(tmp_path: Path) -> None:
    board = _board(tmp_path, swap_some=True)
    bias = board["reliability"]["reviewers"][0]["position_bias"]
    assert isinstance(bias, float)
