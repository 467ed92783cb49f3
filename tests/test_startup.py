"""`arena --help` imports no command module and no heavy library (lazy imports)."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from arena.cli import COMMANDS, SUMMARIES, main
from tests.conftest import finished_small_run, small_tournament

HEAVY = ("polars", "pyarrow", "pydantic", "numpy", "yaml", "arena.config", "arena.store")


def test_help_imports_nothing_heavy() -> None:
    probe = (
        "import sys\n"
        "from arena.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
        "print(sorted(m for m in sys.modules if m.startswith('arena.cli._') "
        "and m != 'arena.cli._exit'))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[-2:] == ["[]", "[]"]


def test_help_lists_every_command_with_its_own_summary() -> None:
    text = CliRunner().invoke(main, ["--help"]).output
    ctx = click.Context(main)
    for name, target in COMMANDS.items():
        assert name in text
        module, _, attr = target.partition(":")
        command = getattr(importlib.import_module(module), attr)
        assert " ".join((command.help or "").split()).startswith(SUMMARIES[name]), name
        assert main.get_command(ctx, name) is command


def test_package_attributes_load_on_first_use() -> None:
    import arena
    import arena.config

    assert arena.load_tournament is arena.config.load_tournament
    assert issubclass(arena.ConfigError, Exception)


# What each everyday command on a small run must not load: the heavy libraries and
# the parts of arena only a run or a report needs. numba and scipy: the NumPy passes
# of arena.rank serve small logs; pandas: pyarrow's `Schema.empty_table()` loads it,
# the store builds empty tables without it; pyarrow: the log is read by polars;
# asyncio, the runner and the session: these commands run nothing; urllib.request:
# only a run that alerts sends. The leaderboard of a run directory reads
# `tournament.json`, never the YAML (no pydantic, no YAML reader); status and plan
# draw their tables with polars (no rich); plan ranks nothing.
_HEAVY = (
    "numba",
    "scipy",
    "statsmodels",
    "networkx",
    "pandas",
    "pyarrow",
    "asyncio",
    "urllib.request",
    "arena.runner",
    "arena.session",
    "arena.htmlreport",
)
NOT_NEEDED = {
    "leaderboard": (*_HEAVY, "pydantic", "yaml"),
    "status": (*_HEAVY, "rich", "arena.engine"),
    "plan": (*_HEAVY, "rich", "arena.rank"),
}


def _loaded_by(args: list[str], modules: tuple[str, ...]) -> list[str]:
    """Which of `modules` `arena ARGS` loads, run in a fresh interpreter (it must exit 0)."""
    probe = (
        "import sys\n"
        "from arena.cli import main\n"
        "try:\n"
        f"    main({args!r})\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        f"print(sorted(m for m in {modules!r} if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return list(json.loads(done.stdout.strip().splitlines()[-1].replace("'", '"')))


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A finished sim run of 4 models on 6 questions: (tournament YAML, run directory)."""
    return finished_small_run(tmp_path_factory.mktemp("startup"), models=4, questions=6)


def _cases() -> list[Any]:
    return [
        pytest.param(command, module, id=f"{command}-{module}")
        for command, modules in NOT_NEEDED.items()
        for module in modules
    ]


@pytest.mark.parametrize(("command", "module"), _cases())
def test_everyday_command_loads_only_what_it_uses(
    command: str, module: str, small_run: tuple[Path, Path], loaded: dict[str, list[str]]
) -> None:
    assert module not in loaded[command]


@pytest.fixture(scope="module")
def loaded(small_run: tuple[Path, Path]) -> dict[str, list[str]]:
    """The modules of NOT_NEEDED each command loads (one subprocess per command)."""
    config, out = small_run
    args = {
        "leaderboard": ["leaderboard", str(out)],
        "status": ["status", str(out)],
        "plan": ["plan", str(config), "--out", str(out)],
    }
    return {name: _loaded_by(args[name], NOT_NEEDED[name]) for name in NOT_NEEDED}


def test_small_leaderboard_ranks_on_the_numpy_passes(small_run: tuple[Path, Path]) -> None:
    # NumPy's Elo gives the leaderboard the compiled Elo gives (forced with a zero threshold).
    _, out = small_run
    probe = (
        "import sys\n"
        "from arena.rank import _elo\n"
        "_elo.COMPILED_MIN_ROWS = int(sys.argv[1])\n"
        "from arena.cli import main\n"
        f"main(['leaderboard', {str(out)!r}, '--format', 'json'])\n"
    )
    runs = [
        subprocess.run(
            [sys.executable, "-c", probe, threshold], capture_output=True, text=True, check=True
        ).stdout
        for threshold in ("0", str(10**18))
    ]
    compiled, plain = (json.loads(text) for text in runs)
    assert [m["model"] for m in plain["models"]] == [m["model"] for m in compiled["models"]]
    for ours, theirs in zip(plain["models"], compiled["models"], strict=True):
        for key in ("bt", "elo", "win_rate", "weighted_win_rate", "bt_ci_low", "bt_ci_high"):
            assert ours[key] == pytest.approx(theirs[key], abs=1e-6), key


