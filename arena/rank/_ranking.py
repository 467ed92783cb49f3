"""Every rating and diagnostic of one review set, computed together."""

from __future__ import annotations

import dataclasses
from concurrent.futures import Future, ThreadPoolExecutor
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
from arena.rank._elo import (
    EloOrders,
    EloResult,
    prefetch_orders,
    weighted_elo,
    weighted_elo_prefetched,
)
from arena.rank._encode import ReviewSet
from arena.rank._intervals import RankTable, rank_models
from arena.rank._peerrank import (
    PeerRankResult,
    WinCounts,
    equal_win_rates,
    peerrank,
    peerrank_batch,
    weighted_win_rates,
    win_counts,
)
from arena.rank._reliability import (
    ReliabilityFit,
    fit_reliability,
    fit_reliability_batch,
    reliability_features,
    resample_reliability,
    trusted_count,
    trusted_reviews,
    trusted_tensor,
)
from arena.rank._sandwich import Z_95, bt_sandwich, question_pairs
from arena.rank._self_judged import keep_sole_self_judged
from arena.rank._style import StyleFit, fit_style_control, length_bias, significant_features

__all__ = [
    "ELO_BOOTSTRAP_ORDERS",
    "ELO_BOOTSTRAP_STEPS",
    "ELO_ORDER_SEED",
    "ELO_ORDER_STEPS",
    "INTERVALS",
    "MIN_BATTLES",
    "MIN_ELO_ORDERS",
    "MIN_ELO_ROUNDS",
    "MIN_QUESTIONS",
    "WEIGHTINGS",
    "RankOptions",
    "Ranking",
    "bradley_terry",
    "elo_order_count",
    "rank_reviews",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# How reviewer weights are set: the PeerRank fixed point, all equal, or by
# judging reliability (arena.rank._reliability).
WEIGHTINGS = ("peerrank", "equal", "reliability")
# How the Bradley-Terry intervals are made: cluster-robust sandwich by question
# (arena.rank._sandwich), or the percentiles of the question bootstrap.
INTERVALS = ("sandwich", "bootstrap")
# A model's intervals rest on too little data below these (flagged, never hidden).
MIN_QUESTIONS = 5
MIN_BATTLES = 10
# The Elo interval's work cap (bootstrap rounds x reviews), and its fewest rounds.
ELO_BOOTSTRAP_STEPS = 2_000_000
# Random orders averaged in each Elo bootstrap round, and weight passes (at most).
ELO_BOOTSTRAP_ORDERS = 20
ELO_BOOTSTRAP_PASSES = 3
MIN_ELO_ROUNDS = 100
# The Elo point's review orders: the first `elo_orders` orders of the
# counter-based shuffle keyed by ELO_ORDER_SEED (arena.rank._elo), whatever
# `seed` (which draws the bootstrap): the same reviews always give the same Elo.
ELO_ORDER_SEED = 0
# The Elo point's work cap: orders x reviews stays within ELO_ORDER_STEPS, with
# at least MIN_ELO_ORDERS orders (logs of up to 200,000 reviews keep all 100).
# Each order's own spread is about 45 points whatever the log's size, so the
# order error (reported per model) is about 4.5 points at 100 orders and 10 at 20;
# no affordable count brings it under half the printed rounding (0.5 points,
# some 8,000 orders), so the count is set by the work it costs (docs/scale.md).
ELO_ORDER_STEPS = 20_000_000
MIN_ELO_ORDERS = 20


def elo_order_count(requested: int, reviews: int) -> int:
    """The Elo orders a log of `reviews` counted battles gets for `requested` (--elo-orders):
    all of them while orders x reviews stays within ELO_ORDER_STEPS, else as many as
    fit, but at least MIN_ELO_ORDERS (and never more than requested)."""
    if requested <= 0 or reviews <= 0:
        return requested
    return min(requested, max(MIN_ELO_ORDERS, ELO_ORDER_STEPS // reviews))


@dataclass(frozen=True)
class RankOptions:
    """Knobs of `rank_reviews`; the defaults are the documented ones.

    `weights`: "peerrank" (the fixed point) or "equal" (every reviewer the
    same) or "reliability" (arena.rank._reliability). `elo_orders`: the Elo
    point's review orders, at most (`elo_order_count`: fewer on logs beyond
    ELO_ORDER_STEPS / elo_orders reviews). `elo_bootstrap`:
    bootstrap rounds for the Elo interval (each the mean of up to
    ELO_BOOTSTRAP_ORDERS random orders of its own; capped by
    ELO_BOOTSTRAP_STEPS; under MIN_ELO_ROUNDS: none; default 0, none).
    `intervals`: "sandwich" (cluster-robust by question; no Monte Carlo) or
    "bootstrap" (percentiles of the question bootstrap) for the
    Bradley-Terry intervals, rank intervals and neighbour shares.
    `style`: fit style control when the reviews carry answer lengths.
    `balanced`: win rates (and the PeerRank scores the weights come from) are
    the mean over opponents of the per-pair rates, pairs never compared
    imputed from Bradley-Terry: for sampled designs, where whom a model met
    is not balanced. Identical to the plain rates on a full design.
    """

    elo_orders: int = 100
    bootstrap: int = 200
    seed: int = 0
    anchor: str | None = None
    tol: float = 1e-9
    max_iter: int = 100
    elo: bool = True
    weights: str = "reliability"
    elo_bootstrap: int = 0
    style: bool = True
    balanced: bool = False
    intervals: str = "sandwich"


@dataclass(frozen=True, eq=False)
class Ranking:
    """Ratings, reviewer weights, intervals, sample sizes and diagnostics of one review set.

    Interval arrays are (2, C): 2.5 and 97.5 percentiles of the question
    bootstrap, NaN where there is none. `style` is None when style control
    is unavailable; `style_note` then says why.
    """

    reviews: ReviewSet
    tallies: Tallies
    counts: WinCounts
    peerrank: PeerRankResult
    elo: EloResult | None
    bt: BTFit
    diagnostics: list[ReviewerDiagnostics]
    pairwise: FloatArray  # (C, C) row beats column, NaN where never compared
    fleiss_kappa: float
    ranks: RankTable
    win_rate_ci: FloatArray
    weighted_win_rate_ci: FloatArray
    elo_ci: FloatArray
    elo_ci_rounds: int  # bootstrap rounds behind elo_ci (0: none)
    questions: IntArray  # (C,) questions in which each model has a counted battle
    pair_battles: IntArray  # (C, C) counted battles between i and j, both orders
    thin: NDArray[np.bool_]  # (C,) fewer than MIN_QUESTIONS questions or MIN_BATTLES battles
    weighting: str = "peerrank"
    style: StyleFit | None = None
    style_ranks: RankTable | None = None
    style_note: str | None = None
    length_bias: FloatArray | None = None  # (R,) share of decisive verdicts won by the longer
    # The reliability model (`weights="reliability"`): per-reviewer discrimination,
    # position bias, self-preference and accuracy behind the weights; else None.
    reliability: ReliabilityFit | None = None
    # How the BT intervals were made ("sandwich" or "bootstrap"; "" without any),
    # and with the sandwich, the ratings' covariance (C, C) in Elo points squared.
    intervals: str = ""
    bt_covariance: FloatArray | None = None
    # With style control: the plain Bradley-Terry ranks at the style fit's reviewer
    # weights (C,), so a rank change splits into the weight refit (raw -> these)
    # and the style effect (these -> the controlled ranks).
    style_weight_ranks: RankTable | None = None
    # Rounds of the question bootstrap behind the win rates' intervals (0: none).
    bootstrap_rounds: int = 0
    # Which ratings the default ranks follow: "bt_style" (the style-controlled
    # ratings) where a style coefficient is significant (`significant_features`),
    # as LMArena ranks style-controlled by default; else "bt". `ranks` stays raw BT.
    order_by: str = "bt"

    @property
    def default_ranks(self) -> RankTable:
        """The ranks the leaderboard orders by: the style-controlled ones when
        `order_by` is "bt_style", else the raw Bradley-Terry ranks."""
        if self.order_by == "bt_style" and self.style_ranks is not None:
            return self.style_ranks
        return self.ranks


def _percentiles(samples: FloatArray | None, columns: int) -> FloatArray:
    out: FloatArray = np.full((2, columns), np.nan)
    if samples is None or samples.shape[0] == 0:
        return out
    # A model without a battle has no score in any round: its interval stays NaN
    # (numpy would warn "All-NaN slice" on stderr for that column).
    seen = ~np.isnan(samples).all(axis=0)
    if seen.any():
        with np.errstate(invalid="ignore"):
            out[:, seen] = np.nanpercentile(samples[:, seen], [2.5, 97.5], axis=0)
    return out


@dataclass(frozen=True, eq=False)
class _Bootstrap:
    counts: FloatArray  # (rounds, questions)
    tensors: FloatArray  # (rounds, R, C, C)
    weights: FloatArray  # (rounds, R)
    weighted_scores: FloatArray  # (rounds, C)
    # (rounds, R, C, C) the win tensors the weighted ratings use: `tensors`, or
    # with reliability weights, `tensors` without the reviewers' own battles.
    trusted: FloatArray | None = None


def _bootstrap(
    tallies: Tallies,
    rounds: int,
    seed: int,
    weighted: bool,
    tol: float,
    max_iter: int,
    balanced: bool = False,
    reliability: ReliabilityFit | None = None,
) -> _Bootstrap | None:
    rs = tallies.reviews
    if rounds <= 0 or rs.n_questions < 2:
        return None
    if tallies.features is None:
        raise ValueError("a bootstrap needs tallies with per-question features")
    counts = bootstrap_counts(rs.n_questions, rounds, seed)
    tensors = resample(tallies.features, counts)
    if reliability is not None and rs.n_reviewers == 1:
        # One reviewer: its weight is 1 whatever the draw (nothing to refit).
        weights = np.repeat(reliability.weights[None, :], rounds, axis=0)
        trusted = trusted_tensor(tensors, rs.reviewer_as_contestant)
        scores = weighted_win_rates(trusted, weights, balanced=balanced)
        return _Bootstrap(counts, tensors, weights, scores, trusted)
    if reliability is not None:
        # Every round refits the reliability model, warm-started at the full data's.
        played, won = resample_reliability(reliability_features(rs), counts)
        refits = fit_reliability_batch(
            played, won, rs.reviewer_as_contestant, start=reliability, tol=tol
        )
        trusted = trusted_tensor(tensors, rs.reviewer_as_contestant)
        scores = weighted_win_rates(trusted, refits.weights, balanced=balanced)
        return _Bootstrap(counts, tensors, refits.weights, scores, trusted)
    if weighted:
        batch = peerrank_batch(
            tensors, rs.reviewer_as_contestant, tol=tol, max_iter=max_iter, balanced=balanced
        )
        return _Bootstrap(counts, tensors, batch.weights, batch.scores)
    equal = np.full((rounds, rs.n_reviewers), 1.0 / max(rs.n_reviewers, 1))
    return _Bootstrap(counts, tensors, equal, equal_win_rates(tensors, balanced=balanced))


def bradley_terry(
    tallies: Tallies,
    weights: FloatArray,
    *,
    anchor: str | None = None,
    bootstrap: int = 200,
    seed: int = 0,
    tol: float = 1e-9,
    max_iter: int = 100,
    weighted: bool = True,
) -> BTFit:
    """Weighted BT ratings with a bootstrap over questions (weights refitted per round).

    Each bootstrap round draws the questions with replacement, recomputes the
    PeerRank weights on the draw (unless `weighted=False`: equal weights), and
    refits; the interval is the 2.5 / 97.5 percentiles. Needs `tallies` with
    per-question features for a bootstrap, and at least two questions.
    """
    boot = _bootstrap(tallies, bootstrap, seed, weighted, tol, max_iter)
    return _fit_bt(tallies, weights, anchor, boot)


def _fit_bt(
    tallies: Tallies,
    weights: FloatArray,
    anchor: str | None,
    boot: _Bootstrap | None,
    win: FloatArray | None = None,
) -> BTFit:
    """BT on `win` (default: the tallies' win tensor) and on the bootstrap's tensors."""
    rs = tallies.reviews
    if anchor is not None and anchor not in rs.contestants:
        raise ValueError(f"anchor model {anchor!r} is not a contestant")
    anchor_index = None if anchor is None else rs.contestants.index(anchor)
    tensor = tallies.win if win is None else win
    pairs = pair_matrix(tensor[None], weights[None] * rs.n_reviewers)[0]
    boot_pairs = None
    if boot is not None:
        boot_tensors = boot.tensors if boot.trusted is None else boot.trusted
        boot_pairs = pair_matrix(boot_tensors, boot.weights * rs.n_reviewers)
    return fit_bradley_terry(pairs, anchor=anchor_index, bootstrap_pairs=boot_pairs)


def _resampled(rs: ReviewSet, counts: FloatArray) -> ReviewSet:
    """The review set drawn by one bootstrap round (each question `counts[q]` times)."""
    repeat = counts.astype(np.int64)[rs.question]
    rows = np.repeat(np.arange(rs.n_battles), repeat)
    return dataclasses.replace(
        rs,
        question=rs.question[rows],
        model_a=rs.model_a[rows],
        model_b=rs.model_b[rows],
        reviewer=rs.reviewer[rows],
        score=rs.score[rows],
        style_a=None,
        style_b=None,
        p_a=None,  # online Elo reads the plain verdicts only
        weight=None,
    )


def _reads_rated(rs: ReviewSet, n_rated: int, opts: RankOptions) -> bool:
    """Whether anything besides Elo's point ratings reads the rated reviews themselves:
    style control (answers' style in the reviews) or Elo's interval (few enough
    battles for MIN_ELO_ROUNDS bootstrap rounds, see `_elo_interval`)."""
    style = opts.style and rs.style_a is not None
    interval = (
        opts.elo
        and opts.elo_bootstrap > 0
        and opts.bootstrap > 0
        and ELO_BOOTSTRAP_STEPS // max(1, n_rated) >= MIN_ELO_ROUNDS
    )
    return style or interval


def _elo_interval(
    rs: ReviewSet,
    boot: _Bootstrap | None,
    opts: RankOptions,
    passes: int,
    reliable: bool = False,
) -> tuple[FloatArray, int]:
    """Elo percentiles over question-bootstrap rounds, and the number of rounds used.

    Online Elo is sequential: each round costs one step per review and pass,
    whatever the number of orders (they run side by side). Each round runs at
    most ELO_BOOTSTRAP_PASSES weight passes (the weights barely move after
    that) and ELO_BOOTSTRAP_ORDERS orders of its own, so the interval holds
    the order noise too; rounds are capped so that rounds x reviews stays
    within ELO_BOOTSTRAP_STEPS; under MIN_ELO_ROUNDS rounds (too few for
    percentiles that stay put) there is no interval. With reliability weights
    (`reliable`), `rs` holds the trusted reviews and each round uses its own
    fitted weights, in one pass.
    """
    none = np.full((2, rs.n_models), np.nan)
    if boot is None or opts.elo_bootstrap <= 0 or not opts.elo or rs.n_battles == 0:
        return none, 0
    affordable = ELO_BOOTSTRAP_STEPS // rs.n_battles
    rounds = min(opts.elo_bootstrap, boot.counts.shape[0], affordable)
    if rounds < MIN_ELO_ROUNDS:
        return none, 0
    samples = np.empty((rounds, rs.n_models))
    for b in range(rounds):
        drawn = _resampled(rs, boot.counts[b])
        result = weighted_elo(
            drawn,
            orders=min(opts.elo_orders, ELO_BOOTSTRAP_ORDERS),
            seed=ELO_ORDER_SEED + 1 + b,
            max_passes=1 if reliable else min(passes, ELO_BOOTSTRAP_PASSES),
            weights=boot.weights[b] if reliable else None,
        )
        samples[b] = result.rating
    return _percentiles(samples, rs.n_models), rounds


def _style(
    rs: ReviewSet,
    boot: _Bootstrap | None,
    opts: RankOptions,
    weighted: bool,
    fixed: FloatArray | None = None,
) -> tuple[StyleFit | None, str | None]:
    if not opts.style:
        return None, "style control was turned off"
    if rs.style_a is None:
        return None, "the reviews carry no answer text or lengths"
    if rs.n_battles == 0:
        return None, "there are no counted battles"
    if rs.style_missing:
        return None, f"{rs.style_missing} counted review(s) lack the answers' text or lengths"
    anchor = None if opts.anchor is None else rs.contestants.index(opts.anchor)
    # Sandwich intervals need no bootstrap fits: only the full data's is made.
    sandwich = opts.intervals == "sandwich" and rs.n_questions >= 2
    fit = fit_style_control(
        rs,
        bootstrap_counts=None if boot is None or sandwich else boot.counts,
        anchor=anchor,
        weighted=weighted,
        tol=opts.tol,
        max_iter=opts.max_iter,
        weights=None if fixed is None else fixed[:1] if sandwich else fixed,
        sandwich=sandwich,
    )
    if not fit.features:
        return None, "the answers do not differ in length or formatting"
    return fit, None


def _sandwich(
    tallies: Tallies, bt: BTFit, weights: FloatArray, reliable: bool, anchor: str | None
) -> tuple[BTFit, FloatArray | None]:
    """`bt` with cluster-robust sandwich intervals (and their covariance), when it has any.

    Reviews are weighted as in the fit (mean-normalised weights; with
    reliability weights, a reviewer's own battles left out). Open sides (a
    model that lost or won nothing) stay open, as with the bootstrap.
    """
    rs = tallies.reviews
    if tallies.features is None or rs.n_questions < 2:
        return bt, None
    r, c = rs.n_reviewers, rs.n_models
    cell = np.broadcast_to((weights * r)[:, None, None], (r, c, c)).copy()
    if reliable:
        cell = trusted_tensor(cell, rs.reviewer_as_contestant)
    per_question = question_pairs(tallies.features, cell)
    anchor_index = None if anchor is None else rs.contestants.index(anchor)
    cov = bt_sandwich(per_question, bt.rating, bt.components, bt.regularised, anchor_index)
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    low = bt.rating - Z_95 * sd
    high = bt.rating + Z_95 * sd
    pairs = per_question.sum(axis=0)
    won, lost = pairs.sum(axis=1), pairs.sum(axis=0)
    fitted = ~np.isnan(bt.rating) & ~np.isnan(sd)
    high[fitted & (lost <= 0) & (won > 0)] = np.inf
    low[fitted & (won <= 0) & (lost > 0)] = -np.inf
    return dataclasses.replace(bt, ci_low=low, ci_high=high), cov


def _reliability_peerrank(
    tallies: Tallies, trusted: FloatArray, fit: ReliabilityFit, balanced: bool
) -> PeerRankResult:
    """Win rates with the reliability weights in place of the PeerRank fixed point."""
    plain = equal_win_rates(tallies.win[None], balanced=balanced)[0]
    weighted = weighted_win_rates(trusted[None], fit.weights[None], balanced=balanced)[0]
    return PeerRankResult(
        win_rate=plain,
        weighted_win_rate=weighted,
        weights=fit.weights,
        iterations=fit.iterations,
        converged=fit.converged,
    )


def rank_reviews(rs: ReviewSet, options: RankOptions | None = None) -> Ranking:
    """Win rates, PeerRank, weighted Elo, Bradley-Terry, style control and diagnostics of `rs`."""
    opts = options or RankOptions()
    if opts.weights not in WEIGHTINGS:
        raise ValueError(f"weights must be one of {', '.join(WEIGHTINGS)}, not {opts.weights!r}")
    if opts.anchor is not None and opts.anchor not in rs.contestants:
        raise ValueError(f"anchor model {opts.anchor!r} is not a contestant")
    if opts.intervals not in INTERVALS:
        raise ValueError(f"intervals must be one of {', '.join(INTERVALS)}, not {opts.intervals!r}")
    weighted = opts.weights == "peerrank"
    reliable = opts.weights == "reliability"
    if reliable:  # own battles that are a model's only evidence stay (sole_self_judged)
        rs, _ = keep_sole_self_judged(rs)
    side = ThreadPoolExecutor(2, thread_name_prefix="arena-rank")

    def rated_and_orders() -> tuple[ReviewSet, bool, Future[EloOrders] | None, int]:
        # With reliability weights, ratings leave out the reviewers' own battles: a copy
        # of every battle's arrays, made on another core while the tallies are counted,
        # when style control or Elo's interval will read them; else Elo alone rates them,
        # told to leave those out (`leave_out`), and no copy or mask is kept (a big
        # log's history snapshot).
        n_rated = trusted_count(rs) if reliable else rs.n_battles
        leave_out = n_rated < rs.n_battles
        rated = rs
        if leave_out and _reads_rated(rs, n_rated, opts):
            rated, leave_out = trusted_reviews(rs), False
        # The reviews Elo rates are packed on another core while the rest is fitted.
        orders = elo_order_count(opts.elo_orders, n_rated)
        perms = None
        if opts.elo and n_rated and orders > 0:
            perms = prefetch_orders(rated, n_rated, orders, ELO_ORDER_SEED, leave_out)
        return rated, leave_out, perms, orders

    rated_job = side.submit(rated_and_orders)
    sandwich = opts.intervals == "sandwich"
    tallies = tally_reviews(rs, per_question=opts.bootstrap > 0 or sandwich)
    reliability = None
    win = None
    if reliable:
        reliability = fit_reliability(rs, count=tallies.count, tol=min(opts.tol, 1e-8))
        win = trusted_tensor(tallies.win, rs.reviewer_as_contestant)
        pr = _reliability_peerrank(tallies, win, reliability, opts.balanced)
    else:
        pr = peerrank(
            tallies,
            tol=opts.tol,
            max_iter=opts.max_iter,
            weighted=weighted,
            balanced=opts.balanced,
        )
    # Weighted Elo needs only these weights, and with sandwich intervals so does style
    # control: both run in threads while the bootstrap works (NumPy and the compiled Elo
    # kernel let go of the interpreter).
    passes = 10 if weighted else 1
    rated, leave_out, perms, elo_orders = rated_job.result()
    elo_job: Future[EloResult] | None = None
    if opts.elo:
        elo_job = side.submit(
            weighted_elo_prefetched,
            rated,
            perms,
            orders=elo_orders,
            seed=ELO_ORDER_SEED,
            max_passes=passes,
            weights=pr.weights if reliable else None,
            trusted_only=leave_out,
        )
    style_job: Future[tuple[StyleFit | None, str | None]] | None = None
    if opts.intervals == "sandwich" and rated.n_questions >= 2:
        early = pr.weights[None] if reliable else None
        style_job = side.submit(_style, rated, None, opts, weighted, early)
    side.shutdown(wait=False)  # the threads end with their tasks
    boot = _bootstrap(
        tallies,
        opts.bootstrap,
        opts.seed,
        weighted,
        opts.tol,
        opts.max_iter,
        opts.balanced,
        reliability=reliability,
    )
    # With sandwich intervals the BT ratings are fitted once: no round's ratings are shown.
    bt = _fit_bt(tallies, pr.weights, opts.anchor, None if sandwich else boot, win)
    covariance = None
    if sandwich:
        bt, covariance = _sandwich(tallies, bt, pr.weights, reliable, opts.anchor)
    method = "sandwich" if covariance is not None else "bootstrap" if bt.bootstrap_rounds else ""
    elo = None if elo_job is None else elo_job.result()
    counts = win_counts(tallies)
    questions = tallies.questions_per_model
    ordered = tallies.count.sum(axis=(0, 3))
    pair_battles = np.rint(ordered + ordered.T).astype(np.int64)
    c = rs.n_models
    plain_rates = None
    if boot is not None:
        plain_rates = (
            equal_win_rates(boot.tensors, balanced=opts.balanced)
            if weighted or reliable
            else boot.weighted_scores
        )
    elo_ci, elo_rounds = (
        _elo_interval(rated, boot, opts, passes, reliable)
        if not leave_out
        else (np.full((2, c), np.nan), 0)  # too many battles for one (_reads_rated)
    )
    fixed = None
    if reliable:
        fixed = pr.weights[None] if boot is None else np.vstack([pr.weights[None], boot.weights])
    style, note = (
        style_job.result() if style_job is not None else _style(rated, boot, opts, weighted, fixed)
    )
    style_ranks = None
    refit_ranks = None
    if style is not None:
        refit = _fit_bt(tallies, style.weights, opts.anchor, None, win)
        refit_ranks = rank_models(
            refit.rating,
            refit.ci_low,
            refit.ci_high,
            refit.components,
            tiebreak=pr.weighted_win_rate,
            names=rs.contestants,
        )
        style_ranks = rank_models(
            style.rating,
            style.ci_low,
            style.ci_high,
            style.components,
            style.boot_rating,
            tiebreak=pr.weighted_win_rate,
            names=rs.contestants,
            covariance=style.covariance,
        )
    return Ranking(
        reviews=rs,
        tallies=tallies,
        counts=counts,
        peerrank=pr,
        elo=elo,
        bt=bt,
        diagnostics=reviewer_diagnostics(tallies, pr.weights),
        pairwise=pairwise_win_rates(tallies.win),
        fleiss_kappa=reviewer_fleiss_kappa(tallies),
        ranks=rank_models(
            bt.rating,
            bt.ci_low,
            bt.ci_high,
            bt.components,
            bt.boot_rating,
            tiebreak=pr.weighted_win_rate,
            names=rs.contestants,
            covariance=covariance,
        ),
        win_rate_ci=_percentiles(plain_rates, c),
        weighted_win_rate_ci=_percentiles(None if boot is None else boot.weighted_scores, c),
        elo_ci=elo_ci,
        elo_ci_rounds=elo_rounds,
        questions=questions,
        pair_battles=pair_battles,
        thin=(questions < MIN_QUESTIONS) | (counts.battles < MIN_BATTLES),
        weighting=opts.weights,
        style=style,
        style_ranks=style_ranks,
        style_note=note,
        length_bias=length_bias(rs),
        reliability=reliability,
        intervals=method,
        bt_covariance=covariance,
        style_weight_ranks=refit_ranks,
        bootstrap_rounds=0 if boot is None else int(boot.counts.shape[0]),
        order_by="bt_style" if style is not None and significant_features(style) else "bt",
    )
