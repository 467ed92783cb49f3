"""How many threads the compiled Elo loop of `arena.rank` may use."""

from __future__ import annotations

import os

__all__ = ["cores"]


def cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS tells it)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1
