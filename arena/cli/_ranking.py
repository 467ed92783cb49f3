"""The ranking options `arena leaderboard` and `arena report` share (--anchor ... --no-self)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

__all__ = ["ranking_options", "reviews_options"]

# The judgment formats `--reviews-format` names (arena.formats.JUDGMENT_FORMATS).
_JUDGMENT_FORMATS = ("arena", "alpacaeval", "arena-hard", "mt-bench", "chatbot-arena", "prd")

_OPTIONS = (
    click.option(
        "--anchor",
        metavar="MODEL",
        default=None,
        help="Pin this model's Bradley-Terry rating at 1000 (default: the mean is 1000).",
    ),
    click.option(
        "--elo-orders",
        type=click.IntRange(min=0),
        default=100,
        show_default=True,
        help="Random review orders the weighted Elo is averaged over, at most (0 skips Elo; "
        "beyond 200,000 reviews fewer, orders x reviews within 20,000,000, at least 20).",
    ),
    click.option(
        "--bootstrap",
        type=click.IntRange(min=0),
        default=200,
        show_default=True,
        help="Bootstrap rounds over questions for the intervals (0: none).",
    ),
    click.option(
        "--seed",
        type=int,
        default=0,
        show_default=True,
        help="Seed of the Elo orders and the bootstrap.",
    ),
    click.option(
        "--weights",
        "weighting",
        type=click.Choice(["peerrank", "equal", "reliability"]),
        default="reliability",
        show_default=True,
        help="Reviewer weights: the PeerRank fixed point, every reviewer the same, or by "
        "judging reliability (a latent model of each reviewer's discrimination, position "
        "bias and self-preference, fitted with the ratings; own battles left out).",
    ),
    click.option(
        "--intervals",
        type=click.Choice(["sandwich", "bootstrap"]),
        default="sandwich",
        show_default=True,
        help="Bradley-Terry intervals, plain and style-controlled (and rank intervals, >next): "
        "cluster-robust sandwich by "
        "question (no Monte Carlo: the same for every --seed), or the percentiles of the "
        "question bootstrap (reviewer weights refitted per round).",
    ),
    click.option(
        "--elo-bootstrap",
        type=click.IntRange(min=0),
        default=0,
        show_default=True,
        help="Bootstrap rounds for an Elo interval (at least 100, each with 20 review orders of "
        "its own, and rounds x reviews within 2,000,000; 0: no Elo interval).",
    ),
    click.option(
        "--no-self",
        "no_self",
        is_flag=True,
        help="Leave out the reviews a reviewer made of battles it takes part in.",
    ),
    click.option(
        "--baseline",
        metavar="MODEL",
        default=None,
        help="Also report each model's win rate against MODEL (weighted and discrete, with "
        "a bootstrap interval over questions, battles and average answer length): "
        "AlpacaEval's and arena-hard's headline figure. JSON: `vs_baseline`. "
        "`--baseline per-category`: each question category against its own baseline, the "
        "model in every battle of the category (arena-hard v2.0's: gemini-2.0-flash-001 "
        "for creative writing); implies --by category.",
    ),
    click.option(
        "--length-control",
        "length_control",
        is_flag=True,
        help="With --baseline: also each model's length-controlled win rate against it (a "
        "logistic fit of each model's own battles on its strength and the tanh of the "
        "standardised length difference, predicted at the baseline's length: the same "
        "whatever other models are imported; bootstrap interval over questions). JSON: "
        "`lc_win_rate`, `lc_ci_low`, `lc_ci_high` in `vs_baseline`.",
    ),
    click.option(
        "--difficulty",
        "difficulty",
        type=click.Path(path_type=Path),
        default=None,
        metavar="FILE",
        help="With --length-control: hold each question's difficulty fixed at this table's "
        "(written by --save-difficulty from a reference set of models), and shrink each "
        "model's length slope toward the table's. JSON `length_control.difficulty` names it.",
    ),
    click.option(
        "--save-difficulty",
        "save_difficulty",
        type=click.Path(path_type=Path),
        default=None,
        metavar="FILE",
        help="With --length-control: fit the question difficulties on the models imported "
        "(the reference set, against the baseline), write them to FILE (CSV) and use them.",
    ),
    click.option(
        "--duplicates",
        type=click.Choice(["last", "first", "all", "error"]),
        default="last",
        show_default=True,
        help="A review read twice from --reviews files (same question, models in the same "
        "positions, reviewer and turn; e.g. a re-run file, or a file given twice): count the "
        "last copy read (files in the order given, a folder's by name), the first, all, "
        "or stop with exit 2. The JSON `warnings` count the repeats and name the files.",
    ),
    click.option(
        "--games",
        type=click.Choice(["separate", "merged"]),
        default="separate",
        show_default=True,
        help="MT-bench pairwise records: each of the two games (both orders) a review, or "
        "the two merged into one as FastChat's pairwise table counts them (the winner "
        "where both games name it, else a tie).",
    ),
    click.option(
        "--conventions",
        type=click.Choice(["arena", "prd"]),
        default="arena",
        show_default=True,
        help="Human-agreement conventions (--human): arena's, or the PRD paper's (labels "
        "merged by the sign of their mean, the weighted majority per ordered battle, kappa "
        "categories by position). The three options below override one each.",
    ),
    click.option(
        "--human-merge",
        type=click.Choice(["plurality", "mean-sign"]),
        default=None,
        help="Merge several human labels on a battle by plurality (a tie at the top is a "
        "tie) or by the sign of their mean (PRD). Default: from --conventions.",
    ),
    click.option(
        "--majority",
        type=click.Choice(["plurality", "ordered-mean"]),
        default=None,
        help="The reviewers' weighted majority: a weighted plurality per (question, pair), "
        "both orders pooled, or per ordered battle the sign of the weighted mean score "
        "beyond 0.01 (PRD). Default: from --conventions.",
    ),
    click.option(
        "--kappa-categories",
        type=click.Choice(["model", "position"]),
        default=None,
        help="Code the agreement kappa's categories by model order or by position (first "
        "answer wins, second, tie: PRD). Default: from --conventions.",
    ),
)

_REVIEWS_OPTIONS = (
    click.option(
        "--reviews",
        "reviews_files",
        multiple=True,
        type=click.Path(path_type=Path),
        help="Rank the judgments in this file or folder (repeatable): arena's own JSONL / "
        "JSON / CSV / Parquet (question_id, model_a, model_b, reviewer, and score -1/0/1, "
        "verdict A/B/tie or a graded p_a in [0, 1], optional weight), or, recognised by "
        "their fields, AlpacaEval annotations.json, arena-hard model_judgment files, "
        "MT-bench pairwise judgments, Chatbot Arena battles and PRD review files.",
    ),
    click.option(
        "--reviews-format",
        type=click.Choice(_JUDGMENT_FORMATS),
        default=None,
        help="Read every --reviews file as this format instead of detecting it.",
    ),
    click.option(
        "--strong-win-weight",
        type=click.FloatRange(min=0.0, min_open=True),
        default=3.0,
        show_default=True,
        help="Weight of an arena-hard strong verdict (A>>B, B>>A), as in arena-hard's own results.",
    ),
)


def ranking_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add the ranking options to a command; it receives them as `options` (LeaderboardOptions)."""

    @functools.wraps(command)
    def with_options(
        *args: Any,
        anchor: str | None,
        elo_orders: int,
        bootstrap: int,
        seed: int,
        weighting: str,
        intervals: str,
        elo_bootstrap: int,
        no_self: bool,
        baseline: str | None,
        length_control: bool,
        difficulty: Path | None,
        save_difficulty: Path | None,
        duplicates: str,
        games: str,
        conventions: str,
        human_merge: str | None,
        majority: str | None,
        kappa_categories: str | None,
        **kwargs: Any,
    ) -> Any:
        from arena.rank import AGREEMENT_CONVENTIONS
        from arena.report import LeaderboardOptions

        chosen = AGREEMENT_CONVENTIONS[conventions]

        options = LeaderboardOptions(
            anchor=anchor,
            elo_orders=elo_orders,
            bootstrap=bootstrap,
            seed=seed,
            weights=weighting,
            exclude_self=no_self,
            baseline=baseline,
            length_control=length_control,
            difficulty=difficulty,
            save_difficulty=save_difficulty,
            duplicates=duplicates,
            games=games,
            intervals=intervals,
            elo_bootstrap=elo_bootstrap,
            human_merge=human_merge or chosen["human_merge"],
            majority=majority or chosen["majority"],
            kappa_categories=kappa_categories or chosen["kappa_categories"],
        )
        return command(*args, options=options, **kwargs)

    decorated: Callable[..., Any] = with_options
    for option in reversed(_OPTIONS):
        decorated = option(decorated)
    return decorated


def reviews_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """Add `--reviews` (repeatable), `--reviews-format` and `--strong-win-weight`."""
    decorated = command
    for option in reversed(_REVIEWS_OPTIONS):
        decorated = option(decorated)
    return decorated
