"""The baseline design through the CLI: only battles against the baseline, its leaderboard."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

import arena.sampling  # noqa: F401  (registers the `sampling` table read below)
from arena.cli import main
from arena.store import RunLog

QUESTIONS = 6
MODELS = 6


def _write(root: Path, sampling: dict[str, Any], *, reviewers: list[str] | None = None) -> Path:
    # Skills 0.3 apart: close enough that no model wins or loses every battle
    # against the baseline (a saturated win rate cannot order two models).
    models = {
        f"m{i}": {
            "provider": "sim",
            "sim": {"skill": round(0.3 * (MODELS - i), 2), "answer_noise": 0.2, "judge_noise": 0.3},
        }
        for i in range(MODELS)
    }
    with (root / "q.jsonl").open("w") as f:
        for k in range(QUESTIONS):
            f.write(json.dumps({"id": f"q{k}", "turns": [f"Question {k}?"]}) + "\n")
    cfg: dict[str, Any] = {
        "name": "baseline",
        "seed": 11,
        "questions": "q.jsonl",
        "output": str(root / "out"),
        "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 8}}},
        "models": models,
        "contestants": list(models),
        "sampling": sampling,
    }
    if reviewers is not None:
        cfg["reviewers"] = reviewers
    path = root / "t.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def test_a_baseline_tournament_of_six_reviews_only_the_baseline_battles(tmp_path: Path) -> None:
    path = _write(tmp_path, {"strategy": "baseline", "baseline": "m2"})
    runner = CliRunner()
    reviewers = MODELS  # every contestant reviews
    expected = (MODELS - 1) * 2 * QUESTIONS * reviewers

    plan = runner.invoke(main, ["plan", str(path), "--json"])
    assert plan.exit_code == 0, plan.output
    block = json.loads(plan.output)["sampling"]
    assert block["strategy"] == "baseline" and block["baseline"] == "m2"
    assert block["budget_review_calls"] == expected
    text = runner.invoke(main, ["plan", str(path)])
    assert f"{expected} of" in text.output and "baseline against m2" in text.output

    run = runner.invoke(main, ["run", str(path)])
    assert run.exit_code == 0, run.output
    log = RunLog(tmp_path / "out")
    reviews = log.read("reviews")
    assert reviews.height == expected
    pairs = reviews.select("model_a", "model_b").iter_rows()
    assert all("m2" in pair for pair in pairs)
    # Both orders of every battle, on every question, by every reviewer.
    keys = {
        (q, a, b, r)
        for q, a, b, r in reviews.select(
            "question_id", "model_a", "model_b", "reviewer"
        ).iter_rows()
    }
    for m in ("m0", "m1", "m3", "m4", "m5"):
        for q in range(QUESTIONS):
            for r in range(reviewers):
                assert (f"q{q}", m, "m2", f"m{r}") in keys
                assert (f"q{q}", "m2", m, f"m{r}") in keys

    board = runner.invoke(main, ["leaderboard", str(tmp_path / "out"), "--format", "json"])
    assert board.exit_code == 0, board.output
    out = json.loads(board.output)
    assert out["baseline"] == "m2"
    rates = out["vs_baseline"]
    assert len(rates) == MODELS - 1
    assert rates[0]["model"] == "m0" and rates[-1]["model"] == "m5"
    assert [r["model"] for r in rates] == ["m0", "m1", "m3", "m4", "m5"]
    assert out["sampling"]["strategy"] == "baseline"
    # BT from the same battles: the strongest and weakest at the ends of the order.
    order = [row["model"] for row in out["models"]]
    assert order[0] == "m0" and order[-1] == "m5"

    # The text leaderboard leads with the win rate against the baseline.
    text_board = runner.invoke(main, ["leaderboard", str(tmp_path / "out")])
    assert text_board.exit_code == 0, text_board.output
    lines = text_board.output.splitlines()
    first_section = next(
        k for k, line in enumerate(lines) if line.startswith(("Win", "Model", "#"))
    )
    assert lines[first_section].startswith("Win rate against m2"), text_board.output[:400]

    # A second run makes no call: every baseline battle is logged.
    again = runner.invoke(main, ["run", str(path)])
    assert again.exit_code == 0, again.output
    assert RunLog(tmp_path / "out").read("reviews").height == expected


def test_a_baseline_that_is_not_a_contestant_is_refused_before_any_call(tmp_path: Path) -> None:
    path = _write(tmp_path, {"strategy": "baseline", "baseline": "nobody"})
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2
    assert "sampling.baseline" in result.output and "not a contestant" in result.output
    assert not (tmp_path / "out" / "log").exists()


def test_a_baseline_design_needs_its_model_and_takes_no_budget(tmp_path: Path) -> None:
    missing = _write(tmp_path, {"strategy": "baseline"})
    result = CliRunner().invoke(main, ["plan", str(missing)])
    assert result.exit_code == 2 and "baseline" in result.output
    budget = _write(tmp_path, {"strategy": "baseline", "baseline": "m0", "budget": 0.5})
    result = CliRunner().invoke(main, ["plan", str(budget)])
    assert result.exit_code == 2 and "budget" in result.output