# The end of a probe that checks a lazy package `pkg`: every public name resolves to
# its module's own object on first use, `dir` lists them all, and any other name is
# an AttributeError. Prints the names `dir` misses, then the error.
_NAMES_PROBE = (
    "for name in pkg.__all__:\n"
    "    value = getattr(pkg, name)\n"
    "    home = getattr(value, '__module__', None)\n"
    "    if isinstance(home, str) and home.startswith('arena.') and name in vars(\n"
    "        sys.modules[home]):\n"
    "        assert vars(sys.modules[home])[name] is value, name\n"
    "print(sorted(set(pkg.__all__) - set(dir(pkg))))\n"
    "try:\n"
    "    pkg.no_such_name\n"
    "except AttributeError as exc:\n"
    "    print(exc)\n"
)


@pytest.mark.parametrize("package", ["arena.discuss", "arena.batcheval"])
def test_stage_package_loads_its_names_on_first_use(package: str) -> None:
    # Importing the package registers its log table and loads nothing else of it;
    # each public name then comes from its module, the same object, on first use.
    probe = (
        "import importlib, sys\n"
        f"pkg = importlib.import_module({package!r})\n"
        "from arena.store import TABLES\n"
        f"loaded = sorted(m for m in sys.modules if m.startswith({package!r} + '.'))\n"
        "print(loaded, pkg.TABLE in TABLES)\n" + _NAMES_PROBE
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == f"['{package}._schema'] True"
    assert out[1] == "[]"
    assert out[2] == f"module '{package}' has no attribute 'no_such_name'"


def test_every_stage_loads_from_its_hooks_alone() -> None:
    # The registry's stages come without their packages' standalone commands.
    probe = (
        "import sys\n"
        "from arena.stages import all_parts\n"
        "print([type(p.report).__module__ for p in all_parts()])\n"
        "print(sorted(m for m in sys.modules if m.endswith(('._standalone', '._cli'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == [
        "['arena.sampling._selection', 'arena.discuss._stage', 'arena.batcheval._stage']",
        "[]",
    ]


# Packages whose names load on first use, and the modules of the package their
# import itself loads (a log table to register, the error every caller catches).
LAZY_PACKAGES = {
    "arena.config": ["arena.config._errors"],
    "arena.store": [
        "arena.store._files",
        "arena.store._format",
        "arena.store._log",
        "arena.store._reasons",
        "arena.store._schema",
        "arena.store._usage",
    ],
    "arena.sampling": ["arena.sampling._schema"],
    "arena.pipeline": [],
    "arena.scheduler": ["arena.scheduler._batch_table"],
}


@pytest.mark.parametrize("package", sorted(LAZY_PACKAGES))
def test_package_loads_its_names_on_first_use(package: str) -> None:
    # Each public name comes from its module, the same object, on first use.
    probe = (
        "import importlib, sys\n"
        f"pkg = importlib.import_module({package!r})\n"
        f"print(sorted(m for m in sys.modules if m.startswith({package!r} + '.')))\n"
        "print('pydantic' in sys.modules, 'yaml' in sys.modules)\n" + _NAMES_PROBE
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out[0] == str(LAZY_PACKAGES[package])
    if package == "arena.config":  # ConfigError alone: no schema, no YAML reader
        assert out[1] == "False False"
    assert out[2] == "[]"
    assert out[3] == f"module '{package}' has no attribute 'no_such_name'"


def test_stage_hooks_load_the_stage_only_for_a_run_that_has_it(tmp_path: Path) -> None:
    # A run with a discussion: the leaderboard loads the discussion report and
    # shows its block (the hooks' early exit is for runs without one).
    section = {"battles": "all", "discussants": ["m0", "m1"], "allow_contestants": True}
    config = small_tournament(
        tmp_path, questions=2, extra={"discussion": {**section, "max_turns": 1}}
    )
    result = CliRunner().invoke(main, ["run", str(config), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    modules = ("arena.discuss._rundir", "arena.batcheval._summary")
    assert _loaded_by(["leaderboard", str(tmp_path / "out")], modules) == ["arena.discuss._rundir"]
    board = CliRunner().invoke(main, ["leaderboard", str(tmp_path / "out"), "--format", "json"])
    assert board.exit_code == 0, board.output
    assert json.loads(board.output)["discussion"] is not None
