"""One hierarchy of errors (`arena.ArenaError`), each kind carrying its exit code."""

from __future__ import annotations

from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import arena
from arena.cli._common import Command
from arena.cli._exit import Exit, exit_for
from arena.config import ConfigError
from arena.errors import (
    ArenaConfigError,
    ArenaError,
    ArenaInputError,
    ArenaLockError,
    ArenaProviderError,
    ArenaStorageError,
    PreflightError,
)
from arena.formats import FormatError
from arena.providers import ProviderUnavailable
from arena.report import LeaderboardInputError
from arena.rundir import PlanChanged
from arena.store import LockHeld, LogFormatError, StorageError

# Each package's error, one of each kind, with the exit code `arena` ends with.
CASES: list[tuple[ArenaError, type[ArenaError], Exit]] = [
    (ConfigError("t.yaml", "models.a", "bad"), ArenaConfigError, Exit.BAD_INPUT),
    (LeaderboardInputError("r.csv", "line 2", "bad"), ArenaConfigError, Exit.BAD_INPUT),
    (FormatError("q.jsonl", "line 3", "bad"), ArenaInputError, Exit.BAD_INPUT),
    (PlanChanged(Path("runs/x"), 1, 2), ArenaInputError, Exit.BAD_INPUT),
    (ProviderUnavailable("providers.p: SDK missing"), ArenaProviderError, Exit.BAD_INPUT),
    (
        StorageError("runs/x/log", OSError(28, "No space left on device")),
        ArenaStorageError,
        Exit.STORAGE,
    ),
    (LockHeld(Path("runs/x")), ArenaLockError, Exit.LOCKED),
    (ArenaError("something else"), ArenaError, Exit.ERROR),
]


def test_each_kind_carries_its_exit_code() -> None:
    assert ArenaError.exit_code == 1
    assert (ArenaConfigError.exit_code, ArenaInputError.exit_code) == (2, 2)
    assert (ArenaProviderError.exit_code, ArenaStorageError.exit_code) == (2, 74)
    assert ArenaLockError.exit_code == 75
    # of two kinds (storage and input), the lower: a newer log format is bad input (2)
    assert issubclass(LogFormatError, ArenaStorageError)
    assert LogFormatError.exit_code == 2
    assert PreflightError.exit_code == 2


def test_the_package_exports_the_hierarchy() -> None:
    assert arena.ArenaError is ArenaError
    for kind in (ArenaConfigError, ArenaInputError, ArenaStorageError, ArenaLockError):
        assert issubclass(kind, arena.ArenaError)
        assert getattr(arena, kind.__name__) is kind
    assert issubclass(ArenaProviderError, arena.ArenaError)


@pytest.mark.parametrize(("error", "kind", "code"), CASES, ids=[type(c[0]).__name__ for c in CASES])
def test_each_error_is_of_its_kind_and_exits_with_its_code(
    error: ArenaError, kind: type[ArenaError], code: Exit
) -> None:
    assert isinstance(error, kind)
    assert exit_for(error) == code


def test_other_exceptions_have_no_code_of_their_own() -> None:
    assert exit_for(ValueError("a bug")) is None
    assert exit_for(KeyboardInterrupt()) is None


@pytest.mark.parametrize(("error", "kind", "code"), CASES, ids=[type(c[0]).__name__ for c in CASES])
def test_a_command_ends_with_the_code_of_an_error_it_does_not_handle(
    error: ArenaError, kind: type[ArenaError], code: Exit
) -> None:
    @click.command("probe", cls=Command)
    def probe() -> None:
        raise error

    result = CliRunner().invoke(probe, [])
    assert result.exit_code == int(code)
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert f"arena: error: {error}" in result.output
    assert "Traceback" not in result.output


def test_a_lock_held_through_the_program_exits_75(tmp_path: Path) -> None:
    """`arena gc DIR` while another run holds DIR: the one mapping, through `arena`."""
    from arena.cli import main
    from arena.store import RunLock

    (tmp_path / "log").mkdir()
    with RunLock(tmp_path):
        result = CliRunner().invoke(main, ["gc", str(tmp_path)])
    assert result.exit_code == 75
    assert "another arena run is using" in result.output


def test_history_without_a_directory_exits_2() -> None:
    from arena.cli import main

    result = CliRunner().invoke(main, ["leaderboard", "--history"])
    assert result.exit_code == 2
    assert "--history and --diff need a DIR" in result.output
