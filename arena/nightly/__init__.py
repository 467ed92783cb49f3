"""Deprecated: `arena.nightly` is now `arena.rundir` (the run directory) and `arena.ops`
(the run record, alerts, metrics and night reports).

Kept for one release so that code importing the old names keeps working; importing
it warns (DeprecationWarning). Every name it had is taken from its new home.
"""

from __future__ import annotations

import warnings
from typing import Any

import arena.ops as _ops
import arena.rundir as _rundir

warnings.warn(
    "arena.nightly is deprecated: import from arena.rundir (plan file, status, history, "
    "gc) or arena.ops (run record, alerts, metrics, night reports)",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = sorted({*_rundir.__all__, *_ops.__all__})


def __getattr__(name: str) -> Any:
    for package in (_rundir, _ops):
        if name in package.__all__:
            return getattr(package, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return list(__all__)
