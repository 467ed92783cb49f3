"""The leaderboard's `batcheval` block: a sim tournament with BatchEval, through the CLI."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.config import load_tournament
from arena.engine import run_tournament
from arena.store import RunLog
from tests.conftest import small_tournament

CRITERIA = [
    {"name": "helpfulness", "description": "Does it help?", "scale": {"low": 1, "high": 5}},
    {"name": "accuracy", "description": "Is it correct?", "scale": {"low": 1, "high": 10}},
]
FAST = ["--elo-orders", "4", "--bootstrap", "20"]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3 contestants x 4 questions, one scorer, 2 criteria, 2 rounds; priced so it costs."""
    tmp = tmp_path_factory.mktemp("batcheval")
    section = {"scorers": ["m0"], "criteria": CRITERIA, "batch_size": 4, "rounds": 2}
    prices = {f"m{i}": {"input": 1.0, "output": 2.0} for i in range(3)}
    t = load_tournament(
        small_tournament(tmp, models=3, questions=4, extra={"batcheval": section, "prices": prices})
    )
    summary = asyncio.run(run_tournament(t))
    assert summary.by_stage["batcheval"]["completed"] == 2 * 3 * 2  # rounds x batches x criteria
    return t.output_dir


def _leaderboard(*args: str) -> str:
    result = CliRunner().invoke(main, ["leaderboard", *args, *FAST], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_json_block_has_every_contestant_and_criterion(run_dir: Path) -> None:
    data = json.loads(_leaderboard(str(run_dir), "--format", "json"))
    block: dict[str, Any] = data["batcheval"]
    models = [m["model"] for m in data["models"]]
    assert sorted(models) == ["m0", "m1", "m2"]
    assert block["criteria"] == ["accuracy", "helpfulness"] and block["scorers"] == ["m0"]
    # Rows in leaderboard order, then by criterion.
    assert [(r["model"], r["criterion"]) for r in block["rows"]] == [
        (m, c) for m in models for c in ("accuracy", "helpfulness")
    ]
    for row in block["rows"]:
        assert row["answers"] == 4 and row["unscored_answers"] == 0
        assert row["ci_low"] <= row["mean"] <= row["ci_high"]
    # Correlated with the Bradley-Terry ratings of this leaderboard.
    assert block["against"] == "bt"
    assert block["pairwise"] == {m["model"]: m["bt"] for m in data["models"]}
    assert [c["criterion"] for c in block["correlation"]] == ["accuracy", "helpfulness"]
    for corr in block["correlation"]:
        assert corr["n"] == 3
        assert all(corr[k] is not None for k in ("pearson", "spearman", "kendall"))


def test_total_cost_includes_batcheval_spend(run_dir: Path) -> None:
    data = json.loads(_leaderboard(str(run_dir), "--format", "json"))
    log = RunLog(run_dir)
    spent = {t: float(log.read(t)["cost_usd"].sum()) for t in ("answers", "reviews", "batcheval")}
    assert spent["batcheval"] > 0
    assert data["cost_usd"] == pytest.approx(sum(spent.values()))


def test_markdown_and_table_show_the_scores_and_correlations(run_dir: Path) -> None:
    markdown = _leaderboard(str(run_dir), "--format", "markdown")
    assert "## BatchEval scores (mean answer score, 95% bootstrap CI over answers)" in markdown
    assert "| model | criterion | mean | 95% CI | answers | unscored |" in markdown
    assert "## BatchEval means against the Bradley-Terry ranking" in markdown
    assert "| criterion | models | Pearson | Spearman | Kendall |" in markdown
    lines = [line for line in markdown.splitlines() if line.startswith("| m2 | accuracy |")]
    assert len(lines) == 1
    table = _leaderboard(str(run_dir), "--format", "table")
    assert "BatchEval scores" in table and "helpfulness" in table


def test_no_block_without_batcheval_scores(tmp_path: Path) -> None:
    t = load_tournament(small_tournament(tmp_path, models=3, questions=2))
    asyncio.run(run_tournament(t))
    data = json.loads(_leaderboard(str(t.output_dir), "--format", "json"))
    assert "batcheval" not in data
    assert "BatchEval" not in _leaderboard(str(t.output_dir), "--format", "markdown")


def test_removed_contestant_is_left_out_of_the_block(run_dir: Path, tmp_path: Path) -> None:
    # The contestants are those of tournament.json: drop m2 there, its scores go too.
    copy = Path(shutil.copytree(run_dir, tmp_path / "run"))
    snapshot = json.loads((copy / "tournament.json").read_text())
    snapshot["contestants"] = ["m0", "m1"]
    (copy / "tournament.json").write_text(json.dumps(snapshot))
    block = json.loads(_leaderboard(str(copy), "--format", "json"))["batcheval"]
    assert {r["model"] for r in block["rows"]} == {"m0", "m1"}
    assert all(c["n"] == 2 and c["spearman"] is None for c in block["correlation"])
    scores = pl.read_parquet(copy / "batcheval_scores.parquet")
    assert "m2" in scores["model"].to_list()  # still in the scores file, just not shown
