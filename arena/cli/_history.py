"""`arena leaderboard DIR --history` and `--diff [A..B]` (docs/nightly.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from arena.cli._output import history_csv, output_console

__all__ = ["LAST_TWO", "show_history_or_diff"]

# The value of a bare `--diff`: the last two snapshots.
LAST_TWO = "-"


def show_history_or_diff(
    source: Path | None, diff: str | None, anchor: str | None, fmt: str
) -> None:
    """Print DIR's history (`diff` None) or a diff of two snapshots; exit 2 on bad input.

    Piped output is never cut to a terminal width.
    """
    # Here, not at the top: a plain `arena leaderboard` needs neither.
    from arena.config import ConfigError
    from arena.rundir import history_view

    if diff is not None and source is None and diff != LAST_TWO and Path(diff).is_dir():
        source, diff = Path(diff), LAST_TWO  # `--diff DIR`: the value was the directory
    spec = None if diff is None else ("" if diff == LAST_TWO else diff.strip())
    if source is None:
        raise ConfigError("arena leaderboard", "", "--history and --diff need a DIR")
    view = history_view(source, diff=spec, anchor=anchor)  # ConfigError: exit 2 (_exit.py)
    if fmt == "json":
        text = json.dumps(view.to_json(), indent=2)
    elif fmt == "markdown":
        text = view.markdown()
    elif fmt == "csv":
        text = history_csv(view.to_json(), diff=spec is not None)
    else:
        view.print_table(output_console())
        return
    click.echo(text, nl=fmt == "json")  # markdown and csv end with a newline
