"""Every rating and diagnostic of one review set, computed together."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from arena.rank._aggregate import Tallies, bootstrap_counts, resample, tally_reviews
from arena.rank._bt import BTFit, fit_bradley_terry, pair_matrix
from arena.rank._diagnostics import (
    ReviewerDiagnostics,
    pairwise_win_rates,
    reviewer_diagnostics,
    reviewer_fleiss_kappa,
)
from arena.rank._elo import EloResult, weighted_elo
from arena.rank._encode import ReviewSet
from arena.rank._peerrank import PeerRankResult, WinCounts, peerrank, peerrank_batch, win_counts

__all__ = ["RankOptions", "Ranking", "bradley_terry", "rank_reviews"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class RankOptions:
    """Knobs of `rank_reviews`; the defaults are the documented ones."""

    elo_orders: int = 100
    bootstrap: int = 200
    seed: int = 0
    anchor: str | None = None
    tol: float = 1e-9
    max_iter: int = 100
    elo: bool = True


@dataclass(frozen=True, eq=False)
class Ranking:
    """Ratings, reviewer weights and diagnostics of one review set."""

    reviews: ReviewSet
    tallies: Tallies
    counts: WinCounts
    peerrank: PeerRankResult
    elo: EloResult | None
    bt: BTFit
    diagnostics: list[ReviewerDiagnostics]
    pairwise: FloatArray  # (C, C) row beats column, NaN where never compared
    fleiss_kappa: float


def bradley_terry(
    tallies: Tallies,
    weights: FloatArray,
    *,
    anchor: str | None = None,
    bootstrap: int = 200,
    seed: int = 0,
    tol: float = 1e-9,
    max_iter: int = 100,
) -> BTFit:
    """Weighted BT ratings with a bootstrap over questions (weights refitted per round).

    Each bootstrap round draws the questions with replacement, recomputes the
    PeerRank weights on the draw, and refits; the interval is the 2.5 / 97.5
    percentiles. Needs `tallies` with per-question features for a bootstrap.
    """
    rs = tallies.reviews
    if anchor is not None and anchor not in rs.contestants:
        raise ValueError(f"anchor model {anchor!r} is not a contestant")
    anchor_index = None if anchor is None else rs.contestants.index(anchor)
    pairs = pair_matrix(tallies.win[None], weights[None] * rs.n_reviewers)[0]
    boot_pairs = None
    if bootstrap > 0 and rs.n_questions > 0:
        if tallies.features is None:
            raise ValueError("a bootstrap needs tallies with per-question features")
        counts = bootstrap_counts(rs.n_questions, bootstrap, seed)
        tensors = resample(tallies.features, counts)
        batch = peerrank_batch(tensors, rs.reviewer_as_contestant, tol=tol, max_iter=max_iter)
        boot_pairs = pair_matrix(tensors, batch.weights * rs.n_reviewers)
    return fit_bradley_terry(pairs, anchor=anchor_index, bootstrap_pairs=boot_pairs)


def rank_reviews(rs: ReviewSet, options: RankOptions | None = None) -> Ranking:
    """Win rates, PeerRank, weighted Elo, Bradley-Terry and diagnostics of `rs`."""
    opts = options or RankOptions()
    tallies = tally_reviews(rs, per_question=opts.bootstrap > 0)
    pr = peerrank(tallies, tol=opts.tol, max_iter=opts.max_iter)
    bt = bradley_terry(
        tallies,
        pr.weights,
        anchor=opts.anchor,
        bootstrap=opts.bootstrap,
        seed=opts.seed,
        tol=opts.tol,
        max_iter=opts.max_iter,
    )
    elo = weighted_elo(rs, orders=opts.elo_orders, seed=opts.seed) if opts.elo else None
    return Ranking(
        reviews=rs,
        tallies=tallies,
        counts=win_counts(tallies),
        peerrank=pr,
        elo=elo,
        bt=bt,
        diagnostics=reviewer_diagnostics(tallies, pr.weights),
        pairwise=pairwise_win_rates(tallies.win),
        fleiss_kappa=reviewer_fleiss_kappa(tallies),
    )
