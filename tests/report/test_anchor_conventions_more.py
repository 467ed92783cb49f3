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
            (("m1", "m2"), ("m2", "m3"), ("m3", "m1"), ("m2", "m1")), (-1, (q % 3) - 1, 1, 0)
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
