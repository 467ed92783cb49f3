"""Anchor conventions: FastChat files under --by category, a single judge under PeerRank."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard

FAST = ["--elo-orders", "0", "--bootstrap", "0"]


def _fastchat_pair(path: Path) -> Path:
    rows = [
        {
            "question_id": q,
            "model_1": "m1",
            "model_2": "m2",
            "g1_winner": "model_1",
            "g2_winner": "model_2" if q % 3 else "model_1",
            "judge": ["gpt-4", "pair-v2"],
            "turn": 1,
        }
        for q in range(81, 91)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_by_category_on_a_fastchat_file_says_what_is_missing(tmp_path: Path) -> None:
    path = _fastchat_pair(tmp_path / "gpt-4_pair.jsonl")
    result = CliRunner().invoke(leaderboard, ["--reviews", str(path), "--by", "category", *FAST])
    assert result.exit_code == 2
    assert "carry no category" in result.output
    assert "FastChat's MT-bench files have none" in result.output
    assert "rank without --by category" in result.output


@pytest.mark.parametrize("weights", ["peerrank", "reliability", "equal"])
@pytest.mark.parametrize("judge", ["gpt-4", "m1"])  # outside, or one of the contestants
def test_a_single_judge_import_never_warns_that_peerrank_did_not_settle(
    tmp_path: Path, weights: str, judge: str
) -> None:
    rows = [
        {"question_id": f"q{q}", "model_a": a, "model_b": b, "reviewer": judge, "score": s}
        for q in range(12)
        for (a, b), s in zip(
            (("m1", "m2"), ("m2", "m3"), ("m3", "m1"), ("m2", "m1")),
            (-1, (q % 3) - 1, 1, 0),
            strict=True,
        )
    ]
    path = tmp_path / "one.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = CliRunner().invoke(
        leaderboard, ["--reviews", str(path), "--weights", weights, "--format", "json", *FAST]
    )
    assert result.exit_code == 0, result.output
    board = json.loads(result.output)
    assert len(board["models"]) == 3
    assert not [w for w in board.get("warnings", []) if "settle" in w]


def _arena_hard(uid: str, category: str, model: str, g1: str, g2: str) -> dict[str, object]:
    baseline = "gemini-2.0-flash-001" if category == "creative_writing" else "o3-mini-2025-01-31"
    games = [{"score": g1}, {"score": g2}]  # game 1 shows the baseline first
    return {
        "uid": uid,
        "category": category,
        "judge": "gpt-4.1",
        "model": model,
        "baseline": baseline,
        "games": games,
    }


def _arena_hard_folder(root: Path) -> Path:
    """arena-hard v2.0's layout: one file per model, each question judged against its
    category's baseline."""
    folder = root / "gpt-4.1"
    folder.mkdir()
    wins, losses, ties = ("B>A", "A>B"), ("A>B", "B>A"), ("A=B", "A=B")
    rows = {
        "m1": [("h1", "hard_prompt", wins), ("h2", "hard_prompt", wins)]
        + [("h3", "hard_prompt", losses), ("c1", "creative_writing", ties)],
        "m2": [("h1", "hard_prompt", losses), ("h2", "hard_prompt", losses)]
        + [("h3", "hard_prompt", losses), ("c1", "creative_writing", wins)],
    }
    for model, judged in rows.items():
        lines = [_arena_hard(u, c, model, *g) for u, c, g in judged]
        (folder / f"{model}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return folder


def test_arena_hard_baselines_per_category(tmp_path: Path) -> None:
    folder = _arena_hard_folder(tmp_path)
    result = CliRunner().invoke(
        leaderboard,
        ["--reviews", str(folder), "--baseline", "per-category", "--format", "json", *FAST],
    )
    assert result.exit_code == 0, result.output
    by = json.loads(result.output)["by_category"]
    assert by["hard_prompt"]["baseline"] == "o3-mini-2025-01-31"
    assert by["creative_writing"]["baseline"] == "gemini-2.0-flash-001"
    hard = {r["model"]: r["win_rate"] for r in by["hard_prompt"]["vs_baseline"]}
    creative = {r["model"]: r["win_rate"] for r in by["creative_writing"]["vs_baseline"]}
    assert hard == {"m1": 4 / 6, "m2": 0.0}
    assert creative == {"m1": 0.5, "m2": 1.0}
    table = CliRunner().invoke(
        leaderboard, ["--reviews", str(folder), "--baseline", "per-category", *FAST]
    )
    assert table.exit_code == 0, table.output
    assert "win vs gemini-2.0-flash-001" in table.output


def test_a_category_without_a_common_model_has_no_baseline(tmp_path: Path) -> None:
    rows = [
        {"question_id": "q1", "model_a": "x", "model_b": "y", "reviewer": "j", "score": -1},
        {"question_id": "q2", "model_a": "y", "model_b": "z", "reviewer": "j", "score": 1},
        {"question_id": "q3", "model_a": "z", "model_b": "x", "reviewer": "j", "score": 0},
    ]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(r | {"category": "c"}) + "\n" for r in rows))
    result = CliRunner().invoke(
        leaderboard, ["--reviews", str(path), "--baseline", "per-category", *FAST]
    )
    assert result.exit_code == 2
    assert "no model takes part in every battle of category 'c'" in result.output
