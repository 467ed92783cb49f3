"""Where command output goes: a rich console that never cuts numbers when piped."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

from arena.report import rows_csv

if TYPE_CHECKING:  # rich loads with the first console: JSON and CSV output need none
    from rich.console import Console

__all__ = ["PIPE_WIDTH", "history_csv", "output_console"]

# Piped or redirected output has no width; rich would assume 80 columns and
# shorten cells to "0...". Tables are as wide as their content instead.
PIPE_WIDTH = 10_000


def output_console() -> Console:
    """A console for stdout: the terminal's width on a terminal, else wide enough for anything."""
    from rich.console import Console

    return Console(soft_wrap=False, width=None if sys.stdout.isatty() else PIPE_WIDTH)


def history_csv(view: dict[str, Any], *, diff: bool) -> str:
    """`--history` JSON as a row per snapshot and model; `--diff` JSON as a row per model."""
    if diff:
        return rows_csv(view["models"])
    return rows_csv(
        {"snapshot": s["snapshot"], "at": s["at"], **m}
        for s in view["snapshots"]
        for m in s["models"]
    )
