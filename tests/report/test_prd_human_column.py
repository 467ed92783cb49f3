"""PRD's human column: labels of one ordered battle merged (the sign of their mean) before
the win rate under `--conventions prd`; every label counts under arena's conventions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard

FAST = ["--elo-orders", "0", "--bootstrap", "0", "--format", "json"]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _human_rates(tmp_path: Path, conventions: str) -> dict[str, float]:
    reviews = _jsonl(
        tmp_path / "reviews.jsonl",
        [
            {"question_id": q, "model_a": a, "model_b": b, "reviewer": "j", "score": -1}
            for q in ("q1", "q2")
            for a, b in (("m1", "m2"), ("m2", "m1"))
        ],
    )
    human = _jsonl(
        tmp_path / "human.jsonl",
        [
            # q1, m1 first: A, A, B -> merged A (m1 wins); raw m1 2 of 3.
            *(
                {"question_id": "q1", "model_a": "m1", "model_b": "m2", "reviewer": "h", "score": s}
                for s in (-1, -1, 1)
            ),
            # q2, m2 first: A, B -> merged tie; raw one each.
            *(
                {"question_id": "q2", "model_a": "m2", "model_b": "m1", "reviewer": "h", "score": s}
                for s in (-1, 1)
            ),
        ],
    )
    result = CliRunner().invoke(
        leaderboard,
        ["--reviews", str(reviews), "--human", str(human), "--conventions", conventions, *FAST],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    rates: dict[str, float] = json.loads(result.output)["agreement"]["human_win_rate"]
    return rates


def test_prd_conventions_merge_each_ordered_battle_first(tmp_path: Path) -> None:
    assert _human_rates(tmp_path, "prd") == {"m1": 0.75, "m2": 0.25}


def test_arena_conventions_count_every_label(tmp_path: Path) -> None:
    assert _human_rates(tmp_path, "arena") == {"m1": 0.6, "m2": 0.4}
