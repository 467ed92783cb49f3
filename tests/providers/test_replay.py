"""`type: replay`: PRD-format reviews replayed through `arena run` give the leaderboard
that `arena leaderboard --reviews` gives on the same files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from click.testing import CliRunner, Result

from arena.cli import main
from arena.store import RunLog

MODELS = ("bard", "gpt35", "vicuna-13b")
QUESTIONS = 6
RANKED = ["--elo-orders", "0", "--bootstrap", "30", "--format", "json"]


def _arena(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _score(reviewer: str, m1: str, m2: str, q: int) -> int:
    """A fixed, varied PRD three-class score (1: m1 better, 2: m2 better, 3: tie)."""
    strength = {"bard": 0, "gpt35": 1, "vicuna-13b": 2}
    noise = (q * 7 + len(reviewer) * 3 + len(m1)) % 5
    if noise == 0:
        return 3
    better = m1 if strength[m1] + (noise == 1) * 2 > strength[m2] else m2
    return 1 if better == m1 else 2


def _prd(tmp: Path, *, skip: tuple[str, str, str, int] | None = None) -> Path:
    data = tmp / "vicuna80"
    _jsonl(
        data / "questions.jsonl",
        [
            {"question_id": q, "text": f"Question number {q}?", "category": "generic"}
            for q in range(1, QUESTIONS + 1)
        ],
    )
    for m in MODELS:
        _jsonl(
            data / "generations" / f"answer_{m}.jsonl",
            [
                {
                    "answer_id": f"{m}-{q}",
                    "model_id": f"{m}:2023",
                    "question_id": q,
                    "text": f"{m} says {q * 'x'} about question {q}.",
                }
                for q in range(1, QUESTIONS + 1)
            ],
        )
    for reviewer in MODELS:
        for m1 in MODELS:
            for m2 in MODELS:
                if m1 == m2:
                    continue
                rows = [
                    {
                        "review_id": f"{reviewer}{m1}{m2}{q}",
                        "question_id": q,
                        "answer1_id": f"{m1}-{q}",
                        "answer2_id": f"{m2}-{q}",
                        "reviewer_id": 1,
                        "metadata": {},
                        "text": "...",
                        "score": _score(reviewer, m1, m2, q),
                    }
                    for q in range(1, QUESTIONS + 1)
                    if (reviewer, m1, m2, q) != skip
                ]
                name = f"answer_{m1}-vs-answer_{m2}-{reviewer}-reviewer_threeclass.jsonl"
                _jsonl(data / f"ratings-{reviewer}" / name, rows)
    return data


def _tournament(tmp: Path, data: Path, judgments: str | list[str]) -> Path:
    cfg = {
        "name": "prd-replay",
        "questions": str(data / "questions.jsonl"),
        "output": str(tmp / "run"),
        "providers": {"recorded": {"type": "replay", "judgments": judgments}},
        "models": {
            m: {"answers": str(data / "generations" / f"answer_{m}.jsonl"), "provider": "recorded"}
            for m in MODELS
        },
        "contestants": list(MODELS),
    }
    path = tmp / "t.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


_COMPARED = (
    "win_rate",
    "weighted_win_rate",
    "bt",
    "bt_ci_low",
    "bt_ci_high",
    "win_rate_ci_low",
    "weighted_win_rate_ci_high",
    "battles",
    "rank",
)


def _ratings(board: dict[str, Any]) -> dict[str, list[float]]:
    return {row["model"]: [float(row[k]) for k in _COMPARED] for row in board["models"]}


def test_replayed_prd_reviews_give_the_imported_leaderboard(tmp_path: Path) -> None:
    data = _prd(tmp_path)
    folders = sorted(str(f) for f in data.glob("ratings-*"))
    imported = _arena("leaderboard", *[a for f in folders for a in ("--reviews", f)], *RANKED)
    assert imported.exit_code == 0, imported.output
    # Reviewers = contestants, each replaying the files of its own `ratings-` folder.
    config = _tournament(tmp_path, data, folders)
    run = _arena("run", str(config))
    assert run.exit_code == 0, run.output
    log = RunLog(tmp_path / "run")
    reviews = log.read("reviews")
    assert reviews.height == QUESTIONS * 6 * 3
    assert set(reviews["status"].to_list()) == {"ok"}
    replayed = _arena("leaderboard", str(tmp_path / "run"), *RANKED)
    assert replayed.exit_code == 0, replayed.output
    a, b = json.loads(imported.stdout), json.loads(replayed.stdout)
    ra, rb = _ratings(a), _ratings(b)
    assert set(ra) == set(rb) == set(MODELS)
    for model in MODELS:
        np.testing.assert_allclose(ra[model], rb[model], rtol=0, atol=1e-9)
    assert a["reviewer_weights"] == pytest.approx(b["reviewer_weights"])


def test_a_missing_judgment_is_a_logged_failure(tmp_path: Path) -> None:
    data = _prd(tmp_path, skip=("gpt35", "bard", "vicuna-13b", 2))
    # The mirrored order is recorded: only a battle missing in both orders fails.
    mirror = (
        data / "ratings-gpt35" / "answer_vicuna-13b-vs-answer_bard-gpt35-reviewer_threeclass.jsonl"
    )
    lines = mirror.read_text().splitlines()
    mirror.write_text(
        "".join(f"{line}\n" for line in lines if json.loads(line)["question_id"] != 2)
    )
    folders = sorted(str(f) for f in data.glob("ratings-*"))
    run = _arena("run", str(_tournament(tmp_path, data, folders)))
    assert run.exit_code == 3, run.output  # failed calls: the run is incomplete
    reviews = RunLog(tmp_path / "run").read("reviews")
    failed = reviews.filter(reviews["status"] == "failed")
    assert failed.height == 2, run.output
    assert all("no recorded judgment of 'gpt35'" in e for e in failed["error"].to_list())
    assert failed["verdict"].null_count() == 2
    assert "no recorded judgment of 'gpt35' for question '2'" in run.output


def test_replay_config_errors_exit_2(tmp_path: Path) -> None:
    data = _prd(tmp_path)
    config = _tournament(tmp_path, data, str(tmp_path / "nowhere"))
    result = _arena("run", str(config))
    assert result.exit_code == 2
    assert f"providers.recorded.judgments: {tmp_path / 'nowhere'}: judgments file not found" in (
        result.output
    )
    assert not (tmp_path / "run" / "log").exists()  # nothing ran
