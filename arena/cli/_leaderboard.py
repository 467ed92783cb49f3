"""`arena leaderboard`: rank the reviews of a run, or judgments imported from elsewhere."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import click

from arena.cli._common import Command
from arena.cli._history import LAST_TWO, show_history_or_diff
from arena.cli._output import output_console
from arena.cli._ranking import ranking_options, reviews_options
from arena.report import (
    LeaderboardOptions,
    build_leaderboard,
    load_single_grades,
    render_csv,
    render_json,
    render_markdown,
    render_table,
    rows_csv,
)

__all__ = ["leaderboard"]

_BAD_INPUT = 2


# A --diff value that starts with '-' (a snapshot counted from the latest: -1, -2..-1):
# click would take it for an option. It travels with a leading space, stripped later.
_NEGATIVE_RANGE = re.compile(r"^-\d+(\.\.(-?\d+)?)?$")


class _DiffCommand(Command):
    """`leaderboard`, taking `--diff -2..-1` and `--diff=-2..-1` as ranges, not options."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        fixed: list[str] = []
        i = 0
        while i < len(args):
            arg = args[i]
            if arg.startswith("--diff=") and _NEGATIVE_RANGE.match(arg[len("--diff=") :]):
                fixed.append("--diff=" + " " + arg[len("--diff=") :])
            elif arg == "--diff" and i + 1 < len(args) and _NEGATIVE_RANGE.match(args[i + 1]):
                fixed += ["--diff", " " + args[i + 1]]
                i += 1
            else:
                fixed.append(arg)
            i += 1
        return super().parse_args(ctx, fixed)


