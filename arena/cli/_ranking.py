"""The ranking options `arena leaderboard` and `arena report` share (--anchor ... --no-self)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import click

__all__ = ["ranking_options"]

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
        help="Random review orders the weighted Elo is averaged over (0 skips Elo).",
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
        help="Bradley-Terry intervals (and rank intervals, >next): cluster-robust sandwich by "
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
        **kwargs: Any,
    ) -> Any:
        from arena.report import LeaderboardOptions

        options = LeaderboardOptions(
            anchor=anchor,
            elo_orders=elo_orders,
            bootstrap=bootstrap,
            seed=seed,
            weights=weighting,
            exclude_self=no_self,
            intervals=intervals,
            elo_bootstrap=elo_bootstrap,
        )
        return command(*args, options=options, **kwargs)

    decorated: Callable[..., Any] = with_options
    for option in reversed(_OPTIONS):
        decorated = option(decorated)
    return decorated
