"""Contestants from MT-bench, arena-hard and AlpacaEval files through `arena run` and the
leaderboard; references; smoke runs with --limit; the shipped examples."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from arena.cli import main
from arena.config import FILE_PROVIDER
from arena.store import RunLog
from tests.formats._files import (
    ALPACA_INSTRUCTIONS,
    ARENA_HARD_V01_QUESTIONS,
    ARENA_HARD_V2_QUESTIONS,
    MT_QUESTIONS,
    alpaca_outputs,
    arena_hard_v01_answers,
    arena_hard_v2_answers,
    fastchat_answers,
    json_list,
    jsonl,
)

ROOT = Path(__file__).resolve().parent.parent.parent
FAST = ["--bootstrap", "0", "--elo-orders", "0"]


def _arena(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _summary(result: Result) -> dict[str, Any]:
    return json.loads(result.stdout.strip().splitlines()[-1])


def _tournament(tmp: Path, questions: str, files: dict[str, str], **extra: Any) -> Path:
    cfg: dict[str, Any] = {
        "name": "formats",
        "seed": 1,
        "questions": questions,
        "output": str(tmp / "out"),
        "providers": {"sim": {"type": "sim"}},
        "models": {
            **{name: {"answers": path} for name, path in files.items()},
            "live": {"provider": "sim", "sim": {"skill": 0.5}},
            "judge-1": {"provider": "sim"},
            "judge-2": {"provider": "sim", "sim": {"position_bias": 0.2}},
        },
        "contestants": [*files, "live"],
        "reviewers": ["judge-1", "judge-2"],
        **extra,
    }
    path = tmp / "t.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _write_format(tmp: Path, shape: str) -> tuple[str, dict[str, str], int]:
    """Questions and two answer files in one tool's shape: (questions, files, n questions)."""
    if shape == "mt-bench":
        jsonl(tmp / "question.jsonl", MT_QUESTIONS)
        jsonl(tmp / "x.jsonl", fastchat_answers("model-x", MT_QUESTIONS, "X"))
        jsonl(tmp / "y.jsonl", fastchat_answers("model-y", MT_QUESTIONS, "Y"))
        return "question.jsonl", {"model-x": "x.jsonl", "model-y": "y.jsonl"}, 3
    if shape == "arena-hard-v0.1":
        jsonl(tmp / "question.jsonl", ARENA_HARD_V01_QUESTIONS)
        jsonl(tmp / "x.jsonl", arena_hard_v01_answers("model-x", "X"))
        jsonl(tmp / "y.jsonl", arena_hard_v01_answers("model-y", "Y"))
        return "question.jsonl", {"model-x": "x.jsonl", "model-y": "y.jsonl"}, 2
    if shape == "arena-hard-v2":
        jsonl(tmp / "question.jsonl", ARENA_HARD_V2_QUESTIONS)
        jsonl(tmp / "x.jsonl", arena_hard_v2_answers("model-x", "X"))
        jsonl(tmp / "y.jsonl", arena_hard_v2_answers("model-y", "Y"))
        return "question.jsonl", {"model-x": "x.jsonl", "model-y": "y.jsonl"}, 2
    json_list(tmp / "alpaca_eval.json", alpaca_outputs("baseline", "B"))
    json_list(tmp / "mine.json", alpaca_outputs("mine", "M"))
    files = {"baseline": "alpaca_eval.json", "mine": "mine.json"}
    return "alpaca_eval.json", files, len(ALPACA_INSTRUCTIONS)


@pytest.mark.parametrize("shape", ["mt-bench", "arena-hard-v0.1", "arena-hard-v2", "alpacaeval"])
def test_answer_files_run_and_rank(tmp_path: Path, shape: str) -> None:
    questions, files, n = _write_format(tmp_path, shape)
    path = _tournament(tmp_path, questions, files)
    result = _arena("run", str(path), "--json")
    assert result.exit_code == 0, result.output
    summary = _summary(result)
    # Calls: the live model's answers, and 6 ordered pairs x 2 reviewers per question.
    assert summary["planned"] == n + n * 6 * 2 and summary["failed"] == 0
    answers = RunLog(tmp_path / "out").read("answers")
    from_file = answers.filter(answers["provider"] == FILE_PROVIDER)
    assert from_file.height == 2 * n and set(from_file["status"]) == {"ok"}
    assert (from_file["cost_usd"] == 0).all() and (from_file["tokens_out"] == 0).all()
    first = from_file.filter(from_file["model"] == list(files)[0])["answer_turns"].to_list()
    assert all(turns and turns[0][:1] in "XB" for turns in first)
    reviews = RunLog(tmp_path / "out").read("reviews")
    assert reviews.height == n * 12 and set(reviews["status"]) <= {"ok", "invalid"}
    assert (reviews["verdict"] != "invalid").sum() == reviews.height  # sims judge file answers
    board = _arena(
        "leaderboard", str(tmp_path / "out"), "--format", "json", "--by", "category", *FAST
    )
    assert board.exit_code == 0, board.output
    data = json.loads(board.stdout)
    assert {m["model"] for m in data["models"]} == {*files, "live"}
    assert data["by_category"]
    again = _arena("run", str(path), "--json")
    assert _summary(again)["skipped"] == summary["planned"]  # nothing is asked twice


