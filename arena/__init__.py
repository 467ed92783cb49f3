"""arena: rank chat models by letting them review each other."""

from __future__ import annotations

import importlib
import os

from arena.config import ConfigError, Tournament, load_tournament
from arena.store import RunLog
from arena.types import CallStatus, Verdict

__version__ = "0.1.0"

# Modules that register their log tables with the store when imported.
_TABLE_MODULES = ("arena.discuss", "arena.batcheval", "arena.nightly", "arena.sampling")


def open_log(directory: str | os.PathLike[str]) -> RunLog:
    """A run directory's log, with every table arena writes registered (answers, reviews,
    discussions, batcheval, history, sampling)."""
    for module in _TABLE_MODULES:
        importlib.import_module(module)
    return RunLog(directory)


__all__ = [
    "CallStatus",
    "ConfigError",
    "Tournament",
    "Verdict",
    "__version__",
    "load_tournament",
    "open_log",
]