def _show_single_grades(table: dict[str, Any], fmt: str) -> None:
    """FastChat's single-mode table: mean grade per model, per turn and over both."""
    if fmt == "json":
        click.echo(json.dumps(table, indent=2))
        return
    columns = ("rank", "model", "score", "turn_1", "turn_2", "n")
    if fmt == "csv":
        click.echo(rows_csv({c: row[c] for c in columns} for row in table["models"]), nl=False)
        return

    def cell(value: Any) -> str:
        return "-" if value is None else f"{value:.4f}" if isinstance(value, float) else str(value)

    heads = ("#", "model", "score", "turn 1", "turn 2", "grades")
    rows = [[cell(row[c]) for c in columns] for row in table["models"]]
    judges = ", ".join(table["judges"])
    click.echo(
        f"MT-bench single-answer grades of {table['source']} (judge {judges}): "
        f"{table['grades']} grades, {table['questions']} questions"
    )
    if fmt == "markdown":
        click.echo("| " + " | ".join(heads) + " |")
        click.echo("|" + "---|" * len(heads))
        for row in rows:
            click.echo("| " + " | ".join(row) + " |")
    else:
        widths = [max(len(h), *(len(r[k]) for r in rows)) for k, h in enumerate(heads)]
        click.echo("  ".join(h.ljust(w) for h, w in zip(heads, widths, strict=True)))
        for row in rows:
            click.echo("  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)))
    click.echo(
        "score: mean grade (1-10) over every turn (FastChat's Average, the MT-bench score); "
        "turn 1, turn 2: the mean over that turn's grades."
    )
    for warning in table["warnings"]:
        click.echo(f"Warning: {warning}")


def _fail(message: str) -> None:
    click.echo(f"arena: error: {message}", err=True)
    sys.exit(_BAD_INPUT)


@click.command("leaderboard", cls=_DiffCommand)
@click.argument("sources", metavar="[DIR_OR_FILE]...", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "markdown", "json", "csv"]),
    default="table",
    show_default=True,
    help="Output format (csv: one row per model, numbers at full precision).",
)
@reviews_options
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
@ranking_options
@click.option(
    "--by",
    type=click.Choice(["category"]),
    default=None,
    help="Also rank within each question category (MT-bench's, arena-hard's, AlpacaEval's "
    "dataset; a reviews file needs a `category` column).",
)
@click.option(
    "--allow-missing-shards",
    is_flag=True,
    help="Rank shard directories that are not the whole split (some `--shard K/N` missing): "
    "the result is marked partial (a warning, and `partial` in the JSON).",
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
    is_flag=False,
    flag_value=LAST_TWO,
    default=None,
    metavar="[A..B]",
    help="Changes between two history snapshots (default: the last two; A and B are "
    "snapshot numbers (1 the oldest, -1 the latest: --diff -2..-1), dates YYYY-MM-DD or "
    "`arena run --tag` tags): rank moves, anchored "
    "rating change and whether it is significant, new, returning and dropped models, and "
    "what changed in the tournament.",
)
def leaderboard(
    sources: tuple[Path, ...],
    fmt: str,
    reviews_files: tuple[Path, ...],
    reviews_format: str | None,
    strong_win_weight: float,
    human_file: Path | None,
    human_scores_file: Path | None,
    options: LeaderboardOptions,
    by: str | None,
    allow_missing_shards: bool,
    show_history: bool,
    show_diff: str | None,
) -> None:
    """Rank models from a run directory or from a file of pairwise judgments.

    DIR_OR_FILE is a run directory (its log/ and tournament.json) or a reviews
    file. Reports win rates (equal reviewer weights), PeerRank weighted win
    rates and reviewer weights, weighted Elo, and Bradley-Terry ratings (the
    table is ordered by them), each with a 95% interval (Bradley-Terry:
    cluster-robust sandwich by question unless --intervals bootstrap; the win
    rates: the question bootstrap), rank intervals, sample sizes, and, when the
    reviews carry the answers' text or lengths, style-controlled ratings; plus
    judge diagnostics: position bias, swap consistency, self-preference, length
    bias, tie and invalid rates, the pairwise win-rate and battle-count
    matrices and Fleiss' kappa. Invalid and failed reviews are never counted as
    battles. With a run directory, --reviews FILE ranks FILE against that
    tournament's contestants instead of the run's log.
    Several run directories (DIR1 DIR2 ...: the shards of one tournament run
    with `arena run --shard K/N`) are ranked as one tournament; directories of
    different tournaments are refused, and so are shards that are not the
    whole split unless --allow-missing-shards (a partial result, marked so).

    \b
    Examples:
      arena leaderboard runs/demo
      arena leaderboard runs/demo --format json --anchor gpt-4o
      arena leaderboard --reviews judgments.csv --human labels.jsonl
      arena leaderboard runs/demo --no-self --weights equal
      arena leaderboard runs/shard1 runs/shard2 runs/shard3
      arena leaderboard --reviews annotations.json --baseline gpt4_1106_preview
      arena leaderboard --reviews model_judgment/gpt-4.1 --strong-win-weight 3
    """
    if len(sources) > 1 and (show_history or show_diff is not None):
        _fail("--history and --diff read one run directory")
    source = sources[0] if sources else None
    if show_history or show_diff is not None:  # the history table (docs/nightly.md)
        show_history_or_diff(source, show_diff, options.anchor, fmt)
        return
    if source is None and not reviews_files:
        _fail("give a run directory or a reviews file (DIR_OR_FILE or --reviews FILE)")
    graded = [*reviews_files, *(s for s in sources if not s.is_dir())]
    grades = (
        load_single_grades(graded)
        if graded and len(graded) == len([*reviews_files, *sources])
        else None
    )
    if grades is not None:  # MT-bench single-answer grades: FastChat's single-mode table
        pairwise = {"--baseline": options.baseline, "--human": human_file, "--by": by}
        for flag, value in pairwise.items():
            if value is not None:
                _fail(f"{flag} ranks pairwise judgments; single-answer grades have no battles")
        _show_single_grades(grades, fmt)
        return
    board = build_leaderboard(  # LeaderboardInputError: exit 2 (_exit.py)
        list(sources) if len(sources) > 1 else source,
        reviews_file=list(reviews_files) or None,
        human_file=human_file,
        options=options,
        human_scores_file=human_scores_file,
        by=by,
        reviews_format=reviews_format,
        strong_win_weight=strong_win_weight,
        allow_missing_shards=allow_missing_shards,
    )
    if board.partial is not None:
        click.echo(f"arena: warning: {board.warnings[0]}", err=True)
    if fmt == "json":
        click.echo(render_json(board))
    elif fmt == "markdown":
        click.echo(render_markdown(board), nl=False)
    elif fmt == "csv":
        click.echo(render_csv(board), nl=False)
    else:
        render_table(board, output_console())
