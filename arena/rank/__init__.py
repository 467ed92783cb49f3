"""Ranking math: PeerRank, weighted Elo, Bradley-Terry, judge diagnostics.

Pure, synchronous functions over polars / numpy data: no I/O, no asyncio.
Encode a reviews frame once with `encode_reviews`, then call `rank_reviews`
(everything: ratings with bootstrap intervals, rank intervals, PeerRank
weights with convergence info, style control, diagnostics) or the individual
functions. See docs/ranking.md.
"""

from arena.rank._aggregate import (
    A_WINS,
    B_WINS,
    TIE,
    QuestionFeatures,
    Tallies,
    bootstrap_counts,
    resample,
    tally_reviews,
)
from arena.rank._agreement import (
    Agreement,
    AgreementScore,
    RankCorrelation,
    human_agreement,
    kendall_tau,
    rank_correlation,
    spearman_rho,
)
from arena.rank._baseline import BaselineRate, baseline_win_rates
from arena.rank._bt import (
    ELO_PER_NAT,
    BTFit,
    comparison_components,
    fit_bradley_terry,
    fit_log_strengths,
    pair_matrix,
)
from arena.rank._diagnostics import (
    ReviewerDiagnostics,
    fleiss_kappa,
    pairwise_win_rates,
    reviewer_diagnostics,
    reviewer_fleiss_kappa,
)
from arena.rank._elo import EloResult, weighted_elo
from arena.rank._encode import REQUIRED_COLUMNS, STYLE_FEATURES, ReviewSet, encode_reviews
from arena.rank._intervals import RANK_TIE_TOLERANCE, NeighbourTest, RankTable, rank_models
from arena.rank._peerrank import (
    FixedPoint,
    PeerRankBatch,
    PeerRankResult,
    WinCounts,
    equal_win_rates,
    peerrank,
    peerrank_batch,
    solve_weights,
    weighted_win_rates,
    weights_from_scores,
    win_counts,
)
from arena.rank._ranking import (
    ELO_BOOTSTRAP_ORDERS,
    ELO_BOOTSTRAP_STEPS,
    ELO_ORDER_SEED,
    INTERVALS,
    MIN_BATTLES,
    MIN_ELO_ROUNDS,
    MIN_QUESTIONS,
    WEIGHTINGS,
    Ranking,
    RankOptions,
    bradley_terry,
    rank_reviews,
)
from arena.rank._reliability import (
    ReliabilityBatch,
    ReliabilityFit,
    fit_reliability,
    fit_reliability_batch,
    reliability_weights,
    trusted_reviews,
    trusted_tensor,
)
from arena.rank._sandwich import Z_95, bt_sandwich, question_pairs
from arena.rank._style import StyleFit, answer_style, fit_style_control, length_bias

__all__ = [
    "BaselineRate",
    "baseline_win_rates",
    "ELO_ORDER_SEED",
    "INTERVALS",
    "Z_95",
    "bt_sandwich",
    "question_pairs",
    "ReliabilityBatch",
    "ReliabilityFit",
    "fit_reliability",
    "fit_reliability_batch",
    "reliability_weights",
    "trusted_reviews",
    "trusted_tensor",
    "weighted_win_rates",
    "ELO_BOOTSTRAP_ORDERS",
    "ELO_BOOTSTRAP_STEPS",
    "MIN_ELO_ROUNDS",
    "FixedPoint",
    "MIN_BATTLES",
    "MIN_QUESTIONS",
    "NeighbourTest",
    "RANK_TIE_TOLERANCE",
    "RankTable",
    "STYLE_FEATURES",
    "StyleFit",
    "WEIGHTINGS",
    "answer_style",
    "equal_win_rates",
    "fit_style_control",
    "length_bias",
    "rank_models",
    "solve_weights",
    "A_WINS",
    "B_WINS",
    "TIE",
    "QuestionFeatures",
    "Tallies",
    "ELO_PER_NAT",
    "REQUIRED_COLUMNS",
    "Agreement",
    "AgreementScore",
    "BTFit",
    "EloResult",
    "PeerRankBatch",
    "PeerRankResult",
    "RankCorrelation",
    "RankOptions",
    "Ranking",
    "ReviewSet",
    "ReviewerDiagnostics",
    "WinCounts",
    "bootstrap_counts",
    "bradley_terry",
    "comparison_components",
    "encode_reviews",
    "fit_bradley_terry",
    "fit_log_strengths",
    "fleiss_kappa",
    "human_agreement",
    "kendall_tau",
    "pair_matrix",
    "pairwise_win_rates",
    "peerrank",
    "peerrank_batch",
    "rank_correlation",
    "rank_reviews",
    "resample",
    "spearman_rho",
    "reviewer_diagnostics",
    "reviewer_fleiss_kappa",
    "weighted_elo",
    "weights_from_scores",
    "win_counts",
    "tally_reviews",
]
