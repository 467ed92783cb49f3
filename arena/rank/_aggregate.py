"""Aggregate battles into per-reviewer pair tensors, for the data and for bootstraps.

Everything downstream of the encoding works on the win tensor
`X[r, i, j]`: the summed win value of contestant `i` against contestant `j` in
reviewer `r`'s reviews, both positions together (win 1, tie 1/2, loss 0). The
battles between `i` and `j` judged by `r` number `X[r,i,j] + X[r,j,i]`.
Its size depends only on the numbers of models and reviewers, so every fit
costs the same however many reviews there are.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from arena.rank._encode import ReviewSet

__all__ = ["QuestionFeatures", "bootstrap_counts", "question_features", "resample", "win_tensor"]

FloatArray = NDArray[np.float64]

# Per-question features are kept dense when the matrix has at most this many cells.
_DENSE_CELLS = 20_000_000
# Bootstrap rounds are aggregated this many cells at a time (memory bound).
_CHUNK_CELLS = 8_000_000


def _feature_index(rs: ReviewSet) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Flat index of (reviewer, winner-candidate, opponent) for position A and B."""
    c = rs.n_models
    base = rs.reviewer * c
    return (base + rs.model_a) * c + rs.model_b, (base + rs.model_b) * c + rs.model_a


def _win_values(rs: ReviewSet) -> tuple[FloatArray, FloatArray]:
    """Win value of the model in position A and in position B of each battle."""
    score = rs.score.astype(np.float64)
    return (1.0 - score) * 0.5, (1.0 + score) * 0.5


def win_tensor(rs: ReviewSet) -> FloatArray:
    """`X[r, i, j]`: win value of `i` against `j` summed over reviewer `r`'s battles."""
    r, c = rs.n_reviewers, rs.n_models
    index_a, index_b = _feature_index(rs)
    value_a, value_b = _win_values(rs)
    size = r * c * c
    flat = np.bincount(index_a, weights=value_a, minlength=size)
    flat += np.bincount(index_b, weights=value_b, minlength=size)
    return flat.reshape(r, c, c).astype(np.float64, copy=False)


@dataclass(frozen=True, eq=False)
class QuestionFeatures:
    """The win tensor of every question, as a (questions x R*C*C) matrix."""

    matrix: FloatArray | sp.csr_matrix
    shape: tuple[int, int, int]


def question_features(rs: ReviewSet) -> QuestionFeatures:
    """Per-question win tensors, dense when small enough, sparse otherwise."""
    r, c = rs.n_reviewers, rs.n_models
    n_features = r * c * c
    index_a, index_b = _feature_index(rs)
    value_a, value_b = _win_values(rs)
    q = rs.n_questions
    if q * n_features <= _DENSE_CELLS:
        size = q * n_features
        offset = rs.question * n_features
        flat = np.bincount(offset + index_a, weights=value_a, minlength=size)
        flat += np.bincount(offset + index_b, weights=value_b, minlength=size)
        return QuestionFeatures(flat.reshape(q, n_features), (r, c, c))
    rows = np.concatenate([rs.question, rs.question])
    cols = np.concatenate([index_a, index_b])
    values = np.concatenate([value_a, value_b])
    matrix = sp.coo_matrix((values, (rows, cols)), shape=(q, n_features)).tocsr()
    matrix.sum_duplicates()
    return QuestionFeatures(matrix, (r, c, c))


def bootstrap_counts(n_questions: int, rounds: int, seed: int) -> NDArray[np.float64]:
    """How often each question is drawn in each bootstrap round (rounds x questions)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_questions, size=(rounds, n_questions))
    offsets = (np.arange(rounds) * n_questions)[:, None]
    flat = np.bincount((draws + offsets).ravel(), minlength=rounds * n_questions)
    return flat.reshape(rounds, n_questions).astype(np.float64)


def resample(features: QuestionFeatures, counts: NDArray[np.float64]) -> FloatArray:
    """Win tensors of resampled data sets: `counts` (rounds x questions) -> (rounds, R, C, C)."""
    rounds = counts.shape[0]
    r, c, _ = features.shape
    n_features = r * c * c
    out = np.empty((rounds, n_features), dtype=np.float64)
    step = max(1, _CHUNK_CELLS // max(1, n_features))
    matrix = features.matrix
    for start in range(0, rounds, step):
        chunk = counts[start : start + step]
        if isinstance(matrix, np.ndarray):
            out[start : start + step] = chunk @ matrix
        else:
            out[start : start + step] = np.asarray((matrix.T @ chunk.T).T)
    return out.reshape(rounds, r, c, c)
