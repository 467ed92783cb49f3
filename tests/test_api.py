"""The Python API (`arena.run`, `arena.leaderboard`, `arena.plan`): the CLI's results as
functions, errors raised (never exits), names no module may shadow, the README example."""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import arena
from arena.api import Leaderboard, PreflightError
from arena.cli import main
from arena.config import ConfigError
from arena.errors import ArenaError, ArenaInputError
from arena.report import LeaderboardInputError
from arena.runner import RunSummary
from arena.store import LockHeld, RunLock
from tests.conftest import small_tournament

ROOT = Path(__file__).resolve().parent.parent
FAST: dict[str, Any] = {"bootstrap": 20, "elo_orders": 10}
FAST_ARGS = ["--bootstrap", "20", "--elo-orders", "10"]
_Ran = tuple[Path, Path, RunSummary]


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> _Ran:
    tmp = tmp_path_factory.mktemp("api")
    path = small_tournament(tmp, questions=3)
    summary = arena.run(path)
    return path, tmp / "out", summary


def test_run_returns_the_summary_of_the_run(ran: _Ran) -> None:
    _, out, summary = ran
    assert isinstance(summary, RunSummary)
    assert summary.pending == 0 and summary.failed == 0
    assert summary.completed + summary.invalid == summary.planned > 0
    assert set(summary.by_stage) == {"answers", "reviews"}
    assert (out / "tournament.json").is_file() and (out / "plan.parquet").is_file()


def test_a_second_run_resumes_and_pays_nothing(ran: _Ran) -> None:
    path, _, first = ran
    again = arena.run(path)
    assert again.completed == 0
    assert again.skipped == first.planned


def test_leaderboard_dict_is_the_cli_json(ran: _Ran) -> None:
    _, out, _ = ran
    board = arena.leaderboard(out, **FAST)
    assert isinstance(board, Leaderboard)
    cli = CliRunner().invoke(main, ["leaderboard", str(out), "--format", "json", *FAST_ARGS])
    assert cli.exit_code == 0, cli.output
    assert board.to_dict() == json.loads(cli.output)
    frame = board.to_polars()
    assert frame["model"].to_list() == [m["model"] for m in board.to_dict()["models"]]
    assert frame["model"].to_list()[0] == "m0"  # the strongest simulated model
    assert "| m0 |" in board._repr_markdown_().replace("**", "")


def test_leaderboard_options_are_the_cli_options(ran: _Ran) -> None:
    _, out, _ = ran
    board = arena.leaderboard([out], anchor="m2", weights="equal", **FAST)
    cli = CliRunner().invoke(
        main,
        ["leaderboard", str(out), "--format", "json", "--anchor", "m2", "--weights", "equal"]
        + FAST_ARGS,
    )
    assert board.to_dict() == json.loads(cli.output)
    assert {m["model"]: m["bt"] for m in board.to_dict()["models"]}["m2"] == pytest.approx(1000)


def test_plan_is_the_cli_plan_json(ran: _Ran) -> None:
    path, out, _ = ran
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a sim tournament: no warning to pass on
        planned = arena.plan(path)
    cli = CliRunner().invoke(main, ["plan", str(path), "--json"])
    assert cli.exit_code == 0, cli.output
    assert planned == json.loads(cli.output)
    assert planned["total"]["pending"] == 0
    assert arena.plan(arena.load_tournament(path)) == planned  # a loaded Tournament too


def test_errors_are_raised_with_the_cli_messages(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    data = yaml.safe_load(path.read_text())
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**data, "surprise": 1}))
    with pytest.raises(ConfigError, match="surprise: unknown key"):
        arena.run(bad)
    with pytest.raises(ConfigError, match="surprise: unknown key"):
        arena.plan(bad)
    with pytest.raises(ArenaInputError, match="budget"):
        arena.run(path, budget=-1.0)
    with pytest.raises(ArenaInputError, match="shard"):
        arena.run(path, shard="3/2")
    with RunLock(tmp_path / "out"):
        with pytest.raises(LockHeld):
            arena.run(path)
    with pytest.raises(LeaderboardInputError):
        arena.leaderboard(tmp_path / "nowhere")
    with pytest.raises(ArenaInputError, match="weights"):
        arena.leaderboard(tmp_path / "out", weights="loudest")
    with pytest.raises(TypeError, match="unknown option"):
        arena.leaderboard(tmp_path / "out", colour="red")
    assert not list((tmp_path / "out").glob("log/*.journal*"))  # nothing was called


