"""`arena leaderboard DIR1 DIR2 ...`: shard directories ranked as one tournament."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

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
