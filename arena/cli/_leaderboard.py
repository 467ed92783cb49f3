"""`arena leaderboard`: rank the reviews of a run, or judgments imported from elsewhere."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
from rich.console import Console

from arena.config import ConfigError
from arena.nightly import history_view
from arena.report import (
    LeaderboardInputError,
    LeaderboardOptions,
    build_leaderboard,
    render_json,
    render_markdown,
    render_table,
)

__all__ = ["leaderboard"]

_BAD_INPUT = 2


def _fail(message: str) -> None:
    click.echo(f"arena: error: {message}", err=True)
    sys.exit(_BAD_INPUT)


@click.command("leaderboard")
@click.argument("sources", metavar="[DIR_OR_FILE]...", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "json"]),
    default="table",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--reviews",
    "reviews_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Rank the judgments in this JSONL / CSV / Parquet file (columns question_id, "
    "model_a, model_b, reviewer, and score -1/0/1 or verdict A/B/tie).",
)
@click.option(
    "--human",
    "human_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Human labels (same columns as --reviews; several per battle are majority-voted): "
    "report the agreement of each reviewer and of each ranking with them.",
)
@click.option(
    "--human-scores",
    "human_scores_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Human scores of the run's answers (JSONL or CSV rows: question_id, model, "
    "criterion, score): the BatchEval block reports their per-answer Pearson and Spearman "
    "correlation with the BatchEval scores, per criterion, with bootstrap intervals.",
)
@click.option(
    "--anchor",
    metavar="MODEL",
    default=None,
    help="Pin this model's Bradley-Terry rating at 1000 (default: the mean is 1000).",
)
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
    help="Bootstrap rounds over questions for the Bradley-Terry intervals (0: none).",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed of the Elo orders and the bootstrap.",
)
@click.option(
    "--history",
    "show_history",
    is_flag=True,
    help="Each model's rating over the snapshots in DIR's history (one per completed run).",
)
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="Changes since the previous history snapshot: rank moves, rating change, "
    "new and dropped models.",
)
def leaderboard(
    sources: tuple[Path, ...],
    fmt: str,
    reviews_file: Path | None,
    human_file: Path | None,
    human_scores_file: Path | None,
    anchor: str | None,
    elo_orders: int,
    bootstrap: int,
    seed: int,
    show_history: bool,
    show_diff: bool,
) -> None:
    """Rank models from a run directory or from a file of pairwise judgments.

    DIR_OR_FILE is a run directory (its log/ and tournament.json) or a reviews
    file. Reports win rates (equal reviewer weights), PeerRank weighted win
    rates and reviewer weights, weighted Elo, and Bradley-Terry ratings with
    bootstrap intervals (the table is ordered by them), plus judge diagnostics:
    position bias, swap consistency, self-preference, tie and invalid rates,
    the pairwise win-rate matrix and Fleiss' kappa. Invalid and failed reviews
    are never counted as battles. With a run directory, --reviews FILE ranks
    FILE against that tournament's contestants instead of the run's log.
    Several run directories (DIR1 DIR2 ...: the shards of one tournament run
    with `arena run --shard K/N`) are ranked as one tournament; directories of
    different tournaments are refused.

    \b
    Examples:
      arena leaderboard runs/demo
      arena leaderboard runs/demo --format json --anchor gpt-4o
      arena leaderboard --reviews judgments.csv --human labels.jsonl
      arena leaderboard runs/shard1 runs/shard2 runs/shard3
    """
    if len(sources) > 1 and (show_history or show_diff):
        _fail("--history and --diff read one run directory")
    source = sources[0] if sources else None
    if show_history or show_diff:  # the history table (docs/nightly.md)
        try:
            if source is None:
                raise ConfigError("arena leaderboard", "", "--history and --diff need a DIR")
            view = history_view(source, diff=show_diff)
        except ConfigError as exc:
            _fail(str(exc))
            return
        if fmt == "json":
            click.echo(json.dumps(view.to_json(), indent=2))
        elif fmt == "markdown":
            click.echo(view.markdown(), nl=False)
        else:
            view.print_table(Console(soft_wrap=False))
        return
    if source is None and reviews_file is None:
        _fail("give a run directory or a reviews file (DIR_OR_FILE or --reviews FILE)")
    options = LeaderboardOptions(
        anchor=anchor, elo_orders=elo_orders, bootstrap=bootstrap, seed=seed
    )
    try:
        board = build_leaderboard(
            list(sources) if len(sources) > 1 else source,
            reviews_file=reviews_file,
            human_file=human_file,
            options=options,
            human_scores_file=human_scores_file,
        )
    except LeaderboardInputError as exc:
        _fail(str(exc))
        return
    if fmt == "json":
        click.echo(render_json(board))
    elif fmt == "markdown":
        click.echo(render_markdown(board), nl=False)
    else:
        render_table(board, Console(soft_wrap=False))
