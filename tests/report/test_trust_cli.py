"""`arena leaderboard --weights reliability`, sandwich intervals and the honest Elo figures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard
from tests.rank._frames import random_reviews


def _json(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(leaderboard, [*args, "--format", "json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


def _file(tmp_path: Path) -> str:
    path = tmp_path / "reviews.csv"
    random_reviews(models=4, questions=8, seed=6, judges=1).drop("status").write_csv(path)
    return str(path)


def test_reliability_weights_and_their_block(tmp_path: Path) -> None:
    data = _json(_file(tmp_path), "--weights", "reliability", "--elo-orders", "4")
    assert data["weighting"] == "reliability"
    block = data["reliability"]
    assert block["converged"] is True
    rows = {r["reviewer"]: r for r in block["reviewers"]}
    assert set(rows) == set(data["reviewer_weights"])
    for name, weight in data["reviewer_weights"].items():
        assert rows[name]["weight"] == pytest.approx(weight)
        assert set(rows[name]) == {
            "reviewer",
            "weight",
            "discrimination",
            "position_bias",
            "self_preference",
            "accuracy",
            "battles",
        }
    assert rows["judge0"]["self_preference"] is None  # not a contestant
    assert rows["m0"]["battles"] == 8 * 6  # its 12 ordered pairs less its own 6, per question
    assert sum(data["reviewer_weights"].values()) == pytest.approx(1.0)
    table = CliRunner().invoke(leaderboard, [_file(tmp_path), "--weights", "reliability"])
    assert "Reliability weights (--weights reliability)" in table.output
    assert data == _json(_file(tmp_path), "--elo-orders", "4")  # the default weighting
    plain = _json(_file(tmp_path), "--elo-orders", "4", "--weights", "peerrank")
    assert "reliability" not in plain


def test_intervals_and_elo_do_not_move_with_the_seed(tmp_path: Path) -> None:
    path = _file(tmp_path)
    runs = [_json(path, "--seed", str(s), "--elo-orders", "8", "--bootstrap", "20") for s in (0, 3)]
    assert runs[0]["bt_intervals"] == "sandwich"
    for key in ("bt", "bt_ci_low", "bt_ci_high", "elo", "elo_order_error", "rank_low"):
        assert [m[key] for m in runs[0]["models"]] == [m[key] for m in runs[1]["models"]]
    assert all(m["elo_order_error"] > 0 for m in runs[0]["models"])
    assert all(m["elo_ci_low"] is None for m in runs[0]["models"])
    boot = [
        _json(path, "--seed", str(s), "--intervals", "bootstrap", "--bootstrap", "20")
        for s in (0, 3)
    ]
    assert boot[0]["bt_intervals"] == "bootstrap"
    assert [m["bt_ci_low"] for m in boot[0]["models"]] != [
        m["bt_ci_low"] for m in boot[1]["models"]
    ]


def test_elo_interval_on_request(tmp_path: Path) -> None:
    path = _file(tmp_path)
    data = _json(path, "--elo-orders", "4", "--bootstrap", "100", "--elo-bootstrap", "100")
    for m in data["models"]:
        assert m["elo_ci_low"] <= m["elo"] <= m["elo_ci_high"]
    few = _json(path, "--elo-orders", "4", "--bootstrap", "50", "--elo-bootstrap", "50")
    assert all(m["elo_ci_low"] is None for m in few["models"])
    table = CliRunner().invoke(leaderboard, [path, "--elo-orders", "4", "--bootstrap", "20"])
    assert "No Elo CI" in table.output and "elo_order_error" in table.output


def test_style_moves_split_into_weight_refit_and_style(tmp_path: Path) -> None:
    import numpy as np
    import polars as pl

    reviews = random_reviews(models=4, questions=10, seed=2).drop("status")
    rng = np.random.default_rng(0)
    lengths = {
        m: float(v) for m, v in zip(("m0", "m1", "m2", "m3"), (900, 100, 300, 600), strict=True)
    }
    noise = rng.uniform(0.8, 1.2, reviews.height)
    reviews = reviews.with_columns(
        length_a=pl.col("model_a").replace_strict(lengths) * noise,
        length_b=pl.col("model_b").replace_strict(lengths) / noise,
    )
    path = tmp_path / "styled.csv"
    reviews.write_csv(path)
    for weighting in ("peerrank", "reliability"):
        data = _json(str(path), "--weights", weighting, "--elo-orders", "0")
        moved = data["style_control"]["moved"]
        for m in data["models"]:
            split = moved[m["model"]]
            assert split["weights"] + split["style"] == m["rank"] - m["style_rank"]
            if weighting == "reliability":  # fixed weights: no refit to move anyone
                assert split["weights"] == 0
    table = CliRunner().invoke(leaderboard, [str(path), "--weights", "peerrank"]).output
    assert "weights: the move from refitting the reviewer weights" in table
