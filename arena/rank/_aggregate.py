"""One pass over the battles: every count the ratings and diagnostics need.

The reviews are counted into a dense tensor `count[v, q, r, a, b]` (verdict,
question, reviewer, model in position A, model in position B) with a single
`np.bincount`, a block of questions at a time when the tensor would be large.
Everything downstream is derived from these counts, whose size depends on the
numbers of models and reviewers but not on the number of reviews; in
particular the win tensor `X[r, i, j]`, the summed win value of `i` against
`j` in reviewer `r`'s battles, both positions together (win 1, tie 1/2), so
that the battles between `i` and `j` judged by `r` number `X[r,i,j] + X[r,j,i]`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from arena.rank._encode import ReviewSet

__all__ = [
    "A_WINS",
    "B_WINS",
    "TIE",
    "QuestionFeatures",
    "Tallies",
    "bootstrap_counts",
    "resample",
    "tally_reviews",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# Verdict categories: the PRD score (-1 A wins, 0 tie, +1 B wins) modulo 3.
TIE, B_WINS, A_WINS = 0, 1, 2

_CATEGORY = np.array([A_WINS, TIE, B_WINS], dtype=np.int64)
# Cells of the dense count tensor of one block of questions.
_BLOCK_CELLS = 8_000_000
# Per-question features stay a dense matrix up to this many cells.
_DENSE_FEATURES = 20_000_000
# Bootstrap rounds are aggregated this many cells at a time (memory bound).
_CHUNK_CELLS = 8_000_000


@dataclass(frozen=True, eq=False)
class QuestionFeatures:
    """Twice the win tensor of every question, as a (questions x R*C*C) integer matrix.

    Doubling keeps ties (half a win) integral, so resampling sums are exact.
    """

    matrix: NDArray[np.int32] | sp.csr_matrix
    shape: tuple[int, int, int]


@dataclass(frozen=True, eq=False)
class Tallies:
    """Sufficient statistics of a review set (see the module docstring)."""

    reviews: ReviewSet
    # count[r, a, b, v]: reviews by r of a (position A) vs b (position B) with verdict v.
    count: FloatArray
    # win[r, i, j]: win value of i against j in r's battles, both positions.
    win: FloatArray
    features: QuestionFeatures | None
    # Per reviewer: (question, pair) judged in both orders, and those whose orders agree.
    swap_judged: FloatArray
    swap_agreed: FloatArray
    # Fleiss' kappa between reviewers over battles (question, a, b): the sum of
    # per-battle agreement, the number of battles with 2+ verdicts, and the
    # verdict totals of those battles.
    fleiss_agreement: float
    fleiss_subjects: int
    fleiss_totals: FloatArray


def _win_from_counts(a_wins: FloatArray, b_wins: FloatArray, ties: FloatArray) -> FloatArray:
    """Win tensor(s) (..., C, C) from verdict counts of the same shape."""
    half_tie = 0.5 * ties
    out: FloatArray = a_wins + half_tie + np.swapaxes(b_wins + half_tie, -1, -2)
    return out


class _Accumulator:
    def __init__(self, rs: ReviewSet, keep_features: bool) -> None:
        r, c = rs.n_reviewers, rs.n_models
        self.rs = rs
        self.count = np.zeros((3, r, c, c), dtype=np.int64)
        self.swap_judged = np.zeros(r)
        self.swap_agreed = np.zeros(r)
        self.fleiss_agreement = 0.0
        self.fleiss_subjects = 0
        self.fleiss_totals = np.zeros(3)
        self.upper = np.triu(np.ones((c, c), dtype=bool), k=1)
        n_features = r * c * c
        self.dense = rs.n_questions * n_features <= _DENSE_FEATURES
        self.keep_features = keep_features
        self.feature_blocks: list[NDArray[np.int32] | sp.csr_matrix] = []

    def add(self, block: NDArray[np.int32]) -> None:
        """Fold in the counts (3, questions, R, C, C) of one block of questions."""
        ties, b_wins, a_wins = block[TIE], block[B_WINS], block[A_WINS]
        self.count += block.sum(axis=1)
        verdicts = a_wins + b_wins
        verdicts += ties
        # Preference for the model shown first at (a, b); at (b, a) the mirror
        # is the same model's preference when shown second.
        prefer_first = np.sign(a_wins - b_wins)
        judged = verdicts > 0
        judged &= np.swapaxes(judged, 2, 3).copy()
        judged &= self.upper
        prefer_first += np.swapaxes(prefer_first, 2, 3)
        agree = prefer_first == 0
        agree &= judged
        self.swap_judged += judged.sum(axis=(2, 3)).sum(axis=0)
        self.swap_agreed += agree.sum(axis=(2, 3)).sum(axis=0)
        subjects = block.sum(axis=2).reshape(3, -1).astype(np.float64)  # over reviewers
        raters = subjects.sum(axis=0)
        rated = raters >= 2
        subjects, raters = subjects[:, rated], raters[rated]
        if raters.size:
            per = ((subjects**2).sum(axis=0) - raters) / (raters * (raters - 1.0))
            self.fleiss_agreement += float(per.sum())
            self.fleiss_subjects += int(raters.size)
            self.fleiss_totals += subjects.sum(axis=1)
        if self.keep_features:
            # Twice the win tensor, in integers: 2 A + T + transpose(2 B + T).
            doubled = a_wins * 2
            doubled += ties
            second = b_wins * 2
            second += ties
            doubled += np.swapaxes(second, 2, 3)
            rows = doubled.reshape(block.shape[1], -1)
            self.feature_blocks.append(rows if self.dense else sp.csr_matrix(rows))

    def result(self) -> Tallies:
        rs = self.rs
        features = None
        if self.keep_features:
            shape = (rs.n_reviewers, rs.n_models, rs.n_models)
            matrix: NDArray[np.int32] | sp.csr_matrix
            if self.dense:
                blocks = [b for b in self.feature_blocks if isinstance(b, np.ndarray)]
                empty = np.zeros((0, int(np.prod(shape))), dtype=np.int32)
                matrix = np.concatenate(blocks) if blocks else empty
            else:
                matrix = sp.vstack(self.feature_blocks, format="csr")
            features = QuestionFeatures(matrix, shape)
        totals = self.count.astype(np.float64)
        count = np.moveaxis(totals, 0, -1).copy()  # (R, C, C, 3)
        return Tallies(
            reviews=rs,
            count=count,
            win=_win_from_counts(totals[A_WINS], totals[B_WINS], totals[TIE]),
            features=features,
            swap_judged=self.swap_judged,
            swap_agreed=self.swap_agreed,
            fleiss_agreement=self.fleiss_agreement,
            fleiss_subjects=self.fleiss_subjects,
            fleiss_totals=self.fleiss_totals,
        )


def tally_reviews(rs: ReviewSet, *, per_question: bool = True) -> Tallies:
    """Count every battle once; `per_question` keeps per-question win tensors (bootstrap)."""
    r, c = rs.n_reviewers, rs.n_models
    question_cells = r * c * c
    acc = _Accumulator(rs, per_question)
    q_total = rs.n_questions
    if q_total == 0 or question_cells == 0:
        return acc.result()
    # Verdict category of each score -1, 0, +1.
    verdict = _CATEGORY.take(rs.score.astype(np.intp) + 1)
    cell = rs.reviewer * c
    cell += rs.model_a
    cell *= c
    cell += rs.model_b
    block_questions = max(1, _BLOCK_CELLS // (3 * question_cells))
    if q_total <= block_questions:
        key = verdict
        key *= q_total
        key += rs.question
        key *= question_cells
        key += cell
        flat = np.bincount(key, minlength=3 * q_total * question_cells)
        acc.add(flat.astype(np.int32).reshape(3, q_total, r, c, c))
        return acc.result()
    order = np.argsort(rs.question, kind="stable")
    sorted_q = rs.question[order]
    for start in range(0, q_total, block_questions):
        stop = min(q_total, start + block_questions)
        lo, hi = np.searchsorted(sorted_q, [start, stop])
        rows = order[lo:hi]
        size = stop - start
        key = (verdict[rows] * size + sorted_q[lo:hi] - start) * question_cells
        key += cell[rows]
        flat = np.bincount(key, minlength=3 * size * question_cells)
        acc.add(flat.astype(np.int32).reshape(3, size, r, c, c))
    return acc.result()


def bootstrap_counts(n_questions: int, rounds: int, seed: int) -> FloatArray:
    """How often each question is drawn in each bootstrap round (rounds x questions)."""
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, n_questions, size=(rounds, n_questions))
    offsets = (np.arange(rounds) * n_questions)[:, None]
    flat = np.bincount((draws + offsets).ravel(), minlength=rounds * n_questions)
    return flat.reshape(rounds, n_questions).astype(np.float64)


def resample(features: QuestionFeatures, counts: FloatArray) -> FloatArray:
    """Win tensors of resampled data sets: `counts` (rounds x questions) -> (rounds, R, C, C).

    Counts and doubled features are integers, so while every sum stays below
    2**24 a float32 product is exact (and twice as fast); otherwise float64.
    """
    rounds = counts.shape[0]
    r, c, _ = features.shape
    n_features = r * c * c
    out = np.empty((rounds, n_features), dtype=np.float64)
    step = max(1, _CHUNK_CELLS // max(1, n_features))
    matrix = features.matrix
    if isinstance(matrix, np.ndarray):
        largest = float(counts.max(initial=0.0)) * float(matrix.sum(axis=0).max(initial=0))
        exact_in_float32 = largest < 2.0**24
        dense: NDArray[np.floating[Any]] = matrix.astype(
            np.float32 if exact_in_float32 else np.float64
        )
        for start in range(0, rounds, step):
            chunk: NDArray[np.floating[Any]] = counts[start : start + step].astype(dense.dtype)
            out[start : start + step] = chunk @ dense
    else:
        as_float = matrix.astype(np.float64)
        for start in range(0, rounds, step):
            chunk = counts[start : start + step]
            out[start : start + step] = np.asarray((as_float.T @ chunk.T).T)
    out *= 0.5
    return out.reshape(rounds, r, c, c)
