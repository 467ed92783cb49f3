"""Placing a new model in a ranked tournament through `arena run` (`placement:`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

import arena.sampling  # noqa: F401  (registers the `sampling` table read below)
from arena.cli import main
from arena.store import RunLog

EXISTING = 7
QUESTIONS = 6
REVIEWERS = ["m1", "m4"]


def _write(root: Path, *, new_skill: float | None, placement: dict[str, Any] | None) -> Path:
    models: dict[str, Any] = {
        f"m{i}": {
            "provider": "sim",
            "sim": {
                "skill": round(0.4 * (EXISTING - i), 2),
                "answer_noise": 0.2,
                "judge_noise": 0.3,
            },
        }
        for i in range(EXISTING)
    }
    if new_skill is not None:
        models["new"] = {"provider": "sim", "sim": {"skill": new_skill, "answer_noise": 0.2}}
    with (root / "q.jsonl").open("w") as f:
        for k in range(QUESTIONS):
            f.write(json.dumps({"id": f"q{k}", "turns": [f"Question {k}?"]}) + "\n")
    cfg: dict[str, Any] = {
        "name": "placement",
        "seed": 4,
        "questions": "q.jsonl",
        "output": str(root / "out"),
        "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 8}}},
        "models": models,
        "contestants": list(models),
        "reviewers": REVIEWERS,
    }
    if placement is not None:
        cfg["placement"] = placement
    path = root / "t.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _ranked_then_added(root: Path, placement: dict[str, Any]) -> tuple[int, int]:
    runner = CliRunner()
    first = runner.invoke(main, ["run", str(_write(root, new_skill=None, placement=None))])
    assert first.exit_code == 0, first.output
    before = RunLog(root / "out").read("reviews").height
    # Between m2 (2.0) and m3 (1.6): its place in the order of eight is 4.
    added = runner.invoke(main, ["run", str(_write(root, new_skill=1.8, placement=placement))])
    assert added.exit_code == 0, added.output
    return before, RunLog(root / "out").read("reviews").height - before


def test_a_new_model_meets_its_neighbours_within_the_budget(tmp_path: Path) -> None:
    before, spent = _ranked_then_added(tmp_path, {"budget": 0.5})
    all_pairs = EXISTING * 2 * QUESTIONS * len(REVIEWERS)
    assert before == EXISTING * (EXISTING - 1) // 2 * 2 * QUESTIONS * len(REVIEWERS)
    assert 0 < spent <= all_pairs // 2
    reviews = RunLog(tmp_path / "out").read("reviews")
    new = reviews.filter((reviews["model_a"] == "new") | (reviews["model_b"] == "new"))
    assert new.height == spent  # only the new model's battles were added
    opponents = set(new["model_a"].to_list()) | set(new["model_b"].to_list())
    opponents.discard("new")
    # The search met the middle of the order and the neighbours of the place it found.
    assert {"m2", "m3"} <= opponents and len(opponents) < EXISTING
    assert "m6" not in opponents
    # Each probe was recorded before its reviews, with the placement strategy.
    rounds = RunLog(tmp_path / "out").read("sampling")
    assert set(rounds["strategy"].to_list()) == {"placement"}
    assert 2 * rounds.height == spent
    board = CliRunner().invoke(main, ["leaderboard", str(tmp_path / "out"), "--format", "json"])
    assert board.exit_code == 0, board.output
    row = next(r for r in json.loads(board.output)["models"] if r["model"] == "new")
    assert row["rank_low"] <= 4 <= row["rank_high"]
    # A second run adds nothing: the search is over.
    again = CliRunner().invoke(main, ["run", str(tmp_path / "t.yaml")])
    assert again.exit_code == 0, again.output
    assert RunLog(tmp_path / "out").read("reviews").height == before + spent


def test_placement_all_pairs_meets_every_contestant(tmp_path: Path) -> None:
    _, spent = _ranked_then_added(tmp_path, {"strategy": "all-pairs"})
    assert spent == EXISTING * 2 * QUESTIONS * len(REVIEWERS)


def test_a_placement_budget_out_of_range_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, new_skill=1.0, placement={"budget": 1.5})
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2
    assert "placement.budget" in result.output
    assert not (tmp_path / "out" / "log").exists()


def test_a_search_cut_short_after_its_first_probe_resumes_as_a_placement(tmp_path: Path) -> None:
    # A budget of one probe: the run stops after the middle of the order.
    runner = CliRunner()
    runner.invoke(main, ["run", str(_write(tmp_path, new_skill=None, placement=None))])
    per_probe = 2 * QUESTIONS
    path = _write(
        tmp_path, new_skill=1.8, placement={"budget": per_probe, "per_opponent": per_probe}
    )
    assert runner.invoke(main, ["run", str(path)]).exit_code == 0
    log = RunLog(tmp_path / "out")
    assert (
        log.read("sampling").height == QUESTIONS // 1
        and log.read("sampling")["model_b"].n_unique() == 1
    )
    before = log.read("reviews").height
    # The next run (a larger budget) goes on with the search, not with all pairs.
    path = _write(tmp_path, new_skill=1.8, placement={"budget": 0.5})
    assert runner.invoke(main, ["run", str(path)]).exit_code == 0
    after = RunLog(tmp_path / "out").read("reviews").height
    assert 0 < after - before < EXISTING * 2 * QUESTIONS * len(REVIEWERS) // 2