def test_a_question_missing_from_the_file_is_reported(tmp_path: Path) -> None:
    jsonl(tmp_path / "question.jsonl", MT_QUESTIONS)
    jsonl(tmp_path / "x.jsonl", fastchat_answers("model-x", MT_QUESTIONS[:2], "X"))
    jsonl(tmp_path / "y.jsonl", fastchat_answers("model-y", MT_QUESTIONS, "Y"))
    path = _tournament(tmp_path, "question.jsonl", {"model-x": "x.jsonl", "model-y": "y.jsonl"})
    result = _arena("run", str(path), "--json")
    assert result.exit_code == 3, result.output  # partial: battles of question 130 wait
    assert "model-x" in result.stderr and "130" in result.stderr and "x.jsonl" in result.stderr
    answers = RunLog(tmp_path / "out").read("answers")
    failed = answers.filter(answers["status"] == "failed")
    assert failed["model"].to_list() == ["model-x"] and failed["question_id"].to_list() == ["130"]
    assert "no answer in x.jsonl" in failed["error"][0]
    summary = _summary(result)
    # model-x's 4 ordered battles on question 130, each for 2 reviewers.
    assert summary["pending"] == 4 * 2
    board = _arena("leaderboard", str(tmp_path / "out"), "--format", "json", *FAST)
    assert board.exit_code == 0


def test_limit_runs_the_first_questions_and_a_full_run_reuses_them(tmp_path: Path) -> None:
    questions, files, n = _write_format(tmp_path, "mt-bench")
    path = _tournament(tmp_path, questions, files)
    smoke = _arena("run", str(path), "--limit", "1", "--json")
    assert smoke.exit_code == 0, smoke.output
    first = _summary(smoke)
    assert first["planned"] == 1 + 12
    full = _summary(_arena("run", str(path), "--json"))
    assert full["skipped"] == first["completed"] + first["invalid"]
    assert full["planned"] == n + n * 12
    bad = _arena("run", str(path), "--limit", "0")
    assert bad.exit_code == 2


def test_reference_changes_make_only_that_questions_reviews_stale(tmp_path: Path) -> None:
    questions, files, n = _write_format(tmp_path, "mt-bench")
    refs = jsonl(tmp_path / "refs.jsonl", fastchat_answers("gpt-4", MT_QUESTIONS[:1], "R"))
    template = tmp_path / "review.txt"
    template.write_text(
        (ROOT / "configs" / "prompts" / "review.txt")
        .read_text()
        .replace("[Question]\n{question}\n", "[Question]\n{question}\n\n[Reference]\n{reference}\n")
    )
    path = _tournament(
        tmp_path, questions, files, references="refs.jsonl", review={"template": "review.txt"}
    )
    assert _arena("run", str(path)).exit_code == 0
    refs.write_text(json.dumps(fastchat_answers("gpt-4", MT_QUESTIONS[:1], "Changed")[0]) + "\n")
    plan = json.loads(_arena("plan", str(path), "--json").stdout)
    assert plan["total"]["stale"] == 12  # question 81's reviews only
    assert plan["from_file"] == ["model-x", "model-y"]


@pytest.mark.parametrize("name", ["mt-bench", "arena-hard", "alpacaeval"])
def test_shipped_examples_run_and_match_the_docs(tmp_path: Path, name: str) -> None:
    shipped = ROOT / "tournaments" / f"{name}.yaml"
    guide = (ROOT / "docs" / "formats.md").read_text()
    block = re.search(rf"```yaml\n(name: {name}\n.*?)```", guide, re.S)
    assert block is not None
    assert yaml.safe_load(block.group(1)) == yaml.safe_load(shipped.read_text())
    result = _arena("run", str(shipped), "--out", str(tmp_path / name), "--json")
    assert result.exit_code == 0, result.output
    board = _arena("leaderboard", str(tmp_path / name), "--by", "category", *FAST)
    assert board.exit_code == 0 and "By category" in board.stdout
