"""Self-judged battles that are a model's only evidence are kept and named (issue 47, item 1)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard

FAST = ["--elo-orders", "0", "--bootstrap", "0", "--format", "json"]


def _board(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(leaderboard, [*args, *FAST], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    board: dict[str, Any] = json.loads(result.output)
    return board


def _pair(question: int, one: str, two: str, g1: str, g2: str, judge: str) -> dict[str, Any]:
    """A FastChat MT-bench pairwise record (g1 shows model_1 first)."""
    return {
        "question_id": question,
        "model_1": one,
        "model_2": two,
        "g1_winner": g1,
        "g2_winner": g2,
        "judge": [judge, "pair-v2"],
        "turn": 1,
    }


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_one_judge_that_competes_rates_every_contestant(tmp_path: Path) -> None:
    winners = ["model_2", "model_2", "model_1", "tie", "model_2", "model_1"]
    rows = [
        _pair(q, "small", "judge", w, w if q % 2 else "tie", "judge")
        for q, w in enumerate(winners, 1)
    ]
    board = _board("--reviews", str(_write(tmp_path / "gpt-4_pair.jsonl", rows)))
    models = {m["model"]: m for m in board["models"]}
    assert set(models) == {"small", "judge"}
    for model in models.values():
        assert model["bt"] is not None and model["rank"] is not None
        assert model["weighted_win_rate"] is not None
    assert models["judge"]["bt"] > models["small"]["bt"]
    (warning,) = [w for w in board["warnings"] if "self-judged" in w]
    assert "12 self-judged reviews by judge" in warning
    # Its self-preference is not measurable: nobody else judged its answers.
    (reviewer,) = board["reliability"]["reviewers"]
    assert reviewer["self_preference"] is None


def test_a_model_judged_only_by_itself_is_kept(tmp_path: Path) -> None:
    rows = []
    for q in range(1, 7):
        rows.append(_pair(q, "a", "b", "model_1", "model_1", "outsider"))
        rows.append(_pair(q, "lone", "a", "model_1", "model_2" if q % 3 else "tie", "lone"))
    board = _board("--reviews", str(_write(tmp_path / "pairs.jsonl", rows)))
    models = {m["model"]: m for m in board["models"]}
    assert models["lone"]["bt"] is not None and models["lone"]["rank"] is not None
    (warning,) = [w for w in board["warnings"] if "self-judged" in w]
    assert warning.startswith("12 self-judged reviews by lone kept")
    assert "only evidence for lone" in warning


def test_self_preference_is_measured_where_other_judges_rate_the_answers(
    tmp_path: Path,
) -> None:
    rows = []
    for q in range(1, 9):
        # `a` always prefers itself; `outsider` prefers b half the time.
        rows.append(_pair(q, "a", "b", "model_1", "model_1", "a"))
        other = "model_2" if q % 2 else "model_1"
        rows.append(_pair(q, "a", "b", other, other, "outsider"))
    board = _board("--reviews", str(_write(tmp_path / "pairs.jsonl", rows)))
    assert not any("self-judged" in w for w in board.get("warnings", []))
    reviewers = {r["reviewer"]: r for r in board["reliability"]["reviewers"]}
    assert reviewers["a"]["self_preference"] > 0
    # Without the own battles `a` judged, the ratings rest on the outsider alone: a tie.
    models = {m["model"]: m for m in board["models"]}
    assert abs(models["a"]["weighted_win_rate"] - 0.5) < 1e-12


def test_peerrank_weights_keep_own_battles_without_a_warning(tmp_path: Path) -> None:
    rows = [_pair(q, "small", "judge", "model_2", "model_2", "judge") for q in range(1, 5)]
    path = _write(tmp_path / "pairs.jsonl", rows)
    board = _board("--reviews", str(path), "--weights", "peerrank")
    assert all(m["bt"] is not None for m in board["models"])
    assert not any("self-judged" in w for w in board.get("warnings", []))
