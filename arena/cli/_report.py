"""`arena report`: a run directory (or the shards of one tournament) as one HTML file."""

from __future__ import annotations

from pathlib import Path

import click

from arena.cli._common import Command, fail
from arena.cli._ranking import ranking_options, reviews_options
from arena.htmlreport import DEFAULT_BATTLES, build_report, write_report
from arena.report import LeaderboardInputError, LeaderboardOptions

__all__ = ["report_cmd"]


@click.command("report", cls=Command)
@click.argument("directories", metavar="[DIR]...", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "-o",
    "--output",
    "--out",
    "output",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="HTML file to write (default: DIR/report.html; required with several DIRs or --reviews).",
)
@reviews_options
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
@click.option(
    "--allow-missing-shards",
    is_flag=True,
    help="Report shard directories that are not the whole split: the report is marked partial.",
)
@ranking_options
@click.option(
    "--by",
    type=click.Choice(["category"]),
    default=None,
    help="Also rank within each question category.",
)
def report_cmd(
    directories: tuple[Path, ...],
    output: Path | None,
    reviews_files: tuple[Path, ...],
    reviews_format: str | None,
    strong_win_weight: float,
    human_file: Path | None,
    battles: int,
    allow_missing_shards: bool,
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

    Several run directories (DIR1 DIR2 ...: the shards of one tournament run
    with `arena run --shard K/N`) make one report, ranked as `arena
    leaderboard DIR1 DIR2 ...` ranks them; directories of different
    tournaments, or that are not run directories, are refused (exit 2), and
    so are shards that are not the whole split unless --allow-missing-shards
    (the report then says it is partial). The
    merged report needs -o FILE (it belongs to no one shard); it has no
    rating history (each shard's history ranks that shard alone); its
    BatchEval block, like the leaderboard's, holds every shard's scores.

    With --reviews FILE (repeatable, no DIR) the report reads judgments made
    elsewhere alone, in any format `arena leaderboard --reviews` reads: the
    leaderboard, the judges' diagnostics and the most disputed battles (with
    both answers where the file carries them); it has no history and no calls.
    MT-bench single-answer grades give FastChat's single-mode table alone;
    `--baseline per-category` adds each category's table against its own
    baseline (arena-hard v2.0).

    \b
    Examples:
      arena report runs/demo                  # writes runs/demo/report.html
      arena report runs/demo -o demo.html --battles 30
      arena report runs/s1 runs/s2 runs/s3 -o runs/all.html
      arena report --reviews annotations.json --baseline gpt4_1106_preview -o alpaca.html
    """
    if reviews_files and directories:
        fail("--reviews reports imported judgments alone: give no run directory with it")
    if not reviews_files and not directories:
        fail("give a run directory (DIR) or judgments (--reviews FILE)")
    if output is None and (len(directories) > 1 or reviews_files):
        fail(
            (
                "imported judgments make"
                if reviews_files
                else f"{len(directories)} run directories make"
            )
            + " one report: give the file to write with -o FILE"
        )
    try:
        if reviews_files:
            data = build_report(
                human_file=human_file,
                options=options,
                battles=battles,
                by=by,
                reviews_file=list(reviews_files),
                reviews_format=reviews_format,
                strong_win_weight=strong_win_weight,
            )
        else:
            data = build_report(
                directories[0] if len(directories) == 1 else list(directories),
                human_file=human_file,
                options=options,
                battles=battles,
                by=by,
                allow_missing_shards=allow_missing_shards,
            )
    except LeaderboardInputError as exc:
        fail(str(exc))
    if data.board is not None and data.board.partial is not None:
        click.echo(f"arena: warning: {data.board.warnings[0]}", err=True)
    target = write_report(data, output if output is not None else directories[0] / "report.html")
    click.echo(f"arena: wrote {target}")
