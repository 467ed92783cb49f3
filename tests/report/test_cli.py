"""`arena leaderboard` through click's runner: formats, keys, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard
from tests.rank._frames import frame
from tests.report._support import (
    JSON_KEYS,
    MODEL_KEYS,
    REVIEWER_KEYS,
    sample_reviews,
    write_run,
)

FAST = ["--elo-orders", "4", "--bootstrap", "15"]


def _invoke(*args: str) -> click.testing.Result:
    return CliRunner().invoke(leaderboard, list(args), catch_exceptions=False)


@pytest.fixture(scope="module")
def reviews_csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("files") / "reviews.csv"
    sample_reviews(seed=4).drop("status").write_csv(path)
    return path


def test_json_has_exactly_the_documented_keys(reviews_csv: Path) -> None:
    result = _invoke(str(reviews_csv), "--format", "json", *FAST)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == JSON_KEYS
    assert all(set(m) == MODEL_KEYS for m in data["models"])
    assert set(data["diagnostics"]) == {"reviewers", "pairwise", "pair_battles", "fleiss_kappa"}
    assert all(set(r) == REVIEWER_KEYS for r in data["diagnostics"]["reviewers"])
    assert set(data["counts"]) == {"reviews", "invalid", "failed", "questions", "self_excluded"}
    bts = [m["bt"] for m in data["models"]]
    assert bts == sorted(bts, reverse=True)  # ordered by Bradley-Terry
    assert sum(data["reviewer_weights"].values()) == pytest.approx(1.0)
    pairwise = data["diagnostics"]["pairwise"]
    assert pairwise["m0"]["m1"] + pairwise["m1"]["m0"] == pytest.approx(1.0)


def test_reviews_option_and_seed_are_reproducible(reviews_csv: Path) -> None:
    first = _invoke("--reviews", str(reviews_csv), "--format", "json", "--seed", "3", *FAST)
    again = _invoke("--reviews", str(reviews_csv), "--format", "json", "--seed", "3", *FAST)
    assert first.exit_code == 0 and first.output == again.output


def test_table_and_markdown(reviews_csv: Path) -> None:
    table = _invoke(str(reviews_csv), *FAST)
    assert table.exit_code == 0
    assert "Models (ordered by Bradley-Terry)" in table.output
    assert "Reviewers" in table.output and "Pairwise win rate" in table.output
    markdown = _invoke(str(reviews_csv), "--format", "markdown", *FAST)
    assert markdown.exit_code == 0
    assert markdown.output.startswith("# Leaderboard of")
    assert "| # | ranks | model | BT |" in markdown.output


def test_anchor(reviews_csv: Path) -> None:
    result = _invoke(str(reviews_csv), "--format", "json", "--anchor", "m2", *FAST)
    data = json.loads(result.output)
    assert {m["model"]: m["bt"] for m in data["models"]}["m2"] == pytest.approx(1000.0)
    bad = _invoke(str(reviews_csv), "--anchor", "nobody", *FAST)
    assert bad.exit_code == 2
    assert "'nobody' is not a contestant" in bad.output


def test_human_labels_add_agreement(tmp_path: Path, reviews_csv: Path) -> None:
    human = tmp_path / "human.jsonl"
    labels = frame(
        [
            ("q0", "m3", "m0", "ann", "A"),
            ("q1", "m0", "m3", "bob", "B"),
            ("q2", "m2", "m1", "ann", "tie"),
        ]
    )
    human.write_text(labels.drop("status").write_ndjson())
    result = _invoke(str(reviews_csv), "--human", str(human), "--format", "json", *FAST)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == JSON_KEYS | {"agreement"}
    agreement = data["agreement"]
    assert set(agreement) == {
        "battles",
        "reviewers",
        "weighted_majority",
        "conventions",
        "human_win_rate",
        "rankings",
    }
    assert agreement["conventions"] == {
        "human_merge": "plurality",
        "majority": "plurality",
        "kappa_categories": "model",
    }
    assert agreement["battles"] == 3
    assert set(agreement["rankings"]) == {"win_rate", "weighted_win_rate", "elo", "bt"}
    table = _invoke(str(reviews_csv), "--human", str(human), *FAST)
    assert "Agreement with human labels" in table.output


def test_prd_agreement_conventions(tmp_path: Path) -> None:
    from tests.rank.test_agreement import PRD_HUMANS, PRD_REVIEWS

    reviews, human = tmp_path / "reviews.jsonl", tmp_path / "human.jsonl"
    reviews.write_text(frame(PRD_REVIEWS).drop("status").write_ndjson())
    human.write_text(frame(PRD_HUMANS).drop("status").write_ndjson())
    base = ["--reviews", str(reviews), "--human", str(human), "--format", "json"]
    base += ["--weights", "equal", *FAST]

    def agreement(*options: str) -> dict:  # type: ignore[type-arg]
        result = _invoke(*base, *options)
        assert result.exit_code == 0, result.output
        return json.loads(result.output)["agreement"]  # type: ignore[no-any-return]

    def r1(a: dict) -> float:  # type: ignore[type-arg]
        return next(r["accuracy"] for r in a["reviewers"] if r["reviewer"] == "R1")

    # Arena's: q1's labels (X, tie, tie) merge to "tie"; equal-weight pluralities
    # per (question, pair): q1 X (a miss), q2 tie (a hit).
    arena = agreement()
    assert r1(arena) == pytest.approx(0.25)
    assert (arena["weighted_majority"]["n"], arena["weighted_majority"]["accuracy"]) == (2, 0.5)
    # PRD's: q1's labels merge to X; per ordered battle, the sign of the mean score:
    # tie, X, tie, Y against X, X, tie, tie.
    prd = agreement("--conventions", "prd")
    assert prd["conventions"] == {
        "human_merge": "mean-sign",
        "majority": "ordered-mean",
        "kappa_categories": "position",
    }
    assert r1(prd) == pytest.approx(0.75)
    assert (prd["weighted_majority"]["n"], prd["weighted_majority"]["accuracy"]) == (4, 0.5)
    # One option overrides its part of the convention.
    mixed = agreement("--conventions", "prd", "--human-merge", "plurality")
    assert mixed["conventions"]["human_merge"] == "plurality"
    assert mixed["conventions"]["majority"] == "ordered-mean"
    assert r1(mixed) == pytest.approx(0.25)
    assert (
        prd["weighted_majority"]["kappa"]
        != agreement("--conventions", "prd", "--kappa-categories", "model")["weighted_majority"][
            "kappa"
        ]
    )
    bad = _invoke(*base, "--kappa-categories", "order")
    assert bad.exit_code == 2 and "--kappa-categories" in bad.output


def test_run_directory(tmp_path: Path) -> None:
    skills = {"m0": 0.0, "m1": 1.0, "m2": 2.0, "m3": 3.0}
    run = write_run(tmp_path / "run", sample_reviews(), contestants=list(skills), skills=skills)
    result = _invoke(str(run), "--format", "json", *FAST)
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == JSON_KEYS | {"true_order", "kendall_tau", "cost_usd"}
    table = _invoke(str(run), *FAST)
    assert "Simulation truth" in table.output and "Total cost" in table.output


def test_disconnected_comparison_graph_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "two_leagues.csv"
    rows = frame(
        [
            ("q1", "a", "b", "J", "A"),
            ("q1", "b", "a", "J", "A"),
            ("q2", "a", "b", "J", "B"),
            ("q1", "c", "d", "J", "A"),
            ("q1", "d", "c", "J", "tie"),
        ]
    )
    rows.drop("status").write_csv(path)
    data = json.loads(_invoke(str(path), "--format", "json", *FAST).output)
    assert data["bt_components"] == [["a", "b"], ["c", "d"]]
    assert any("disconnected" in w for w in data["warnings"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "give a run directory or a reviews file"),
        (("{tmp}/missing-dir",), "no such run directory or reviews file"),
        (("{tmp}/x.txt",), "unknown file type"),
        (("{tmp}/x.txt", "--reviews", "{tmp}/x.txt"), "give the reviews file once"),
        (("{tmp}", "--human", "{tmp}/nope.csv"), "nope.csv: no such file"),
    ],
)
def test_bad_input_exits_2(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    (tmp_path / "x.txt").write_text("hello")
    result = CliRunner().invoke(leaderboard, [a.format(tmp=tmp_path) for a in args])
    assert result.exit_code == 2
    assert result.output.startswith("arena: error: ")
    assert message in result.output


def test_bad_row_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("question_id,model_a,model_b,reviewer,score\n1,X,Y,J,-1\n2,X,Y,J,5\n")
    result = _invoke(str(path))
    assert result.exit_code == 2
    assert "r.csv: line 3: unknown score 5" in result.output


def test_help() -> None:
    result = _invoke("--help")
    assert result.exit_code == 0
    for option in (
        "--format",
        "--reviews",
        "--human",
        "--anchor",
        "--elo-orders",
        "--bootstrap",
        "--seed",
    ):
        assert option in result.output
