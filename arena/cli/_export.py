"""`arena export`: every table of a run's log as one deduplicated Parquet file."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

import click

import arena
from arena.cli._common import Command, fail
from arena.report import check_one_tournament, latest_rows
from arena.stages import register_all_tables
from arena.store import TABLES

__all__ = ["export_cmd", "export_tables"]


def _has_rows(log_dir: Path, table: str) -> bool:
    return (log_dir / table).is_dir() or any(log_dir.glob(f"{table}.journal.*"))


def export_tables(directory: Path | Sequence[Path], target: Path) -> dict[str, int]:
    """Write OUT/<table>.parquet for every table DIR's log holds; rows per table.

    Several directories (the shards of one tournament) are exported as one:
    each table is the rows of every directory, the last-finished row per id.
    """
    directories = [directory] if isinstance(directory, Path) else list(directory)
    logs = [arena.open_log(d) for d in directories]
    target.mkdir(parents=True, exist_ok=True)
    written: dict[str, int] = {}
    register_all_tables()
    for table in sorted(TABLES):
        present = [log for log in logs if _has_rows(log.log_dir, table)]
        if not present:
            continue
        # parts and journals, the latest row per id (and across directories)
        frame = latest_rows([log.read(table) for log in present])
        assert frame is not None
        fd, tmp = tempfile.mkstemp(prefix=f".{table}.", suffix=".parquet", dir=target)
        os.close(fd)
        try:
            frame.write_parquet(tmp)
            os.chmod(tmp, 0o644)
            os.replace(tmp, target / f"{table}.parquet")
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        written[table] = frame.height
    return written


@click.command("export", cls=Command)
@click.argument(
    "directories", metavar="DIR...", nargs=-1, required=True, type=click.Path(path_type=Path)
)
@click.option(
    "--to",
    "target",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Folder to write the Parquet files to (created if missing).",
)
@click.option(
    "--allow-missing-shards",
    is_flag=True,
    help="Export shard directories that are not the whole split (a partial export).",
)
@click.option("--json", "as_json", is_flag=True, help="Print {table: rows} as JSON.")
def export_cmd(
    directories: tuple[Path, ...], target: Path, allow_missing_shards: bool, as_json: bool
) -> None:
    """Write each table of DIR's log to OUT/<table>.parquet, one row per id.

    The log keeps every version of a row (a retried call is written again)
    across Parquet parts and journals; the export holds the latest row per
    `id`, the journals' rows included, so it can be read as is by duckdb,
    pandas, polars or Spark. Tables: answers, reviews, and discussions,
    batcheval, history when the run has them. Safe while a run is writing
    (it exports what is durable at that moment). Several DIRs (the shards of
    one tournament, `arena run --shard K/N`) are exported as one; directories
    of different tournaments are refused, and so are shards that are not the
    whole split unless --allow-missing-shards (a warning; `partial` in the JSON).

    \b
    Example:
      arena export runs/demo --to runs/demo-export/
      arena export runs/s1 runs/s2 runs/s3 --to runs/all-export/
      duckdb -c "SELECT model, count(*) FROM 'runs/demo-export/answers.parquet' GROUP BY model"
    """
    for directory in directories:
        if not (directory / "log").is_dir():
            fail(f"{directory}: not a run directory (no log/)")
        if target.resolve() == (directory / "log").resolve():
            fail(f"{target}: choose a folder outside the log")
    missing = check_one_tournament(directories, allow_missing_shards=allow_missing_shards)
    written = export_tables(list(directories), target)
    if missing is not None:
        click.echo(f"arena: warning: {missing.note()}", err=True)
    if as_json:
        report: dict[str, object] = {"output": str(target), "tables": written}
        if missing is not None:
            report["partial"] = missing.to_json()
        click.echo(json.dumps(report))
        return
    for table, rows in written.items():
        click.echo(f"{table}: {rows} rows -> {target / (table + '.parquet')}")
