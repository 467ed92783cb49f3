"""Judgments in bulk: globs, folders searched recursively, several positional paths, and
the baseline's own annotations skipped (issue 47, item 5)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard

FAST = ["--elo-orders", "0", "--bootstrap", "0", "--format", "json"]
BASE = "base_model"
ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(leaderboard, [*args, *FAST], catch_exceptions=False)


def _annotation(model: str, question: int, preference: float) -> dict[str, Any]:
    return {
        "instruction": f"Question {question}",
        "output_1": "the baseline's answer",
        "generator_1": BASE,
        "output_2": f"{model}'s answer to {question}",
        "generator_2": model,
        "annotator": ANNOTATOR,
        "preference": preference,
        "dataset": "helpful_base",
    }


def _results(root: Path) -> Path:
    """An AlpacaEval-shaped results folder: one folder per model, its annotations a level
    down, its outputs (not judgments) beside them, and the baseline's self-annotations."""
    prefs = {"m1": [1.9, 1.2, 1.7, 1.1], "m2": [1.1, 1.3, 1.4, 1.9], "m3": [1.6, 1.6, 1.2, 1.8]}
    for model, values in {**prefs, BASE: [1.5] * 4}.items():
        folder = root / "results" / model
        (folder / ANNOTATOR).mkdir(parents=True)
        gen = BASE if model == BASE else model
        rows = [_annotation(gen, q, p) for q, p in enumerate(values, 1)]
        (folder / ANNOTATOR / "annotations.json").write_text(json.dumps(rows))
        outputs = [
            {"instruction": f"Question {q}", "output": "x", "generator": gen} for q in (1, 2)
        ]
        (folder / "model_outputs.json").write_text(json.dumps(outputs))
    return root / "results"


def _models(board: dict[str, Any]) -> set[str]:
    return {m["model"] for m in board["models"]}


def test_a_results_folder_is_searched_recursively(tmp_path: Path) -> None:
    results = _results(tmp_path)
    result = _invoke("--reviews", str(results), "--baseline", BASE)
    assert result.exit_code == 0, result.output
    board = json.loads(result.output)
    assert _models(board) == {"m1", "m2", "m3", BASE}
    assert board["counts"]["reviews"] == 12
    skipped = [w for w in board["warnings"] if w.startswith("skipped 4 files")]
    assert len(skipped) == 1 and "model_outputs.json" in skipped[0]
    (selfs,) = [w for w in board["warnings"] if "against itself" in w]
    assert selfs.startswith(f"skipped 4 annotations of {BASE} against itself")


def test_globs_repeated_flags_and_positional_paths_read_the_same(tmp_path: Path) -> None:
    results = _results(tmp_path)
    pattern = str(results / "*" / ANNOTATOR / "annotations.json")
    by_glob = json.loads(_invoke("--reviews", pattern).output)
    files = [str(results / m / ANNOTATOR / "annotations.json") for m in ("m1", "m2", "m3")]
    repeated = json.loads(_invoke(*[a for f in files for a in ("--reviews", f)]).output)
    positional = json.loads(_invoke(*files).output)
    recursive = json.loads(_invoke(str(results / "**" / "annotations.json")).output)
    for board in (by_glob, repeated, positional, recursive):
        ratings = {m["model"]: m["bt"] for m in board["models"]}
        assert ratings == {m["model"]: m["bt"] for m in repeated["models"]}
    assert by_glob["counts"]["reviews"] == 12 and positional["counts"]["reviews"] == 12


def test_a_named_file_that_is_not_judgments_still_stops(tmp_path: Path) -> None:
    results = _results(tmp_path)
    result = CliRunner().invoke(
        leaderboard, ["--reviews", str(results / "m1" / "model_outputs.json")]
    )
    assert result.exit_code == 2
    assert "model_outputs.json" in result.output and "not a judgments file" in result.output
    nothing = CliRunner().invoke(leaderboard, ["--reviews", str(tmp_path / "nope" / "*.json")])
    assert nothing.exit_code == 2 and "no file or folder matches" in nothing.output


def test_a_run_directory_and_files_together_say_how(tmp_path: Path) -> None:
    results = _results(tmp_path)
    run = tmp_path / "run"
    (run / "log").mkdir(parents=True)
    result = CliRunner().invoke(leaderboard, [str(run), str(results / "m1")])
    assert result.exit_code == 2
    assert "--reviews" in result.output
