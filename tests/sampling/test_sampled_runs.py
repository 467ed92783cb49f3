"""Sampled tournaments through `arena run`: budgets, rounds, resume, new models, bad input."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from click.testing import CliRunner

import arena.sampling  # noqa: F401  (registers the `sampling` table read below)
from arena.cli import main
from arena.store import RunLog


def _write(
    root: Path,
    sampling: dict[str, Any] | None,
    *,
    n_models: int = 5,
    questions: int = 10,
    gap: float = 0.3,
    latency: float = 0.0,
    seed: int = 5,
) -> Path:
    models = {
        f"m{i}": {
            "provider": "sim",
            "sim": {
                "skill": round(gap * (n_models - i), 3),
                "answer_noise": 0.3,
                "judge_noise": 0.5,
                "latency_mean": latency,
            },
        }
        for i in range(n_models)
    }
    with (root / "q.jsonl").open("w") as f:
        for k in range(questions):
            f.write(json.dumps({"id": f"q{k}", "turns": [f"Question {k}?"]}) + "\n")
    cfg: dict[str, Any] = {
        "name": "sampled",
        "seed": seed,
        "questions": "q.jsonl",
        "output": str(root / "out"),
        "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 8}}},
        "models": models,
        "contestants": list(models),
    }
    if sampling is not None:
        cfg["sampling"] = sampling
    path = root / "t.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def _run(path: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    """`arena run --json` in this process: exit code, summary line, stderr."""
    result = CliRunner().invoke(main, ["run", str(path), "--json", *extra])
    lines = result.stdout.strip().splitlines()
    return result.exit_code, (json.loads(lines[-1]) if lines else {}), result.stderr


def _leaderboard(out: Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["leaderboard", str(out), "--format", "json"])
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_adaptive_run_spends_its_budget_in_logged_rounds(tmp_path: Path) -> None:
    path = _write(tmp_path, {"strategy": "adaptive", "budget": 0.2, "rounds": 3})
    code, summary, err = _run(path)
    assert code == 0, err
    s = summary["sampling"]
    full = 5 * 4 * 5 * 10
    assert s["strategy"] == "adaptive" and s["full_review_calls"] == full
    assert s["budget_review_calls"] == 0.2 * full
    assert s["judged_review_calls"] == s["selected_review_calls"] == 0.2 * full
    assert s["rounds"] == 4  # the seed round, then three
    assert len(s["neighbours"]) == 4 and all("separated" in n for n in s["neighbours"])
    log = RunLog(tmp_path / "out")
    units = log.read("sampling")
    reviews = log.read("reviews")
    assert units.height * 2 == reviews.height == 0.2 * full
    assert sorted(units["round"].unique().to_list()) == [0, 1, 2, 3]
    # Every review is one of the selected units', and started after its round was logged.
    ids = set(units["review_ab_id"].to_list()) | set(units["review_ba_id"].to_list())
    assert set(reviews["id"].to_list()) == ids
    joined = reviews.join(
        pl.concat(
            [
                units.select(pl.col("review_ab_id").alias("id"), "selected_at", "round"),
                units.select(pl.col("review_ba_id").alias("id"), "selected_at", "round"),
            ]
        ),
        on="id",
    )
    assert (joined["started_at"] >= joined["selected_at"]).all()
    # Rounds after the seed round favour close pairs: the units are not spread evenly.
    later = units.filter(pl.col("round") > 0).group_by("model_a", "model_b").len()
    assert later["len"].max() > later["len"].min()
    # Answers are all made.
    assert log.read("answers").height == 50
    board = _leaderboard(tmp_path / "out")
    assert board["sampling"]["strategy"] == "adaptive"
    assert board["sampling"]["ranked_review_calls"] == 0.2 * full
    assert board["sampling"]["balanced_win_rates"] is True
    assert all(0.0 <= m["weighted_win_rate"] <= 1.0 for m in board["models"])
    # A second run has nothing to do and selects nothing new.
    code, again, _ = _run(path)
    assert code == 0 and again["completed"] == 0 and again["skipped"] == again["planned"]
    assert RunLog(tmp_path / "out").read("sampling").height == units.height


def test_uniform_run_is_balanced_over_pairs_and_reviewers(tmp_path: Path) -> None:
    path = _write(tmp_path, {"strategy": "uniform", "budget": 100})
    code, summary, err = _run(path)
    assert code == 0, err
    assert summary["sampling"]["judged_review_calls"] == 100
    units = RunLog(tmp_path / "out").read("sampling")
    assert units.height == 50 and units["round"].unique().to_list() == [0]
    per_pair = units.group_by("model_a", "model_b").len()["len"]
    assert per_pair.len() == 10 and set(per_pair.to_list()) == {5}
    per_reviewer = units.group_by("reviewer").len()["len"]
    assert per_reviewer.max() - per_reviewer.min() <= 2


def test_stop_when_separated_ends_early_on_an_easy_design(tmp_path: Path) -> None:
    sampling = {"strategy": "adaptive", "budget": 0.8, "rounds": 8, "seed_share": 0.1}
    sampling["stop_when_separated"] = True
    path = _write(tmp_path, sampling, n_models=4, questions=30, gap=3.0)
    code, summary, err = _run(path)
    assert code == 0, err
    s = summary["sampling"]
    assert s["stopped_when_separated"] is True
    assert s["judged_review_calls"] < s["budget_review_calls"]
    assert all(n["separated"] for n in s["neighbours"])
    assert summary["pending"] == 0  # the unspent budget is not left pending


def test_a_new_model_gets_a_seed_round_of_its_own(tmp_path: Path) -> None:
    path = _write(tmp_path, {"strategy": "adaptive", "budget": 0.2, "rounds": 2}, n_models=4)
    code, first, err = _run(path)
    assert code == 0, err
    before = RunLog(tmp_path / "out").read("sampling")
    cfg = yaml.safe_load(path.read_text())
    cfg["models"]["m9"] = {"provider": "sim", "sim": {"skill": 0.45, "judge_noise": 0.5}}
    cfg["contestants"].append("m9")
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    code, second, err = _run(path)
    assert code == 0, err
    after = RunLog(tmp_path / "out").read("sampling")
    # Units of pairs the new model is not in, judged by old reviewers, stay valid.
    assert set(before["id"].to_list()) <= set(after["id"].to_list())
    new = after.filter(~pl.col("id").is_in(before["id"].to_list()))
    new_pairs = new.filter((pl.col("model_a") == "m9") | (pl.col("model_b") == "m9"))
    # Its first round of its own: the new model meets every other model.
    first_round = new["round"].min()
    seeded = new_pairs.filter(pl.col("round") == first_round)
    met = set(seeded["model_a"].to_list()) | set(seeded["model_b"].to_list())
    assert met == {"m0", "m1", "m2", "m3", "m9"}
    s = second["sampling"]
    assert s["full_review_calls"] == 5 * 4 * 5 * 10
    assert s["selected_review_calls"] <= s["budget_review_calls"]
    assert second["by_stage"]["reviews"]["skipped"] > 0  # nothing paid twice


@pytest.mark.slow
def test_kill_9_mid_round_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    sampling = {"strategy": "adaptive", "budget": 0.3, "rounds": 3}
    ref_dir, kill_dir = tmp_path / "ref", tmp_path / "kill"
    ref_dir.mkdir()
    kill_dir.mkdir()
    ref = _write(ref_dir, sampling, latency=0.01)
    killed = _write(kill_dir, sampling, latency=0.01)
    code, ref_summary, err = _run(ref)
    assert code == 0, err
    for rounds_seen in (1, 2):  # kill inside round 1, then inside round 2
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena", "run", str(killed)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            units = RunLog(kill_dir / "out").read("sampling", columns=["round"])
            if units.height and units["round"].max() >= rounds_seen:
                time.sleep(0.05)
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    code, resumed, err = _run(killed)
    assert code == 0, err
    assert resumed["by_stage"]["reviews"].get("skipped", 0) > 0
    cols = ["id", "round", "review_ab_id", "review_ba_id"]
    a = RunLog(ref_dir / "out").read("sampling").select(cols).sort("id")
    b = RunLog(kill_dir / "out").read("sampling").select(cols).sort("id")
    assert a.equals(b)
    ref_board, kill_board = _leaderboard(ref_dir / "out"), _leaderboard(kill_dir / "out")
    for x, y in zip(ref_board["models"], kill_board["models"], strict=True):
        assert x["model"] == y["model"]
        assert x["bt"] == pytest.approx(y["bt"], abs=1e-9)
    assert (
        resumed["sampling"]["judged_review_calls"] == ref_summary["sampling"]["judged_review_calls"]
    )


@pytest.mark.parametrize(
    ("sampling", "message"),
    [
        ({"strategy": "adaptive"}, "sampling.budget"),
        ({"strategy": "uniform", "budget": 1.5}, "must be in (0, 1]"),
        ({"strategy": "full", "budget": 0.2}, "only a sampled strategy"),
        ({"strategy": "uniform", "budget": 1}, "at least 2"),
        ({"strategy": "clever", "budget": 0.2}, "sampling.strategy"),
    ],
)
def test_bad_sampling_sections_exit_2_before_any_call(
    tmp_path: Path, sampling: dict[str, Any], message: str
) -> None:
    path = _write(tmp_path, sampling)
    code, _, err = _run(path)
    assert code == 2
    assert message in err and "t.yaml" in err
    assert not (tmp_path / "out" / "log").exists()


def _priced(path: Path, sampling: dict[str, Any]) -> Path:
    """The tournament with m1 ten times dearer than the other reviewers."""
    cfg = yaml.safe_load(path.read_text())
    cfg["prices"] = {m: {"input": 1.0, "output": 4.0} for m in cfg["models"]}
    cfg["prices"]["m1"] = {"input": 10.0, "output": 40.0}
    cfg["sampling"] = sampling
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def test_per_dollar_reviewers_spend_less_on_a_dear_judge(tmp_path: Path) -> None:
    sampling = {"strategy": "adaptive", "budget": 0.3, "rounds": 3}
    spent: dict[str, float] = {}
    dear_share: dict[str, float] = {}
    for choice in ("reliability", "per_dollar"):
        root = tmp_path / choice
        root.mkdir()
        path = _priced(_write(root, None, questions=12), {**sampling, "reviewers": choice})
        code, summary, err = _run(path)
        assert code == 0, err
        assert (
            summary["sampling"]["judged_review_calls"] == summary["sampling"]["budget_review_calls"]
        )
        units = RunLog(root / "out").read("sampling")
        later = units.filter(pl.col("round") > 0)  # the refitted rounds choose by cost
        outside = later.filter((pl.col("model_a") != "m1") & (pl.col("model_b") != "m1"))
        dear_share[choice] = float((outside["reviewer"] == "m1").mean() or 0.0)
        reviews = RunLog(root / "out").read("reviews")
        spent[choice] = float(reviews["cost_usd"].sum())
        board = _leaderboard(root / "out")
        assert [m["model"] for m in board["models"]][:1] == ["m0"]
    # m1 judges battles of others far less often, and the run costs less.
    assert dear_share["per_dollar"] < 0.4 * dear_share["reliability"]
    assert spent["per_dollar"] < 0.9 * spent["reliability"]


def test_per_dollar_reviewers_need_the_adaptive_strategy(tmp_path: Path) -> None:
    path = _write(tmp_path, {"strategy": "uniform", "budget": 0.3, "reviewers": "per_dollar"})
    code, _, err = _run(path)
    assert code == 2
    assert "sampling" in err and "per_dollar" in err
