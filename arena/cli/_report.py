"""`arena report`: a run directory as one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path

import click

from arena.cli._common import fail
from arena.cli._ranking import ranking_options
from arena.htmlreport import DEFAULT_BATTLES, build_report, write_report
from arena.report import LeaderboardInputError, LeaderboardOptions

__all__ = ["report_cmd"]


@click.command("report")
@click.argument("directory", metavar="DIR", type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="HTML file to write (default: DIR/report.html).",
)
@click.option(
    "--human",
    "human_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Human labels (as for `arena leaderboard --human`): each reviewer's agreement.",
)
@click.option(
    "--battles",
    type=click.IntRange(min=0),
    default=DEFAULT_BATTLES,
    show_default=True,
    help="Disputed battles to include in full (0: none).",
)
@ranking_options
@click.option(
    "--by",
    type=click.Choice(["category"]),
    default=None,
    help="Also rank within each question category.",
)
def report_cmd(
    directory: Path,
    output: Path | None,
    human_file: Path | None,
    battles: int,
    options: LeaderboardOptions,
    by: str | None,
) -> None:
    """Write the report of run directory DIR as one HTML file that opens offline.

    It holds the leaderboard and a chart of the ratings with their intervals,
    the pairwise win-rate heatmap with battle counts, each reviewer's weight
    and biases (position, swap consistency, self-preference, length, and
    agreement with --human labels), the rating history over completed runs,
    PeerDiscussion and BatchEval summaries, calls and cost, and the most
    disputed battles with both answers, every review and discussion. No
    script and no network: everything is inline, and all text from the log
    is escaped.

    \b
    Examples:
      arena report runs/demo                  # writes runs/demo/report.html
      arena report runs/demo -o demo.html --battles 30
    """
    try:
        data = build_report(
            directory, human_file=human_file, options=options, battles=battles, by=by
        )
    except LeaderboardInputError as exc:
        fail(str(exc))
    target = write_report(data, output if output is not None else directory / "report.html")
    click.echo(f"arena: wrote {target}")
