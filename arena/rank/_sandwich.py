"""Cluster-robust (by question) sandwich intervals for weighted Bradley-Terry.

With pair wins `M_q[i, j]` of question q (reviews weighted as in the fit, a tie
half a win each way), `N_q = M_q + M_q^T`, and the fitted log-strengths theta,
`p_ij = sigmoid(theta_i - theta_j)`:

- bread: the information `H = sum_ij N_ij p_ij (1 - p_ij) (e_i - e_j)(e_i - e_j)^T / 2`
  of the full data (`N = sum_q N_q`), a graph Laplacian whose null space is
  the common shift of theta;
- meat: `B = Q / (Q - 1) sum_q U_q U_q^T` with `U_q[k] = sum_j (M_q[k, j] - N_q[k, j] p_kj)`,
  each question's score at theta (they sum to zero at the MLE); the
  questions are the independent units, so verdicts on one question may be
  correlated in any way;
- covariance of the mean-centred log-strengths `V = H^+ B H^+`
  (the pseudo-inverse fixes the shift as the fit's centring does).

Ratings are on the Elo scale (`400 / ln 10` per nat): the covariance is scaled
by its square, and anchored ratings `R_i - R_anchor` get
`V_ii + V_aa - 2 V_ia`. Intervals are `R +- z sd` with `z` the 97.5% normal
quantile. Reviewer weights are held fixed (unlike the question bootstrap,
which refits them in every round). The cost is one (Q, C, C) array and a few
C x C products: no Monte Carlo, so nothing moves with the seed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from arena.rank._aggregate import QuestionFeatures
from arena.rank._bt import ELO_PER_NAT, VIRTUAL_TIE
from arena.rank._numeric import expit

__all__ = ["Z_95", "bt_sandwich", "neighbour_shares", "question_pairs"]

FloatArray = NDArray[np.float64]


def _normal_cdf(x: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


# Cells of the question features `question_pairs` weighs at a time (8 MB as floats).
_BLOCK_CELLS = 1_000_000

# The 97.5% quantile of the standard normal (scipy.stats.norm.ppf(0.975)).
Z_95 = 1.959963984540054


def question_pairs(features: QuestionFeatures, cell_weights: FloatArray) -> FloatArray:
    """Per question, weighted pair wins (Q, C, C): `sum_r v[r, i, j] X_q[r, i, j]`.

    `cell_weights` (R, C, C) weighs every (reviewer, i, j) cell: the reviewer's
    mean-normalised weight, 0 where its battles are left out.
    """
    r, c, _ = features.shape
    cells = r * c * c
    v = np.asarray(cell_weights, dtype=np.float64).reshape(cells)
    matrix = features.matrix
    if isinstance(matrix, np.ndarray) and r == 1:
        dense = matrix * v  # one reviewer: its cells' weights, question by question
    elif isinstance(matrix, np.ndarray):
        # A block of questions at a time: the weighted cells stand as floats for those only.
        weights = v.reshape(r, c * c)
        dense = np.empty((matrix.shape[0], c * c))
        step = max(1, _BLOCK_CELLS // max(1, cells))
        for start in range(0, matrix.shape[0], step):
            block = matrix[start : start + step].reshape(-1, r, c * c)
            dense[start : start + step] = (block * weights).sum(axis=1)
    else:
        import scipy.sparse as sp

        rows = np.arange(cells)
        mapping = sp.csr_matrix((v, (rows, rows % (c * c))), shape=(cells, c * c))
        dense = np.asarray((matrix @ mapping).toarray(), dtype=np.float64)
    out: FloatArray = 0.5 * dense.reshape(-1, c, c)
    return out


def bt_sandwich(
    per_question: FloatArray,
    rating: FloatArray,
    components: Sequence[Sequence[int]],
    regularised: Sequence[int] = (),
    anchor: int | None = None,
) -> FloatArray:
    """Covariance (C, C) of the BT ratings (Elo points squared) from per-question pair wins.

    `rating` are the fitted ratings (NaN for models not fitted), `components`
    the fit's connected parts, `regularised` the parts given virtual ties (their
    bread includes the ties, as the fit did). Rows and columns of models
    outside a fitted part, and between parts, are NaN.
    """
    q, c, _ = per_question.shape
    cov = np.full((c, c), np.nan)
    if q < 2:
        return cov
    for index, part in enumerate(components):
        members = [i for i in part if not np.isnan(rating[i])]
        if len(members) < 2:
            continue
        idx = np.array(members)
        whole = len(members) == c  # every model, in order: no copy of the (Q, C, C) array
        sub = per_question if whole else per_question[:, idx][:, :, idx]
        total = sub.sum(axis=0)
        compared = (total + total.T) > 0
        theta = rating[idx] / ELO_PER_NAT
        p = expit(theta[:, None] - theta[None, :])
        bread_pairs = total + (0.5 * VIRTUAL_TIE * compared if index in regularised else 0.0)
        played = bread_pairs + bread_pairs.T
        w = played * p * (1.0 - p)
        hessian = np.diag(w.sum(axis=1)) - w
        # U_q[k] = sum_j M_q[k, j] (1 - p_kj) - M_q[j, k] p_kj, and p_kj = 1 - p_jk:
        # the rows' sums of M_q (1 - p) less its columns' sums.
        lost_share = sub * (1.0 - p)[None]
        scores = lost_share.sum(axis=2) - lost_share.sum(axis=1)  # (Q, k)
        scores -= scores.mean(axis=0, keepdims=True)  # zero at the MLE; exact with virtual ties
        meat = q / (q - 1) * scores.T @ scores
        inverse = np.linalg.pinv(hessian, hermitian=True)
        v = inverse @ meat @ inverse * ELO_PER_NAT**2
        if anchor is not None and anchor in members:
            a = members.index(anchor)
            contrast = np.eye(len(members))
            contrast[:, a] -= 1.0
            v = contrast @ v @ contrast.T
        cov[np.ix_(idx, idx)] = v
    return cov


def neighbour_shares(rating: FloatArray, cov: FloatArray, order: Sequence[int]) -> FloatArray:
    """P(upper rates above lower) under the normal approximation, for adjacent pairs of `order`."""
    out = np.full(max(len(order) - 1, 0), np.nan)
    for k, (upper, lower) in enumerate(zip(order, order[1:], strict=False)):
        var = cov[upper, upper] + cov[lower, lower] - 2.0 * cov[upper, lower]
        gap = rating[upper] - rating[lower]
        if np.isnan(var) or np.isnan(gap):
            continue
        out[k] = _normal_cdf(gap / math.sqrt(var)) if var > 0 else float(gap > 0) + 0.5 * (gap == 0)
    return out
