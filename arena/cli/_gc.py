"""`arena gc DIR`: merge the log's Parquet parts, archive or drop stale rows (docs/nightly.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from arena.cli._common import Command, fail
from arena.rundir import ARCHIVE_DIR, HISTORY_TABLE, collect_garbage, prune_archive, prune_reports
from arena.stages import all_parts
from arena.store import RunLock


@click.command("gc", cls=Command)
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "--drop",
    is_flag=True,
    help=f"Delete stale rows instead of moving them to DIR/{ARCHIVE_DIR}/.",
)
@click.option(
    "--keep-reports",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help="Also delete the report files of all but the newest N runs (DIR/reports/).",
)
@click.option(
    "--keep-history",
    type=click.IntRange(min=1),
    default=None,
    metavar="N",
    help="Also take out history snapshots beyond the newest N (tagged ones stay); archived "
    "like stale rows, or deleted with --drop.",
)
@click.option(
    "--keep-archive",
    type=click.IntRange(min=0),
    default=None,
    metavar="N",
    help=f"Also delete all but the newest N parts of each table in DIR/{ARCHIVE_DIR}/ "
    "(their spend stays counted).",
)
@click.option("--json", "as_json", is_flag=True, help="Print what was done as JSON.")
def gc_cmd(
    directory: Path,
    drop: bool,
    keep_reports: int | None,
    keep_history: int | None,
    keep_archive: int | None,
    as_json: bool,
) -> None:
    """Merge each log table of DIR into one Parquet part; archive stale rows.

    Stale rows are answers and reviews made for an older config: their
    question, models and reviewer are in the last run's plan under another
    id, so they are never reused or ranked. They move to DIR/archive/ (with
    --drop they are deleted). Rows of removed models or questions stay (a
    model put back finds them), the history table stays whole unless
    --keep-history. What every row cost stays counted (the spend ledger).
    --keep-reports and --keep-archive bound the report files and the archive.
    Takes the run lock: exit 75 while a run is going, 2 when DIR is not a run
    directory.
    """
    if not (directory / "log").is_dir():
        fail(f"{directory}: not a run directory (no log/)")
    all_parts()  # every part's log tables are registered, so each is merged
    with RunLock(directory):
        report = collect_garbage(directory, drop=drop, keep_history=keep_history)
        reports = [] if keep_reports is None else prune_reports(directory, keep_reports)
        archive = [] if keep_archive is None else prune_archive(directory, keep_archive)
    data = report.to_json()
    data["reports_deleted"] = reports
    data["archive_parts_deleted"] = archive
    if as_json:
        click.echo(json.dumps(data))
        return
    if not report.plan:
        click.echo(f"{directory}: no plan file (no run yet): nothing counts as stale", err=True)
    what = "dropped" if drop else f"archived to {directory / ARCHIVE_DIR}"
    for t in data["tables"]:
        kept = (
            "history kept"
            if t["table"] == HISTORY_TABLE and not t["rows_stale"]
            else f"{t['rows_kept']} rows kept"
        )
        click.echo(
            f"{t['table']}: {t['parts_before']} parts -> {t['parts_after']}, {kept}, "
            f"{t['rows_stale']} stale rows {what if t['rows_stale'] else 'found: none'}"
        )
    if keep_reports is not None:
        click.echo(f"reports: {len(reports)} runs' report files deleted, {keep_reports} kept")
    if keep_archive is not None:
        click.echo(f"archive: {len(archive)} parts deleted")
