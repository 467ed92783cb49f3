"""`arena leaderboard` on crafted files: convergence report, intervals, ranks, judging options."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
import polars as pl
import pytest
from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard
from tests.rank._frames import Row, frame, random_reviews
from tests.rank.test_robust import NO_SELF_12

FAST = ["--elo-orders", "4", "--bootstrap", "30"]


def _invoke(*args: str) -> click.testing.Result:
    return CliRunner().invoke(leaderboard, list(args), catch_exceptions=False)


def _json(*args: str) -> dict[str, Any]:
    result = _invoke(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.output)
    return data


def _write(tmp_path: Path, rows: list[Row] | pl.DataFrame, name: str = "reviews.csv") -> str:
    reviews = rows if isinstance(rows, pl.DataFrame) else frame(rows)
    path = tmp_path / name
    reviews.drop("status").write_csv(path)
    return str(path)


def test_peerrank_block_reports_a_damped_cycle(tmp_path: Path) -> None:
    rows: list[Row] = [
        ("q1", "X", "Y", "X", "B"),
        ("q1", "Y", "X", "X", "A"),
        ("q1", "X", "Y", "Y", "A"),
    ]
    data = _json(_write(tmp_path, rows), *FAST, "--weights", "peerrank")
    block = data["peerrank"]
    assert set(block) == {"converged", "iterations", "damping"}
    assert block["converged"] is True and block["iterations"] > 100
    assert block["damping"] > 0.99
    assert data["reviewer_weights"] == pytest.approx({"X": 1 / 3, "Y": 2 / 3})
    assert any("restarted with damping" in w for w in data["warnings"])


def test_no_self_design_converges_with_rates_in_unit_interval(tmp_path: Path) -> None:
    data = _json(_write(tmp_path, NO_SELF_12), *FAST, "--weights", "peerrank")
    assert data["peerrank"] == {"converged": True, "iterations": 3, "damping": 0.0}
    for model in data["models"]:
        for key in ("win_rate", "weighted_win_rate"):
            assert 0.0 <= model[key] <= 1.0
            low, high = model[f"{key}_ci_low"], model[f"{key}_ci_high"]
            assert 0.0 <= low <= high <= 1.0
    assert not any("PeerRank" in w for w in data.get("warnings", []))


def test_one_question_gives_no_false_certainty(tmp_path: Path) -> None:
    rows: list[Row] = [
        ("q1", a, b, r, v)
        for (a, b), v in ((("X", "Y"), "A"), (("Y", "X"), "tie"), (("X", "Z"), "B"))
        for r in ("J1", "J2")
    ]
    data = _json(_write(tmp_path, rows), *FAST)
    for model in data["models"]:
        assert model["bt_ci_low"] is None and model["bt_ci_high"] is None
        assert model["rank_low"] is None and model["few_data"] is True
    assert any("one question" in w for w in data["warnings"])
    table = _invoke(_write(tmp_path, rows), *FAST)
    assert "no intervals" in table.output


def test_a_clean_sweep_has_a_finite_rating_and_an_open_interval(tmp_path: Path) -> None:
    rows: list[Row] = [
        (f"q{q}", a, b, r, v)
        for q in range(8)
        for (a, b, v) in (
            ("X", "Y", "A"),
            ("Y", "X", "B"),
            ("X", "Z", "A"),
            ("Y", "Z", "A" if q % 2 else "B"),
            ("Z", "Y", "tie"),
        )
        for r in ("J1", "J2")
    ]
    data = _json(_write(tmp_path, rows), *FAST)
    top = data["models"][0]
    assert top["model"] == "X" and top["rank"] == 1
    assert top["bt"] is not None and top["bt_ci_low"] is not None
    assert top["bt_ci_high"] is None  # no upper bound: X never lost
    assert any("X lost no battle" in w for w in data["warnings"])
    markdown = _invoke(_write(tmp_path, rows), "--format", "markdown", *FAST).output
    assert "| >=" in markdown  # the open interval of X


def test_disconnected_groups_and_sample_sizes(tmp_path: Path) -> None:
    rows: list[Row] = [
        (f"q{q}", a, b, "J", v)
        for q in range(3)
        for (a, b, v) in (("A", "B", "A"), ("B", "A", "tie"), ("C", "D", "B"), ("D", "C", "A"))
    ]
    data = _json(_write(tmp_path, rows), *FAST)
    by_model = {m["model"]: m for m in data["models"]}
    assert {m: by_model[m]["rank"] for m in "ABCD"} == {"A": 1, "B": 2, "C": 2, "D": 1}
    assert by_model["A"]["group"] != by_model["C"]["group"]
    assert by_model["A"]["battles"] == 6 and by_model["A"]["questions"] == 3
    assert data["diagnostics"]["pair_battles"]["A"] == {"B": 6, "C": 0, "D": 0}
    assert data["counts"]["questions"] == 3
    assert all(m["few_data"] for m in data["models"])
    table = _invoke(_write(tmp_path, rows), *FAST).output
    assert "Battles per pair" in table and "1:1" in table


def test_footers_do_not_count_parts_that_are_off(tmp_path: Path) -> None:
    path = _write(tmp_path, random_reviews(models=3, questions=4))
    table = _invoke(path, "--elo-orders", "0", "--bootstrap", "0").output
    assert "0 rounds" not in table and "0 random orders" not in table
    # BT intervals need no bootstrap: they are the sandwich's (no Monte Carlo).
    assert "Elo: not computed" in table and "cluster-robust sandwich by question" in table
    table = _invoke(path, "--elo-orders", "0", "--bootstrap", "0", "--intervals", "bootstrap")
    assert "no intervals" in table.output


def test_no_self_and_equal_weights(tmp_path: Path) -> None:
    path = _write(tmp_path, random_reviews(models=4, questions=5, judges=1))
    data = _json(path, *FAST, "--no-self", "--weights", "equal")
    assert data["counts"]["self_excluded"] == 5 * 12 * 2  # 12 ordered pairs, 2 own judges each
    assert data["counts"]["reviews"] == 5 * 12 * 5 - data["counts"]["self_excluded"]
    assert data["weighting"] == "equal"
    assert list(data["reviewer_weights"].values()) == pytest.approx([0.2] * 5)
    for model in data["models"]:
        assert model["weighted_win_rate"] == pytest.approx(model["win_rate"])
    # Self-preference needs a reviewer's own battles: none are left.
    assert all(r["self_preference"] is None for r in data["diagnostics"]["reviewers"])
    table = _invoke(path, *FAST, "--no-self", "--weights", "equal").output
    assert "reviews of the reviewer's own battles left out" in table
    assert "all equal (--weights equal)" in table


def test_imported_answers_give_style_control(tmp_path: Path) -> None:
    reviews = random_reviews(models=3, questions=6, seed=2)
    texts = {"m0": "short", "m1": "a longer answer\n- with\n- a list", "m2": "# Head\n**bold** x"}
    with_text = reviews.with_columns(
        answer_a=pl.col("model_a").replace_strict(texts),
        answer_b=pl.col("model_b").replace_strict(texts),
    )
    data = _json(_write(tmp_path, with_text), *FAST)
    style = data["style_control"]
    assert style["available"] is True
    assert set(style["features"]) | set(style["dropped"]) == {"length", "headers", "lists", "bold"}
    assert all(m["bt_style"] is not None and m["style_rank"] for m in data["models"])
    assert all(r["length_bias"] is not None for r in data["diagnostics"]["reviewers"])
    table = _invoke(_write(tmp_path, with_text), *FAST).output
    assert "Style control" in table and "Style coefficients" in table
    plain = _json(_write(tmp_path, reviews), *FAST)
    assert plain["style_control"] == {
        "available": False,
        "reason": "the reviews carry no answer text or lengths",
    }


def test_bad_precomputed_length_names_the_line(tmp_path: Path) -> None:
    reviews = frame([("q1", "X", "Y", "J", "A"), ("q1", "Y", "X", "J", "B")]).with_columns(
        length_a=pl.Series(["10", "-3"]), length_b=pl.Series(["4", "5"])
    )
    result = _invoke(_write(tmp_path, reviews), *FAST)
    assert result.exit_code == 2
    assert "line 3" in result.output and "length_a" in result.output
