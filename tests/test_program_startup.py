"""The `arena` program starts an everyday command with Python's cyclic collector off and
turns it on after a second, and tells pydantic not to look for plugins
(arena.cli._startup); `arena run` keeps the collector as it is, the user's
environment wins, and a command called as a function changes nothing."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from arena.cli._startup import RUN_COMMANDS, pause_collector, skip_pydantic_plugins

# Runs `arena status DIR --json` as the program does (main() without arguments), and
# reports whether the collector was on when the command read DIR, and after it.
PROBE = (
    "import gc, json, os, sys, time\n"
    "wait = float(sys.argv[2])\n"
    "import arena.cli._status as status\n"
    "read = status.directory_status\n"
    "seen = {}\n"
    "def directory_status(*args, **kwargs):\n"
    "    seen['reading'] = gc.isenabled()\n"
    "    seen['plugins'] = os.environ.get('PYDANTIC_DISABLE_PLUGINS')\n"
    "    return read(*args, **kwargs)\n"
    "status.directory_status = directory_status\n"
    "import click\n"
    "orig_echo = click.echo\n"
    "def echo(*args, **kwargs):\n"
    "    orig_echo(*args, **kwargs)\n"
    "    time.sleep(wait)\n"
    "    seen['later'] = gc.isenabled()\n"
    "    sys.stderr.write(json.dumps(seen) + '\\n')\n"
    "click.echo = echo\n"
    "sys.argv = ['arena', 'status', sys.argv[1], '--json']\n"
    "from arena.cli import main\n"
    "main()\n"
)


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if was:
        gc.enable()
    else:
        gc.disable()


def test_an_everyday_command_starts_without_the_collector(collector_on: None) -> None:
    timer = pause_collector("status", seconds=0.2)
    assert timer is not None and timer.daemon
    assert not gc.isenabled()
    timer.join(5)
    assert gc.isenabled()


@pytest.mark.parametrize("command", sorted(RUN_COMMANDS))
def test_a_run_keeps_the_collector(collector_on: None, command: str) -> None:
    assert pause_collector(command, seconds=0.2) is None
    assert gc.isenabled()


def test_a_collector_turned_off_stays_off(collector_on: None) -> None:
    gc.disable()
    assert pause_collector("leaderboard", seconds=0.05) is None
    assert not gc.isenabled()


def _probe(run_dir: Path, wait: float, **env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(run_dir), str(wait)],
        capture_output=True,
        text=True,
        check=True,
        env={**clean, **env},
    )
    seen: dict[str, object] = json.loads(done.stderr.strip().splitlines()[-1])
    return seen


@pytest.mark.parametrize(("wait", "later"), [(0.0, False), (1.5, True)])
def test_the_program_turns_the_collector_on_after_its_pause(
    small_run_dir: Path, wait: float, later: bool
) -> None:
    seen = _probe(small_run_dir, wait)
    assert seen == {"reading": False, "plugins": "__all__", "later": later}


def test_the_users_pydantic_plugin_setting_wins(small_run_dir: Path) -> None:
    seen = _probe(small_run_dir, 0.0, PYDANTIC_DISABLE_PLUGINS="logfire")
    assert seen["plugins"] == "logfire"


def test_skip_pydantic_plugins_sets_the_switch_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PYDANTIC_DISABLE_PLUGINS", raising=False)
    assert skip_pydantic_plugins() is True
    assert os.environ["PYDANTIC_DISABLE_PLUGINS"] == "__all__"
    assert skip_pydantic_plugins() is False


def test_a_command_called_as_a_function_keeps_the_callers_collector(
    small_run_dir: Path, collector_on: None
) -> None:
    from click.testing import CliRunner

    from arena.cli import main

    result = CliRunner().invoke(main, ["status", str(small_run_dir), "--json"])
    assert result.exit_code == 0, result.output
    assert gc.isenabled()


@pytest.fixture(scope="module")
def small_run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tests.conftest import finished_small_run

    return finished_small_run(tmp_path_factory.mktemp("collector"), models=3, questions=2)[1]
