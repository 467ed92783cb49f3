"""`arena gc DIR`: merge the log's Parquet parts, archive or drop stale rows (docs/nightly.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

import arena.batcheval  # noqa: F401  (registers its table)
import arena.discuss  # noqa: F401  (registers its table)
from arena.cli._common import Exit, fail
from arena.nightly import ARCHIVE_DIR, HISTORY_TABLE, collect_garbage
from arena.store import LockHeld, RunLock


@click.command("gc")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--drop",
    is_flag=True,
    help=f"Delete stale rows instead of moving them to DIR/{ARCHIVE_DIR}/.",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
def gc_cmd(directory: Path, drop: bool, as_json: bool) -> None:
    """Merge each log table of DIR into one Parquet part; archive stale rows.

    Stale rows are answers and reviews made for an older config: their
    question, models and reviewer are in the last run's plan under another
    id, so they are never reused or ranked. They move to DIR/archive/ (with
    --drop they are deleted). Rows of removed models or questions stay (a
    model put back finds them), the history table stays whole. Takes the run
    lock: exit 75 while a run is going, 2 when DIR is not a run directory.
    """
    if not (directory / "log").is_dir():
        fail(f"{directory}: not a run directory (no log/)")
    try:
        with RunLock(directory):
            report = collect_garbage(directory, drop=drop)
    except LockHeld as exc:
        fail(str(exc), Exit.LOCKED)
    data = report.to_json()
    if as_json:
        click.echo(json.dumps(data))
        return
    if not report.plan:
        click.echo(f"{directory}: no plan file (no run yet): nothing counts as stale", err=True)
    what = "dropped" if drop else f"archived to {directory / ARCHIVE_DIR}"
    for t in data["tables"]:
        kept = "history kept" if t["table"] == HISTORY_TABLE else f"{t['rows_kept']} rows kept"
        click.echo(
            f"{t['table']}: {t['parts_before']} parts -> {t['parts_after']}, {kept}, "
            f"{t['rows_stale']} stale rows {what if t['rows_stale'] else 'found: none'}"
        )
