"""`arena grades DIR`: the stage's own command."""

from __future__ import annotations

from pathlib import Path

import click
import polars as pl

from arena.store import RunLog
from tests.toystage._schema import TABLE


@click.command("grades")
@click.argument("directory", type=click.Path(exists=True, file_okay=False, path_type=Path))
def grades_cmd(directory: Path) -> None:
    """Print the mean grade of each model in DIR."""
    frame = RunLog(directory).read(TABLE, columns=["model", "grade"]).drop_nulls("grade")
    for model, mean in (
        frame.group_by("model").agg(pl.col("grade").mean()).sort("model").iter_rows()
    ):
        click.echo(f"{model}\t{mean:.2f}")
