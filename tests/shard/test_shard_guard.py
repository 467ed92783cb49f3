"""A shard directory keeps its shard; missing shards are refused or marked partial.

Regression tests of issue 23: resuming a shard directory without `--shard`
ran the whole tournament there (and erased the shard record), `--shard` into
an unsharded directory re-planned it, and `leaderboard` / `report` / `export`
of 2 shards of 3 exited 0 as if they were the whole run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.config import ConfigError, load_tournament
from arena.engine import run_directory
from arena.store import RunLog
from tests.conftest import small_tournament

FAST = ["--elo-orders", "3", "--bootstrap", "10"]


def arena(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def summary(result: Result) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return data


def calls(directory: Path) -> int:
    log = RunLog(directory)
    return log.read("answers").height + log.read("reviews").height


def recorded(directory: Path) -> Any:
    return json.loads((directory / "tournament.json").read_text())["shard"]


@pytest.fixture(scope="module")
def split(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, list[Path]]:
    """The YAML, its whole run, and its three shards of a 3-way split."""
    tmp = tmp_path_factory.mktemp("guard")
    path = small_tournament(tmp, models=2, questions=6)
    assert arena("run", str(path), "--out", str(tmp / "whole")).exit_code == 0
    shards = []
    for k in (1, 2, 3):
        out = tmp / f"s{k}"
        result = arena("run", str(path), "--shard", f"{k}/3", "--out", str(out))
        assert result.exit_code == 0, result.output
        shards.append(out)
    return path, tmp / "whole", shards


def test_a_shard_directory_resumed_without_shard_continues_its_shard(
    split: tuple[Path, Path, list[Path]],
) -> None:
    path, _, shards = split
    before = calls(shards[1])
    result = arena("run", str(path), "--out", str(shards[1]), "--json")
    assert result.exit_code == 0, result.output
    done = summary(result)
    # Only shard 2/3's calls, all already logged: nothing is made (or paid) again.
    assert done["completed"] == 0 and done["skipped"] == done["planned"] == before
    assert f"{shards[1]} holds shard 2/3 (its tournament.json): running that shard" in (
        result.stderr
    )
    assert recorded(shards[1]) == {"index": 2, "count": 3}
    assert calls(shards[1]) == before


def test_another_shard_into_a_shard_directory_is_refused(
    split: tuple[Path, Path, list[Path]],
) -> None:
    path, _, shards = split
    before = calls(shards[0])
    result = arena("run", str(path), "--out", str(shards[0]), "--shard", "2/3")
    assert result.exit_code == 2
    assert (
        f"{shards[0]}: --shard 2/3: this directory holds shard 1/3 (its tournament.json)"
        in result.stderr
    )
    result = arena("run", str(path), "--out", str(shards[0]), "--shard", "1/2")
    assert result.exit_code == 2 and "holds shard 1/3" in result.stderr
    assert recorded(shards[0]) == {"index": 1, "count": 3}
    assert calls(shards[0]) == before


def test_the_engine_never_erases_a_shard_record(split: tuple[Path, Path, list[Path]]) -> None:
    """Through the package API too: the whole tournament into a shard directory."""
    path, _, shards = split
    t = load_tournament(path, shards[2])
    with pytest.raises(ConfigError, match="holds shard 3/3 .* not the whole tournament"):
        run_directory(t)
    assert recorded(shards[2]) == {"index": 3, "count": 3}


def test_a_shard_into_an_unsharded_run_directory_is_refused(
    split: tuple[Path, Path, list[Path]],
) -> None:
    path, whole, _ = split
    plan = pl.read_parquet(whole / "plan.parquet")
    board = arena("leaderboard", str(whole), *FAST, "--format", "json").stdout
    result = arena("run", str(path), "--out", str(whole), "--shard", "1/3")
    assert result.exit_code == 2
    assert f"{whole}: --shard 1/3: this directory holds the calls of an unsharded run" in (
        result.stderr
    )
    assert recorded(whole) is None
    assert pl.read_parquet(whole / "plan.parquet").equals(plan)
    assert arena("leaderboard", str(whole), *FAST, "--format", "json").stdout == board


def test_a_shard_may_start_in_a_directory_without_calls(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=2, questions=3)
    (tmp_path / "fresh" / "log").mkdir(parents=True)
    result = arena("run", str(path), "--out", str(tmp_path / "fresh"), "--shard", "1/2")
    assert result.exit_code == 0, result.output
    assert recorded(tmp_path / "fresh") == {"index": 1, "count": 2}


@pytest.mark.parametrize("command", ["leaderboard", "report", "export"])
def test_missing_shards_are_refused_then_marked_partial(
    split: tuple[Path, Path, list[Path]], tmp_path: Path, command: str
) -> None:
    _, _, shards = split
    given = [str(shards[0]), str(shards[1])]
    extra = {
        "leaderboard": [*FAST, "--format", "json"],
        "report": [*FAST, "-o", str(tmp_path / "r.html")],
        "export": ["--to", str(tmp_path / "x"), "--json"],
    }[command]
    result = arena(command, *given, *extra)
    assert result.exit_code == 2
    assert (
        f"arena: error: {shards[0]}, {shards[1]}: shard 3/3 of this 3-way split missing: "
        "give the directories of every shard, or --allow-missing-shards" in result.stderr
    )
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "x").exists()
    result = arena(command, *given, *extra, "--allow-missing-shards")
    assert result.exit_code == 0, result.output
    note = "partial result: shard 3/3 of this 3-way split missing"
    assert f"arena: warning: {note}" in result.stderr
    partial = {"split": 3, "missing_shards": ["3/3"], "directories": given}
    if command == "report":
        assert note in (tmp_path / "r.html").read_text()
    else:
        data = json.loads(result.stdout)
        assert data["partial"] == partial
        if command == "leaderboard":
            assert data["warnings"][0].startswith(note)


def test_one_shard_alone_is_marked_partial_and_the_whole_split_is_not(
    split: tuple[Path, Path, list[Path]], tmp_path: Path
) -> None:
    """One shard directory is that shard's own view (its machine's progress, its export)."""
    _, _, shards = split
    result = arena("leaderboard", str(shards[2]), *FAST)
    assert result.exit_code == 0, result.output
    assert "Warning: partial result: shards 1/3, 2/3 of this 3-way split missing" in (result.stdout)
    result = arena("export", str(shards[2]), "--to", str(tmp_path / "x"), "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["partial"]["missing_shards"] == ["1/3", "2/3"]
    result = arena("leaderboard", *map(str, shards), *FAST, "--format", "json")
    assert result.exit_code == 0 and "partial" not in json.loads(result.stdout)
    assert "warning" not in result.stderr


def test_shards_of_different_splits_name_both_directories(
    split: tuple[Path, Path, list[Path]], tmp_path: Path
) -> None:
    path, whole, shards = split
    other = tmp_path / "half"
    assert arena("run", str(path), "--shard", "2/2", "--out", str(other)).exit_code == 0
    result = arena("leaderboard", str(shards[0]), str(other), *FAST)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"arena: error: {other}: shard 2/2, but {shards[0]} is shard 1/3: shards of "
        "different splits (the shards of one run share N)"
    )
    # The whole run among shards is refused too (it would count its calls twice over).
    result = arena("leaderboard", str(whole), str(shards[0]), *FAST)
    assert result.exit_code == 2
    assert f"{whole}: the whole run, but {shards[0]} is a shard" in result.stderr
