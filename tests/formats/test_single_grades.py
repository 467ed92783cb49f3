"""MT-bench single-answer grades (FastChat's `<judge>_single.jsonl`) and FastChat's
single-mode table through `arena leaderboard`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard


def _grade(q: int, model: str, turn: int, score: float) -> dict[str, Any]:
    judge = ["gpt-4", "single-v1" if turn == 1 else "single-v1-multi-turn"]
    return {
        "question_id": q,
        "model": model,
        "judge": judge,
        "user_prompt": "[Question] ...",
        "judgment": f"... Rating: [[{score}]]",
        "score": score,
        "turn": turn,
        "tstamp": 1700000000.0,
    }


GRADES = [
    *(_grade(q, "gpt-4", t, 9 + (q % 2) - t) for q in range(81, 86) for t in (1, 2)),
    *(_grade(q, "vicuna-13b", t, 6.5 - (q % 3)) for q in range(81, 86) for t in (1, 2)),
    _grade(86, "vicuna-13b", 2, -1),  # FastChat found no rating: left out
]


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _run(*args: str) -> Any:
    return CliRunner().invoke(leaderboard, list(args), catch_exceptions=False)


def _fastchat_means(rows: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """show_result.py's single mode, restated: grades of -1 out, means per turn and overall."""
    kept = [r for r in rows if r["score"] != -1]
    out: dict[str, dict[str, float]] = {}
    for model in {r["model"] for r in kept}:
        mine = [r for r in kept if r["model"] == model]
        out[model] = {
            "score": sum(r["score"] for r in mine) / len(mine),
            **{
                f"turn_{t}": sum(r["score"] for r in mine if r["turn"] == t)
                / len([r for r in mine if r["turn"] == t])
                for t in (1, 2)
            },
        }
    return out


def test_fastchats_single_mode_table(tmp_path: Path) -> None:
    path = _write(tmp_path / "gpt-4_single.jsonl", GRADES)
    result = _run("--reviews", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    table = json.loads(result.output)
    assert table["judges"] == ["gpt-4"]
    assert table["grades"] == 20 and table["questions"] == 5
    expected = _fastchat_means(GRADES)
    assert [m["model"] for m in table["models"]] == ["gpt-4", "vicuna-13b"]
    for row in table["models"]:
        for key in ("score", "turn_1", "turn_2"):
            assert abs(row[key] - expected[row["model"]][key]) < 1e-12
    assert table["models"][1]["n"] == 10
    assert table["warnings"] == [
        "1 grade of -1 (no rating in the judgment text) left out, as FastChat leaves them"
    ]
    text = _run(str(path))
    assert text.exit_code == 0
    assert "MT-bench single-answer grades" in text.output and "turn 2" in text.output
    csv = _run(str(path), "--format", "csv")
    assert csv.output.splitlines()[0] == "rank,model,score,turn_1,turn_2,n"


def test_a_folder_of_grade_files_is_one_table(tmp_path: Path) -> None:
    folder = tmp_path / "model_judgment"
    folder.mkdir()
    _write(folder / "a_single.jsonl", GRADES[:10])
    _write(folder / "b_single.jsonl", GRADES[10:])
    result = _run("--reviews", str(folder), "--format", "json")
    assert result.exit_code == 0, result.output
    assert {m["model"] for m in json.loads(result.output)["models"]} == {"gpt-4", "vicuna-13b"}


def test_bad_grades_and_pairwise_flags_are_refused(tmp_path: Path) -> None:
    bad = _write(tmp_path / "bad.jsonl", [GRADES[0], {**GRADES[1], "score": "nine"}])
    result = _run("--reviews", str(bad))
    assert result.exit_code == 2
    assert f"{bad}: line 2: score: expected a number, not 'nine'" in result.output
    good = _write(tmp_path / "gpt-4_single.jsonl", GRADES)
    result = _run("--reviews", str(good), "--baseline", "gpt-4")
    assert result.exit_code == 2 and "single-answer grades have no battles" in result.output
    pair = _write(
        tmp_path / "pair.jsonl",
        [{"question_id": "q1", "model_a": "x", "model_b": "y", "reviewer": "j", "score": -1}],
    )
    result = _run("--reviews", str(good), "--reviews", str(pair))
    assert result.exit_code == 2
    assert f"{pair}: not MT-bench single-answer grades, given with grade files" in result.output
