"""`battles: all` with `leader: both` (the paper's accuracy protocol), accuracy against
human labels, and position / self-preference before vs after discussion."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

import arena.discuss  # noqa: F401  (registers the stage)
from arena.cli import main
from arena.config import DiscussionConfig
from arena.discuss import TABLE, battle_triggers, discussion_accuracy, discussion_stats
from arena.report import LeaderboardOptions, build_leaderboard, leaderboard_dict
from arena.store import RunLog
from tests.conftest import small_tournament

SECTION = {
    "battles": "all",
    "leader": "both",
    "discussants": ["m0", "m1"],
    "allow_contestants": True,
    "max_turns": 1,
}


def _labels(path: Path) -> dict[tuple[str, str, str], str]:
    # the better model (lower index: higher sim skill) wins, except on q0: a tie
    labels: dict[tuple[str, str, str], str] = {}
    rows = []
    for q in ("q0", "q1", "q2"):  # q3 unlabelled
        for a, b in (("m0", "m1"), ("m0", "m2"), ("m1", "m2")):
            verdict = "tie" if q == "q0" else "A"
            rows.append(
                {
                    "question_id": q,
                    "model_a": a,
                    "model_b": b,
                    "reviewer": "human",
                    "verdict": verdict,
                }
            )
            labels[(q, a, b)] = verdict
            labels[(q, b, a)] = {"A": "B", "B": "A", "tie": "tie"}[verdict]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return labels


def test_all_battles_both_leaders_and_accuracy_against_human_labels(tmp_path: Path) -> None:
    path = small_tournament(
        tmp_path,
        models=3,
        questions=4,
        sim={"judge_noise": 0.8, "position_bias": 0.4},
        extra={"discussion": SECTION},
    )
    runner = CliRunner()
    ran = runner.invoke(main, ["run", str(path)])
    assert ran.exit_code == 0, ran.output
    out = tmp_path / "out"
    finals = RunLog(out).read(TABLE).filter(pl.col("kind") == "final")
    # every ordered battle (4 questions x 6 ordered pairs), twice: once per leader
    battles = finals.group_by("question_id", "model_a", "model_b").agg(
        pl.len().alias("n"), pl.col("leader").sort().alias("leaders")
    )
    assert battles.height == 4 * 6
    assert (battles["n"] == 2).all()
    assert all(list(ls) == ["m0", "m1"] for ls in battles["leaders"].to_list())

    human = tmp_path / "human.jsonl"
    labels = _labels(human)
    result = runner.invoke(main, ["discuss", str(out), "--human", str(human), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert set(report["calls"]) == {"skipped"}  # nothing new to discuss
    acc = report["human_accuracy"]
    assert acc["labelled"] == 3 * 6 * 2 and acc["unlabelled"] == 6 * 2
    hits = [
        float(
            r["outcome"] == "agreed"
            and r["verdict"] == labels[(r["question_id"], r["model_a"], r["model_b"])]
        )
        for r in finals.iter_rows(named=True)
        if r["question_id"] != "q3"
    ]
    assert acc["verdict"]["value"] == pytest.approx(sum(hits) / len(hits))
    for name in ("before", "after", "change", "verdict"):
        block = acc[name]
        assert block["low"] <= block["value"] <= block["high"]
    assert acc["change"]["value"] == pytest.approx(acc["after"]["value"] - acc["before"]["value"])
    # biases before vs after are in the stats
    assert report["biases"]["position"]["n_before"] > 0
    assert report["biases"]["self_preference"]["n_before"] > 0  # m0, m1 judge their own battles

    plain = runner.invoke(main, ["discuss", str(out), "--human", str(human)])
    assert plain.exit_code == 0
    assert "accuracy vs human labels (36 labelled discussions" in plain.output
    assert "position (share of A)" in plain.output

    block = leaderboard_dict(build_leaderboard(out, options=LeaderboardOptions(bootstrap=0)))[
        "discussion"
    ]
    assert block["biases"]["position"]["n_after"] > 0
    board = runner.invoke(main, ["leaderboard", str(out)])
    assert board.exit_code == 0, board.output
    assert "position (share of A)" in board.output
    assert "human_accuracy" not in block  # no --human: no accuracy

    # with --human, the leaderboard's discussion block has the same accuracy figures
    options = LeaderboardOptions(bootstrap=0, seed=3)  # the tournament's seed, as `discuss`
    labelled = leaderboard_dict(build_leaderboard(out, human_file=human, options=options))
    board_acc = labelled["discussion"]["human_accuracy"]
    assert board_acc == acc
    cli = runner.invoke(main, ["leaderboard", str(out), "--human", str(human), "--format", "json"])
    assert cli.exit_code == 0, cli.output
    assert json.loads(cli.stdout)["discussion"]["human_accuracy"]["labelled"] == 36
    shown = runner.invoke(main, ["leaderboard", str(out), "--human", str(human)])
    assert shown.exit_code == 0, shown.output
    assert "accuracy vs human labels (36 labelled discussions" in " ".join(shown.output.split())


def test_human_file_errors_name_the_file_before_any_call(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, extra={"discussion": SECTION})
    runner = CliRunner()
    assert runner.invoke(main, ["run", str(path)]).exit_code == 0
    bad = tmp_path / "labels.jsonl"
    bad.write_text('{"question_id": "q0", "model_a": "m0"}\n')
    before = RunLog(tmp_path / "out").read(TABLE).height
    result = runner.invoke(main, ["discuss", str(tmp_path / "out"), "--human", str(bad)])
    assert result.exit_code == 2
    assert "labels.jsonl" in result.output
    assert RunLog(tmp_path / "out").read(TABLE).height == before


def test_battles_all_selects_battles_no_trigger_fires_on() -> None:
    cfg = DiscussionConfig.model_validate({"battles": "all", "trigger": "tie"})
    assert battle_triggers({"r1": "A", "r2": "A"}, None, cfg) == ("all",)
    assert battle_triggers({"r1": "A", "r2": "B"}, None, cfg) == ("tie",)
    disputed = DiscussionConfig.model_validate({"trigger": "tie"})
    assert battle_triggers({"r1": "A", "r2": "A"}, None, disputed) == ()


def test_position_and_self_preference_before_and_after() -> None:
    base = {
        "context": "c",
        "turn": 0,
        "attempt": 1,
        "question_id": "q",
        "model_a": "x",
        "model_b": "y",
    }
    rows = [
        {**base, "discussion_id": "d", "kind": "initial", "speaker": "x", "preference": "A"},
        {**base, "discussion_id": "d", "kind": "initial", "speaker": "z", "preference": "A"},
        {
            **base,
            "discussion_id": "d",
            "kind": "turn",
            "turn": 1,
            "speaker": "x",
            "preference": "B",
        },
        {
            **base,
            "discussion_id": "d",
            "kind": "turn",
            "turn": 2,
            "speaker": "z",
            "preference": "B",
        },
        {
            **base,
            "discussion_id": "d",
            "kind": "final",
            "turn": 2,
            "speaker": None,
            "preference": None,
            "leader": "x",
            "follower": "z",
            "outcome": "agreed",
            "verdict": "B",
            "trigger": "all",
        },
    ]
    frame = pl.DataFrame(rows)
    stats = discussion_stats(frame)
    assert stats.biases["position"] == {"before": 1.0, "after": 0.0, "n_before": 2, "n_after": 2}
    assert stats.biases["self_preference"] == {
        "before": 1.0,
        "after": 0.0,
        "n_before": 1,
        "n_after": 1,
    }
    human = pl.DataFrame(
        {
            "question_id": ["q", "q"],
            "model_a": ["y", "x"],
            "model_b": ["x", "y"],
            "verdict": ["A", "B"],
        }
    )
    acc = discussion_accuracy(frame, human, bootstrap=50)
    assert acc["labelled"] == 1
    assert acc["before"]["value"] == 0.0 and acc["after"]["value"] == 1.0
    assert acc["verdict"]["value"] == 1.0 and acc["change"]["value"] == 1.0
