"""`arena runs DIR`: every run of a run directory, one row each (docs/nightly.md)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import click

from arena.cli._common import Command, fail
from arena.cli._table import box_table

_HEADERS = ("run id", "start", "end", "exit", "status", "calls", "failed", "spent $", "wall s")


@click.command("runs", cls=Command)
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json", "csv"]),
    default="table",
    help="Output format (default: a table).",
)
@click.option("--json", "as_json", is_flag=True, help="The same as --format json.")
def runs_cmd(directory: Path, fmt: str, as_json: bool) -> None:
    """List every run of DIR: id, start, end, exit code, status, calls, spend, snapshot.

    One row per `arena run` / `arena retry-failed` that ended (a run found
    killed reads `killed`, exit 137, with what it spent; a run refused by the
    lock, exit 75, changed nothing and is not listed). Read from DIR/runs.jsonl,
    which `arena gc` keeps whatever it prunes. `snapshot` is the number of the
    history snapshot the run added (none: empty).
    """
    from arena.rundir import RUN_COLUMNS, read_runs

    if not (directory / "log").is_dir() and not (directory / "reports").is_dir():
        fail(f"{directory}: not a run directory (no log/)")
    rows = [{c: row.get(c) for c in RUN_COLUMNS} for row in read_runs(directory)]
    if as_json or fmt == "json":
        click.echo(json.dumps({"directory": str(directory), "runs": rows}, indent=1))
        return
    if fmt == "csv":
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=list(RUN_COLUMNS), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        click.echo(buffer.getvalue(), nl=False)
        return
    cells = [_cells(row) for row in rows]
    click.echo(box_table(f"Runs of {directory}", [*_HEADERS, "snapshot"], cells, left=_HEADERS[:5]))


def _cells(row: dict[str, Any]) -> list[str]:
    def text(value: Any, fmt: str = "{}") -> str:
        return "" if value is None else fmt.format(value)

    return [
        text(row["run_id"]),
        text(row["started_at"]),
        text(row["ended_at"]),
        text(row["exit_code"]),
        text(row["status"]),
        text(row["calls"]),
        text(row["failed"]),
        text(row["spent_usd"], "{:.4f}"),
        text(row["wall_seconds"], "{:.1f}"),
        text(row["snapshot"]),
    ]
