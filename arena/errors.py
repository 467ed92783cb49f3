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

The CLI turns each kind into its exit code in one place (`arena/cli/_exit.py`):
config and input 2, provider 2, storage 74, lock 75, any other `ArenaError` 1.
"""

from __future__ import annotations

__all__ = [
    "ArenaConfigError",
    "ArenaError",
    "ArenaInputError",
    "ArenaLockError",
    "ArenaProviderError",
    "ArenaStorageError",
]


class ArenaError(Exception):
    """An error arena raises on purpose; its message says what is wrong and where."""


class ArenaConfigError(ArenaError):
    """A tournament or settings file is invalid (names the file, key and problem)."""


class ArenaInputError(ArenaError):
    """An input other than the configuration cannot be used as given."""


class ArenaStorageError(ArenaError):
    """The run directory's log cannot be written (or read in a format this version knows)."""


class ArenaLockError(ArenaError):
    """Another run holds the run directory."""


class ArenaProviderError(ArenaError):
    """A provider cannot be used at all (unknown type, SDK missing)."""
