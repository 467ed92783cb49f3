"""`arena report`: a run directory as one self-contained HTML file."""

from __future__ import annotations

from pathlib import Path

import click

from arena.cli._common import fail
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
@click.option("--anchor", metavar="MODEL", default=None, help="Pin this model's BT rating at 1000.")
@click.option(
    "--elo-orders",
    type=click.IntRange(min=0),
    default=100,
    show_default=True,
    help="Random review orders the weighted Elo is averaged over (0 skips Elo).",
)
@click.option(
    "--bootstrap",
    type=click.IntRange(min=0),
    default=200,
    show_default=True,
    help="Bootstrap rounds over questions for the intervals (0: none).",
)
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of Elo and bootstrap.")
@click.option(
    "--weights",
    "weighting",
    type=click.Choice(["peerrank", "equal"]),
    default="peerrank",
    show_default=True,
    help="Reviewer weights: the PeerRank fixed point, or every reviewer the same.",
)
@click.option(
    "--no-self",
    "no_self",
    is_flag=True,
    help="Leave out the reviews a reviewer made of battles it takes part in.",
)
def report_cmd(
    directory: Path,
    output: Path | None,
    human_file: Path | None,
    battles: int,
    anchor: str | None,
    elo_orders: int,
    bootstrap: int,
    seed: int,
    weighting: str,
    no_self: bool,
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
    options = LeaderboardOptions(
        anchor=anchor,
        elo_orders=elo_orders,
        bootstrap=bootstrap,
        seed=seed,
        weights=weighting,
        exclude_self=no_self,
    )
    try:
        data = build_report(directory, human_file=human_file, options=options, battles=battles)
    except LeaderboardInputError as exc:
        fail(str(exc))
    target = write_report(data, output if output is not None else directory / "report.html")
    click.echo(f"arena: wrote {target}")
