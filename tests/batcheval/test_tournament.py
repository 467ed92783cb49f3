"""The BatchEval stage inside `arena run`, and its leaderboard summary."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from arena.batcheval import (
    SCORES_FILE,
    TABLE,
    batcheval_summary,
    read_scores,
    tournament_samples,
)
from arena.cli import main
from arena.config import load_tournament
from arena.engine import preflight, run_tournament
from arena.pipeline import build_plan
from arena.store import RunLog
from tests.conftest import small_tournament

SECTION: dict[str, Any] = {
    "scorers": ["m0", "m1"],
    "criteria": [
        {"name": "helpfulness", "description": "Helps?", "scale": {"low": 1, "high": 3}},
        {"name": "accuracy", "description": "Correct?", "scale": {"low": 1, "high": 10}},
    ],
    "batch_size": 5,
    "rounds": 2,
}


def _tournament(tmp: Path, **kw: Any) -> Any:
    return load_tournament(
        small_tournament(
            tmp, models=4, questions=6, multi_turn=True, extra={"batcheval": {**SECTION, **kw}}
        )
    )


def test_scores_every_answer_and_resumes(tmp_path: Path) -> None:
    t = _tournament(tmp_path)
    summary = asyncio.run(run_tournament(t))
    stage = summary.by_stage["batcheval"]
    # 24 answers in batches of 5: 5 batches, x 2 rounds x 2 criteria x 2 scorers
    assert stage["planned"] == stage["completed"] + stage["invalid"] == 40
    assert summary.pending == 0 and summary.planned == build_plan(t).size + 40
    log = RunLog(t.output_dir).read(TABLE)
    answers = RunLog(t.output_dir).read("answers")
    for (_, _, _), group in log.group_by(["criterion", "scorer", "round"]):
        assert sorted(group["sample_id"].to_list()) == sorted(answers["id"].to_list())
    by_answer = answers.select(pl.col("id").alias("sample_id"), "model", "question_id")
    joined = log.join(by_answer, on="sample_id", suffix="_a")
    assert joined["model"].to_list() == joined["model_a"].to_list()
    # a multi-turn answer is scored as the whole conversation, a single turn with its question
    turns = dict(zip(answers["id"].to_list(), answers["answer_turns"].to_list(), strict=True))
    samples = tournament_samples(
        [(a.id, a.question, a.model) for a in build_plan(t).answers], turns
    )
    multi = next(s for s in samples if s.question_id == "0")
    single = next(s for s in samples if s.question_id == "q1")
    assert "[Turn 2]" in multi.text and multi.context is None
    assert single.context == "Question number 1?" and "⟦sim" in single.text

    again = asyncio.run(run_tournament(t))
    assert again.by_stage["batcheval"]["skipped"] == 40
    assert again.completed == 0


def test_leaderboard_summary(tmp_path: Path) -> None:
    t = _tournament(tmp_path)
    asyncio.run(run_tournament(t))
    summary = batcheval_summary(t.output_dir, n_boot=200)
    assert summary is not None
    assert summary["criteria"] == ["accuracy", "helpfulness"]
    assert summary["scorers"] == ["m0", "m1"]
    rows = {(r["model"], r["criterion"]): r for r in summary["rows"]}
    assert len(rows) == 4 * 2
    for r in rows.values():
        assert r["answers"] == 6
        assert r["ci_low"] <= r["mean"] <= r["ci_high"]
    # sim skills are m0 > m1 > m2 > m3: both scorings should see it
    means = [rows[(f"m{i}", "accuracy")]["mean"] for i in range(4)]
    assert means == sorted(means, reverse=True)
    assert summary["against"] == "win_rate"
    for corr in summary["correlation"]:
        assert corr["n"] == 4 and corr["spearman"] is not None and corr["spearman"] > 0.5
    given = batcheval_summary(
        t.output_dir, {"m0": 1.0, "m1": 2.0, "m2": 3.0, "m3": 4.0}, n_boot=200
    )
    assert given is not None and given["against"] == "given"
    assert given["correlation"][0]["spearman"] == pytest.approx(-1.0)


def test_summary_is_none_without_batcheval(tmp_path: Path) -> None:
    t = load_tournament(small_tournament(tmp_path, models=2, questions=1))
    asyncio.run(run_tournament(t))
    assert batcheval_summary(t.output_dir) is None
    assert "batcheval" not in asyncio.run(run_tournament(t)).by_stage
    assert read_scores(t.output_dir / SCORES_FILE) is None


def test_bad_template_is_a_preflight_problem(tmp_path: Path) -> None:
    t = _tournament(tmp_path, template="nope.txt")
    problems = preflight(t)
    assert any("batcheval.template: template file not found" in p for p in problems)


def test_leaderboard_reports_agreement_with_human_scores(tmp_path: Path) -> None:
    t = _tournament(tmp_path)
    asyncio.run(run_tournament(t))
    answers = RunLog(t.output_dir).read("answers")
    # people score the better models' answers higher, on one criterion only
    skill = {f"m{i}": 4.0 - i for i in range(4)}
    lines = [
        json.dumps({"question_id": q, "model": m, "criterion": "helpfulness", "score": skill[m]})
        for q, m in answers.select("question_id", "model").iter_rows()
    ]
    human = tmp_path / "human.jsonl"
    human.write_text("\n".join(lines) + "\n")
    runner = CliRunner()
    args = ["leaderboard", str(t.output_dir), "--bootstrap", "20", "--elo-orders", "0"]
    result = runner.invoke(main, [*args, "--human-scores", str(human), "--format", "json"])
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["batcheval"]["human"]
    assert [(r["criterion"], r["scorer"]) for r in rows] == [
        ("helpfulness", "all scorers"),
        ("helpfulness", "m0"),
        ("helpfulness", "m1"),
    ]
    for r in rows:
        assert r["n"] == answers.height and r["pearson"] > 0.3
        lo, hi = r["spearman_ci"]
        assert lo <= r["spearman"] <= hi
    markdown = runner.invoke(main, [*args, "--human-scores", str(human), "--format", "markdown"])
    assert "BatchEval scores against human scores" in markdown.stdout
    plain = runner.invoke(main, [*args, "--format", "json"])
    assert json.loads(plain.stdout)["batcheval"]["human"] is None
    human.write_text(json.dumps({"question_id": "q0", "model": "m0", "criterion": "x"}) + "\n")
    bad = runner.invoke(main, [*args, "--human-scores", str(human)])
    assert bad.exit_code == 2 and "unknown criterion 'x'" in bad.output


def test_leaderboard_of_shards_holds_every_shards_batcheval_scores(tmp_path: Path) -> None:
    """`arena leaderboard S1 S2 S3` (and `report`) show one BatchEval block over the
    answers of every shard, each shard having scored its own questions' answers."""
    path = small_tournament(
        tmp_path, models=4, questions=9, extra={"batcheval": {**SECTION, "rounds": 1}}
    )
    shards = [tmp_path / f"s{k}" for k in (1, 2, 3)]
    runner = CliRunner()
    for k, shard in enumerate(shards, start=1):
        result = runner.invoke(main, ["run", str(path), "--shard", f"{k}/3", "--out", str(shard)])
        assert result.exit_code == 0, result.output
    per_shard = [read_scores(shard / SCORES_FILE) for shard in shards]
    assert all(scores is not None and scores.height for scores in per_shard)
    fast = ["--elo-orders", "5", "--bootstrap", "20", "--format", "json"]
    result = runner.invoke(main, ["leaderboard", *map(str, shards), *fast])
    assert result.exit_code == 0, result.output
    board = json.loads(result.output)
    block = board["batcheval"]
    assert not any("BatchEval" in w for w in board.get("warnings", []))
    # Every answer of every shard, once: 4 models x 9 questions per criterion.
    for criterion in ("helpfulness", "accuracy"):
        rows = [r for r in block["rows"] if r["criterion"] == criterion]
        assert sum(r["answers"] for r in rows) == 36
    # The means are those of all shards' scores together, as one run's would be.
    together = pl.concat([s for s in per_shard if s is not None])
    expected = batcheval_summary(shards, block["pairwise"], n_boot=10)
    assert expected is not None
    by_key = {(r["model"], r["criterion"]): r["mean"] for r in block["rows"]}
    assert by_key == {(r["model"], r["criterion"]): r["mean"] for r in expected["rows"]}
    hand = (
        together.filter(pl.col("criterion") == "accuracy")
        .group_by("model", "sample_id")
        .agg(pl.col("score").mean())
        .group_by("model")
        .agg(pl.col("score").mean())
    )
    for model, mean in hand.iter_rows():
        assert by_key[(model, "accuracy")] == pytest.approx(mean)
    # One shard alone holds a third of the answers.
    alone = runner.invoke(main, ["leaderboard", str(shards[0]), *fast])
    assert alone.exit_code == 0, alone.output
    rows = json.loads(alone.stdout)["batcheval"]["rows"]
    assert sum(r["answers"] for r in rows if r["criterion"] == "accuracy") < 36


@pytest.mark.parametrize("composition", ["previous-round", "running-mean"])
def test_status_finds_every_round_done_whatever_the_composition(
    tmp_path: Path, composition: str
) -> None:
    # regression: `arena status` replayed the rounds ordered by the running mean
    # whatever the composition, so with the default (previous-round) the batches
    # of round 3 on were counted stale although the stage had logged them all
    section = {
        "scorers": ["m0"],
        "criteria": [{"name": "h", "description": "H?", "scale": {"low": 1, "high": 5}}],
        "batch_size": 3,
        "rounds": 4,
        "composition": composition,
    }
    path = small_tournament(tmp_path, models=3, questions=4, extra={"batcheval": section})
    summary = asyncio.run(run_tournament(load_tournament(path)))
    assert summary.by_stage["batcheval"]["planned"] == 16
    result = CliRunner().invoke(main, ["status", str(tmp_path / "out"), "--json"])
    assert result.exit_code == 0, result.output
    block = json.loads(result.stdout)["batcheval"]
    assert (block["done"] + block["invalid"], block["stale"], block["pending"]) == (16, 0, 0)
