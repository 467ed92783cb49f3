"""arena: rank chat models by letting them review each other."""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from arena.errors import (
    ArenaConfigError,
    ArenaError,
    ArenaInputError,
    ArenaLockError,
    ArenaProviderError,
    ArenaStorageError,
)

if TYPE_CHECKING:
    from arena.api import leaderboard, plan, run
    from arena.config import ConfigError, Tournament, load_tournament
    from arena.store import RunLog
    from arena.types import CallStatus, Verdict

__version__ = "0.1.0"

# Loaded on first use: `import arena` (and so `arena --help`) stays light.
# `run`, `leaderboard` and `plan` are the Python API (arena.api); no module or
# package of arena may take those names (tests/test_api.py).
# `CallStatus` and `Verdict` too: `python -m arena` and the `arena` command import this
# package before they can handle signals (arena.runtime), so it imports next to nothing.
_LAZY = {
    "CallStatus": "arena.types",
    "Verdict": "arena.types",
    "ConfigError": "arena.config",
    "Tournament": "arena.config",
    "load_tournament": "arena.config",
    "leaderboard": "arena.api",
    "plan": "arena.api",
    "run": "arena.api",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'arena' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


# Modules that register their log tables with the store when imported; the stages'
# tables are registered by the registry of parts (`arena.stages`).
_TABLE_MODULES = ("arena.rundir",)


def open_log(directory: str | os.PathLike[str]) -> RunLog:
    """A run directory's log, with every table arena writes registered (answers, reviews,
    history, and every registered stage's: discussions, batcheval, sampling, ...)."""
    for module in _TABLE_MODULES:
        importlib.import_module(module)
    from arena.stages import register_all_tables
    from arena.store import RunLog

    register_all_tables()

    return RunLog(directory)


__all__ = [
    "ArenaConfigError",
    "ArenaError",
    "ArenaInputError",
    "ArenaLockError",
    "ArenaProviderError",
    "ArenaStorageError",
    "CallStatus",
    "ConfigError",
    "Tournament",
    "Verdict",
    "__version__",
    "leaderboard",
    "load_tournament",
    "open_log",
    "plan",
    "run",
]