def test_a_tournament_that_cannot_start_raises_its_problems(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    data = yaml.safe_load(path.read_text())
    data["providers"]["remote"] = {"type": "openai", "api_key_env": "ARENA_TEST_UNSET_KEY_24"}
    data["models"]["m2"] = {"provider": "remote", "model": "gpt-test"}
    path.write_text(yaml.safe_dump(data))
    os.environ.pop("ARENA_TEST_UNSET_KEY_24", None)
    with pytest.raises(PreflightError) as raised:
        arena.run(path)
    assert raised.value.problems
    assert isinstance(raised.value, ArenaError)
    assert "cannot start" in str(raised.value)


def test_import_arena_stays_light() -> None:
    probe = (
        "import sys, arena\n"
        "heavy = ('polars', 'pyarrow', 'pydantic', 'numpy', 'arena.api', 'arena.config')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
        "print(arena.run.__module__, arena.leaderboard.__module__, arena.plan.__module__)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    ).stdout.splitlines()
    assert out == ["[]", "arena.api arena.api arena.api"]


RESERVED = ("run", "leaderboard", "plan")


def test_no_module_takes_the_api_names() -> None:
    package = Path(arena.__file__).parent
    for name in RESERVED:
        assert not (package / name).exists(), f"arena/{name}/ would shadow arena.{name}"
        assert not (package / f"{name}.py").exists(), f"arena/{name}.py would shadow arena.{name}"
    for info in pkgutil.walk_packages([str(package)], prefix="arena."):
        if info.name.rsplit(".", 1)[-1] != "__main__":
            importlib.import_module(info.name)  # a submodule import sets attributes of arena
    for name in RESERVED:
        assert getattr(arena, name) is getattr(importlib.import_module("arena.api"), name)


_PYTHON_BLOCK = re.compile(r"## Python API\n.*?```python\n(.*?)```", re.S)


def test_the_readme_example_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The README's example, as written, from a copy of the repository's tournaments/
    (run in this process: a fresh interpreter's `import arena` is tested above)."""
    block = _PYTHON_BLOCK.search((ROOT / "README.md").read_text())
    assert block is not None
    shutil.copytree(ROOT / "tournaments", tmp_path / "tournaments")
    monkeypatch.chdir(tmp_path)
    exec(compile(block.group(1), "README.md", "exec"), {"__name__": "__main__"})
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "atlas"  # the demo's strongest model
    assert (tmp_path / "runs" / "api" / "log").is_dir()
    calls, done = map(int, lines[-1].split())
    assert calls == done > 0


def test_one_options_object_for_a_run(tmp_path: Path) -> None:
    """`arena.run()` and `arena run` share `RunOptions` and `prepare_run`: the same checks,
    `--batch` included, in the library."""
    from arena.cli._common import DEFAULT_GRACE_SECONDS
    from arena.engine import RunOptions, prepare_run
    from arena.shard import Shard

    assert RunOptions().grace == DEFAULT_GRACE_SECONDS  # the CLI's default is the library's
    for bad in ({"budget": float("nan")}, {"limit": 0}, {"grace": -1.0}):
        with pytest.raises(ArenaInputError):
            RunOptions(**bad)
    assert RunOptions(shard=(2, 5)).requested_shard() == Shard(2, 5)
    assert RunOptions(shard="2/5").requested_shard() == Shard(2, 5)
    assert not RunOptions(limit=2).history

    path = small_tournament(tmp_path)
    data = yaml.safe_load(path.read_text())
    data["providers"]["remote"] = {"type": "openai", "api_key_env": "ARENA_TEST_SET_KEY_44"}
    data["models"]["m2"] = {"provider": "remote", "model": "gpt-test"}
    path.write_text(yaml.safe_dump(data))
    os.environ["ARENA_TEST_SET_KEY_44"] = "sk-test"
    try:
        t = prepare_run(path, RunOptions(out=tmp_path / "o", limit=2, batch=True))
    finally:
        del os.environ["ARENA_TEST_SET_KEY_44"]
    assert len(t.questions) == 2
    assert t.output_dir == tmp_path / "o"
    assert t.config.providers["remote"].batch_mode() is not None  # --batch
    assert t.config.providers["sim"].batch_mode() is None


def test_plan_warns_through_the_warnings_module(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    data = yaml.safe_load(path.read_text())
    data["providers"]["remote"] = {"type": "openai", "api_key_env": "ARENA_TEST_UNSET_KEY_44"}
    data["models"]["m2"] = {"provider": "remote", "model": "no-such-model-44"}
    path.write_text(yaml.safe_dump(data))
    with pytest.warns(UserWarning, match="no price for m2"):
        planned = arena.plan(path)
    cli = CliRunner().invoke(main, ["plan", str(path), "--json"])
    assert "arena: warning: no price for m2" in cli.stderr
    assert planned == json.loads(cli.stdout)
