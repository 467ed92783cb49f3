"""`arena leaderboard DIR1 DIR2 ...`: shard directories ranked as one tournament."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from click.testing import CliRunner

from arena.cli import main
from tests.conftest import small_tournament

FAST = ["--elo-orders", "5", "--bootstrap", "20"]


def arena(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def board(*dirs: Path) -> dict[str, Any]:
    code, out = arena("leaderboard", *map(str, dirs), *FAST, "--format", "json")
    assert code == 0, out
    data: dict[str, Any] = json.loads(out)
    return data


@pytest.fixture(scope="module")
def two_tournaments(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp = tmp_path_factory.mktemp("two")
    path = small_tournament(tmp, models=3, questions=2)
    assert arena("run", str(path), "--out", str(tmp / "a"))[0] == 0
    config = yaml.safe_load(path.read_text())
    config["seed"] = 99  # another tournament: another config hash
    path.write_text(yaml.safe_dump(config))
    assert arena("run", str(path), "--out", str(tmp / "b"))[0] == 0
    return tmp / "a", tmp / "b"


def test_directories_of_other_tournaments_are_refused(two_tournaments: tuple[Path, Path]) -> None:
    a, b = two_tournaments
    code, out = arena("leaderboard", str(a), str(b), *FAST)
    assert code == 2
    assert f"{b}: tournament.json: another tournament than {a} (config_hash" in out


def test_the_same_directory_twice_is_refused(two_tournaments: tuple[Path, Path]) -> None:
    a, _ = two_tournaments
    code, out = arena("leaderboard", str(a), str(a / "."), *FAST)
    assert code == 2 and "given twice" in out


def test_several_sources_must_be_directories(two_tournaments: tuple[Path, Path]) -> None:
    a, _ = two_tournaments
    code, out = arena("leaderboard", str(a), str(a / "tournament.json"), *FAST)
    assert code == 2 and "several sources must all be run directories" in out
    code, out = arena("leaderboard", str(a), str(a), "--history")
    assert code == 2 and "--history and --diff read one run directory" in out


def test_one_directory_is_unchanged(two_tournaments: tuple[Path, Path]) -> None:
    a, _ = two_tournaments
    assert board(a)["models"]


@pytest.fixture(scope="module")
def split_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    """One tournament run whole, and the same run in 3 shards (each in its own directory)."""
    tmp = tmp_path_factory.mktemp("split")
    path = small_tournament(tmp, models=3, questions=6, sim={"judge_noise": 0.8})
    assert arena("run", str(path), "--out", str(tmp / "whole"))[0] == 0
    shards = []
    for k in (1, 2, 3):
        out = tmp / f"shard{k}"
        code, text = arena("run", str(path), "--shard", f"{k}/3", "--out", str(out), "--json")
        assert code == 0, text
        assert json.loads(text.splitlines()[-1])["planned"] == 2 * (3 + 3 * 2 * 3)
        shards.append(out)
    return tmp / "whole", shards


def test_three_shards_rank_as_the_whole_run(split_run: tuple[Path, list[Path]]) -> None:
    whole, shards = split_run
    merged, alone = board(*shards), board(whole)
    assert merged.keys() == alone.keys()
    for key in merged:
        assert merged[key] == alone[key], key
    assert merged["counts"]["reviews"] == 6 * 3 * 2 * 3


def test_a_shard_directory_remembers_its_shard(split_run: tuple[Path, list[Path]]) -> None:
    _, shards = split_run
    snapshot = json.loads((shards[1] / "tournament.json").read_text())
    assert snapshot["shard"] == {"index": 2, "count": 3} and snapshot["questions"] == 2
    # status reloads the config from the directory and stays within the shard.
    code, out = arena("status", str(shards[1]), "--json")
    assert code == 0, out
    assert json.loads(out)["total"]["planned"] == 2 * (3 + 3 * 2 * 3)
    # A shard given twice, or shards of different splits, are refused.
    code, out = arena("leaderboard", str(shards[1]), str(shards[1] / "."), *FAST)
    assert code == 2


def test_bad_shard_is_refused_before_any_call(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=3, questions=2)
    for bad in ("0/3", "4/3", "x"):
        code, out = arena("run", str(path), "--shard", bad)
        assert code == 2 and "--shard" in out
    assert not (tmp_path / "out").exists()


def test_export_of_the_shards_holds_the_whole_runs_calls(
    split_run: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    whole, shards = split_run
    assert arena("export", *map(str, shards), "--to", str(tmp_path / "merged"))[0] == 0
    assert arena("export", str(whole), "--to", str(tmp_path / "whole"))[0] == 0
    for table in ("answers", "reviews"):
        merged = pl.read_parquet(tmp_path / "merged" / f"{table}.parquet").sort("id")
        alone = pl.read_parquet(tmp_path / "whole" / f"{table}.parquet").sort("id")
        keep = [c for c in alone.columns if c not in ("run_id", "started_at", "finished_at")]
        keep = [c for c in keep if c != "latency_s"]
        assert merged.select(keep).equals(alone.select(keep))


def test_export_refuses_other_tournaments(
    two_tournaments: tuple[Path, Path], tmp_path: Path
) -> None:
    a, b = two_tournaments
    code, out = arena("export", str(a), str(b), "--to", str(tmp_path / "x"))
    assert code == 2 and "another tournament" in out
    assert not (tmp_path / "x").exists()


def test_the_duckdb_query_of_the_docs_runs_over_shard_exports(
    split_run: tuple[Path, list[Path]], tmp_path: Path
) -> None:
    duckdb = pytest.importorskip("duckdb")
    _, shards = split_run
    for k, shard in enumerate(shards, 1):
        assert arena("export", str(shard), "--to", str(tmp_path / f"s{k}"))[0] == 0
    doc = (Path(__file__).parents[2] / "docs" / "scale.md").read_text()
    sql = doc.split('duckdb -c "', 1)[1].split('"\n', 1)[0]
    sql = sql.replace("exports/s*/reviews.parquet", f"{tmp_path}/s*/reviews.parquet")
    rows = duckdb.sql(sql).fetchall()
    reviews = pl.concat(
        [pl.read_parquet(tmp_path / f"s{k}" / "reviews.parquet") for k in (1, 2, 3)]
    )
    decisive = reviews.filter(pl.col("verdict").is_in(["A", "B"]) & (pl.col("status") == "ok"))
    assert sum(n for _, _, n in rows) == decisive.height > 0


def _add_questions(path: Path, start: int, count: int) -> None:
    questions = path.parent / "q.jsonl"
    lines = [json.dumps({"id": f"q{i}", "text": f"Question number {i}?"}) for i in range(count)]
    questions.write_text(questions.read_text() + "\n".join(lines[start:]) + "\n")


def test_shards_run_on_different_question_sets_are_refused(tmp_path: Path) -> None:
    """Issue 46: shard 1/2 on 12 questions, 8 appended, shard 2/2: not one question set."""
    path = small_tournament(tmp_path, models=2, questions=12)
    one, two = tmp_path / "s1", tmp_path / "s2"
    assert arena("run", str(path), "--shard", "1/2", "--out", str(one))[0] == 0
    _add_questions(path, 12, 20)
    assert arena("run", str(path), "--shard", "2/2", "--out", str(two))[0] == 0
    code, out = arena("leaderboard", str(one), str(two), *FAST)
    assert code == 2, out
    assert f"{two}: tournament.json: ran on other questions or answers files than {one}" in out
    data = board_allowing(one, two)
    assert str(two) in data["partial"]["other_inputs"]
    assert data["partial"]["missing_shards"] == []
    # The same files on both shards: one question set, ranked as one run.
    again = tmp_path / "s1b"
    assert arena("run", str(path), "--shard", "1/2", "--out", str(again))[0] == 0
    assert board(again, two).get("partial") is None


def board_allowing(*dirs: Path) -> dict[str, Any]:
    args = ["leaderboard", *map(str, dirs), *FAST, "--format", "json", "--allow-missing-shards"]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "ran on other questions or answers files" in result.stderr  # the partial note
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def test_an_answers_file_edited_between_shards_is_refused(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=2, questions=6)
    answers = tmp_path / "answers.jsonl"
    answers.write_text(
        "".join(
            json.dumps({"question_id": f"q{i}", "choices": [{"turns": [f"A{i}"]}]}) + "\n"
            for i in range(6)
        )
    )
    config = yaml.safe_load(path.read_text())
    config["models"]["file"] = {"answers": "answers.jsonl"}
    config["contestants"] = [*config["contestants"], "file"]
    config["reviewers"] = ["m0", "m1"]
    path.write_text(yaml.safe_dump(config))
    one, two = tmp_path / "s1", tmp_path / "s2"
    assert arena("run", str(path), "--shard", "1/2", "--out", str(one))[0] == 0
    answers.write_text(answers.read_text().replace('"A0"', '"A0, edited"'))
    assert arena("run", str(path), "--shard", "2/2", "--out", str(two))[0] == 0
    code, out = arena("leaderboard", str(one), str(two), *FAST)
    assert code == 2 and "ran on other questions or answers files" in out
