"""The errors arena raises for its users, in one hierarchy (imports nothing of arena).

Every error a caller can act on is an `ArenaError`, in one of five kinds; the
errors of each package subclass the kind they are, under their own names:

- `ArenaConfigError`: a tournament or settings file is invalid
  (`arena.config.ConfigError`: file, key path, problem; the leaderboard's
  `LeaderboardInputError`).
- `ArenaInputError`: another input cannot be used as given: a questions,
  answers or reviews file (`arena.formats.FormatError`), or a run directory
  whose plan is not the tournament's (`arena.rundir.PlanChanged`).
- `ArenaStorageError`: the log cannot be written: disk full, read-only file
  system, no permission (`arena.store.StorageError`); rows logged before stay.
- `ArenaLockError`: another run holds the run directory (`arena.store.LockHeld`).
- `ArenaProviderError`: a provider cannot be used at all: an unknown type, its
  SDK not installed (`arena.providers.ProviderUnavailable`). A single call that
  fails is no error: it is logged as failed (`arena.types.ProviderError` is the
  signal between a provider and the scheduler, not one of these).

Each kind carries the exit code the CLI ends with (`exit_code`): config and
input 2, provider 2, storage 74, lock 75, any other `ArenaError` 1. An error of
two kinds (a log of a newer format is a storage error the user fixes like bad
input) takes the lower code of its kinds unless it names its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: `import arena` stays light (arena.__main__)
    from collections.abc import Sequence
    from pathlib import Path

__all__ = [
    "ArenaConfigError",
    "ArenaError",
    "ArenaInputError",
    "ArenaLockError",
    "ArenaProviderError",
    "ArenaStorageError",
    "PreflightError",
]


class ArenaError(Exception):
    """An error arena raises on purpose; its message says what is wrong and where."""

    exit_code: int = 1  # the `arena` program's exit code for it (an unexpected failure)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "exit_code" not in cls.__dict__:  # of two kinds: the lower code
            codes = [b.exit_code for b in cls.__bases__ if issubclass(b, ArenaError)]
            cls.exit_code = min(codes)


class ArenaConfigError(ArenaError):
    """A tournament or settings file is invalid (names the file, key and problem)."""

    exit_code = 2


class ArenaInputError(ArenaError):
    """An input other than the configuration cannot be used as given."""

    exit_code = 2


class ArenaStorageError(ArenaError):
    """The run directory's log cannot be written (or read in a format this version knows)."""

    exit_code = 74


class ArenaLockError(ArenaError):
    """Another run holds the run directory."""

    exit_code = 75


class ArenaProviderError(ArenaError):
    """A provider cannot be used at all (unknown type, SDK missing)."""

    exit_code = 2


class PreflightError(ArenaConfigError):
    """A tournament that loads but cannot start (a provider's key or SDK missing, a
    model without a price under a budget...): `problems` lists each, as `arena run`
    prints them (exit 2 there)."""

    def __init__(self, path: Path, problems: Sequence[str]) -> None:
        self.path = path
        self.problems = list(problems)
        super().__init__("\n  ".join([f"{path}: cannot start:", *self.problems]))
