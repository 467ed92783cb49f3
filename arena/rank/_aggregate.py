"""One pass over the battles: every count the ratings and diagnostics need.

The reviews are counted into a dense tensor `count[v, q, r, a, b]` (verdict,
question, reviewer, model in position A, model in position B) by one NumPy
scatter (a bincount), a block of questions at a time when the tensor would be large, and
each block is folded into the totals, agreement sums and per-question
features by one pass (arena/rank/_encode_rows.py).
Everything downstream is derived from these counts, whose size depends on the
numbers of models and reviewers but not on the number of reviews; in
particular the win tensor `X[r, i, j]`, the summed win value of `i` against
`j` in reviewer `r`'s battles, both positions together (win 1, tie 1/2), so
that the battles between `i` and `j` judged by `r` number `X[r,i,j] + X[r,j,i]`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from numpy.typing import NDArray

from arena.rank._encode import ReviewSet
from arena.rank._encode_rows import count_battles, fold_block

if TYPE_CHECKING:
    import scipy.sparse as sp

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

# Cells of the dense count tensor of one block of questions (16 MB of int32).
_BLOCK_CELLS = 4_000_000
# Per-question features stay a dense matrix up to this many cells.
_DENSE_FEATURES = 20_000_000
# Bootstrap rounds are aggregated this many cells at a time (memory bound).
_CHUNK_CELLS = 8_000_000


@dataclass(frozen=True, eq=False)
class QuestionFeatures:
    """Twice the win tensor of every question, as a (questions x R*C*C) matrix.

    Doubling keeps ties (half a win) integral, so resampling sums are exact;
    a dense integer matrix is in the narrowest type that holds its values
    (int8 while no cell has more than a few battles: sum or multiply it in a
    wider type); graded verdicts (`ReviewSet.graded`) make it a float64 matrix. `rows`, when
    set, makes the integer rows of questions [start, stop) on demand (`matrix`
    is then an empty (0, R*C*C) array): `resample` asks for a block at a time,
    so a big log's matrix never stands whole.
    """

    matrix: NDArray[np.integer[Any]] | NDArray[np.float64] | sp.csr_matrix
    shape: tuple[int, int, int]
    rows: Callable[[int, int], NDArray[np.int32]] | None = None


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
    # Per contestant: the questions with at least one counted battle of it.
    questions_per_model: IntArray


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
        self.swap = np.zeros((2, r))  # per reviewer: judged in both orders, agreeing
        self.fleiss = np.zeros(5)  # agreement, subjects, totals of tie, B, A
        self.questions_per_model = np.zeros(c, dtype=np.int64)
        n_features = r * c * c
        self.dense = rs.n_questions * n_features <= _DENSE_FEATURES
        self.keep_features = keep_features
        self.feature_blocks: list[sp.csr_matrix] = []  # a sparse matrix's blocks
        # A dense matrix is written a block at a time into its place (not kept as blocks
        # and joined at the end: both would stand at once), in the narrowest integer
        # that holds its values: a byte a cell while no cell has more than a few battles
        # (widened, once, by the first block that needs it).
        self.matrix: NDArray[np.integer[Any]] = np.empty(
            (rs.n_questions if keep_features and self.dense else 0, n_features), dtype=np.int8
        )
        self.filled = 0

    def add(self, block: NDArray[np.int64]) -> None:
        """Fold in the counts (3, questions, R, C, C) of one block of questions.

        Swap agreement: a reviewer judged (q, a, b) in both orders and preferred the
        same model both times, or neither (the preference for the model shown
        first at (a, b) plus the one at (b, a) is zero). Fleiss: per battle
        (q, a, b) with two or more verdicts, over all reviewers.
        """
        n_q = block.shape[1]
        if self.matrix.shape[0]:
            # A feature is 2 A + T of (a, b) plus 2 B + T of (b, a): at most twice the
            # battles of both cells, each at most 3 times the largest verdict count.
            largest = 12 * int(block.max(initial=0))
            if largest > np.iinfo(self.matrix.dtype).max:
                self.matrix = self.matrix.astype(np.int16 if largest < 1 << 15 else np.int32)
        place = self.matrix[self.filled : self.filled + n_q] if self.matrix.shape[0] else None
        rows = fold_block(
            block,
            self.count,
            self.swap,
            self.fleiss,
            self.questions_per_model,
            self.keep_features,
            place,
        )
        self.filled += n_q
        if self.keep_features and not self.dense:
            import scipy.sparse as sp

            self.feature_blocks.append(sp.csr_matrix(rows))

    def result(self) -> Tallies:
        rs = self.rs
        features = None
        if self.keep_features:
            shape = (rs.n_reviewers, rs.n_models, rs.n_models)
            matrix: NDArray[np.integer[Any]] | sp.csr_matrix
            if self.dense:
                matrix = self.matrix
            else:
                import scipy.sparse as sp

                matrix = sp.vstack(self.feature_blocks, format="csr")
            features = QuestionFeatures(matrix, shape)
        totals = self.count.astype(np.float64)
        count = np.moveaxis(totals, 0, -1).copy()  # (R, C, C, 3)
        return Tallies(
            reviews=rs,
            count=count,
            win=_win_from_counts(totals[A_WINS], totals[B_WINS], totals[TIE]),
            features=features,
            swap_judged=self.swap[0].copy(),
            swap_agreed=self.swap[1].copy(),
            fleiss_agreement=float(self.fleiss[0]),
            fleiss_subjects=int(self.fleiss[1]),
            fleiss_totals=self.fleiss[2:].copy(),
            questions_per_model=self.questions_per_model,
        )


def _graded(tallies: Tallies, per_question: bool) -> Tallies:
    """The win tensor (and per-question features) from graded verdicts.

    A battle of weight w whose share for A is p adds w p to `win[r, a, b]`
    and w (1 - p) to `win[r, b, a]`: a weighted likelihood with fractional
    outcomes for Bradley-Terry, weighted win values for PeerRank. The verdict
    counts (diagnostics, wins / ties / losses) stay those of the plain verdicts.
    """
    rs = tallies.reviews
    r, c = rs.n_reviewers, rs.n_models
    p = rs.p_a if rs.p_a is not None else (1.0 - rs.score.astype(np.float64)) / 2.0
    w = rs.weight if rs.weight is not None else np.ones(rs.n_battles)
    who = rs.reviewer.astype(np.int64)
    a, b = rs.model_a.astype(np.int64), rs.model_b.astype(np.int64)
    forward = (who * c + a) * c + b
    backward = (who * c + b) * c + a
    values = np.concatenate([w * p, w * (1.0 - p)])
    cells = np.concatenate([forward, backward])
    win: FloatArray = (
        np.bincount(cells, weights=values, minlength=r * c * c).astype(np.float64).reshape(r, c, c)
    )
    features = None
    if per_question and tallies.features is not None:
        rows = np.concatenate([rs.question, rs.question]).astype(np.int64)
        shape = (rs.n_questions, r * c * c)
        import scipy.sparse as sp

        doubled = sp.csr_matrix((2.0 * values, (rows, cells)), shape=shape)
        doubled.sum_duplicates()
        matrix: NDArray[np.float64] | sp.csr_matrix = (
            doubled.toarray() if rs.n_questions * r * c * c <= _DENSE_FEATURES else doubled
        )
        features = QuestionFeatures(matrix, (r, c, c))
    return dataclasses.replace(tallies, win=win, features=features)


def tally_reviews(rs: ReviewSet, *, per_question: bool = True) -> Tallies:
    """Count every battle once; `per_question` keeps per-question win tensors (bootstrap).

    With graded verdicts (`rs.graded`) the win tensor and features weigh each
    battle by its `weight` and split it by `p_a` (see `_graded`).
    """
    tallies = _tally(rs, per_question)
    return _graded(tallies, per_question) if rs.graded else tallies


def _tally(rs: ReviewSet, per_question: bool) -> Tallies:
    r, c = rs.n_reviewers, rs.n_models
    question_cells = r * c * c
    acc = _Accumulator(rs, per_question)
    q_total = rs.n_questions
    if q_total == 0 or question_cells == 0:
        return acc.result()
    # Verdict category of each score -1, 0, +1: the score modulo 3 (see TIE), a byte
    # a battle (an index array through `take` would be eight).
    verdict: NDArray[np.int8] = np.remainder(rs.score, np.int8(3), dtype=np.int8)
    columns = (verdict, rs.question, rs.reviewer, rs.model_a, rs.model_b)
    block_questions = max(1, _BLOCK_CELLS // (3 * question_cells))
    if q_total <= block_questions:
        acc.add(count_battles(columns, range(q_total), (r, c)))
        return acc.result()
    # Several blocks: sort the battles by question once, hand each block its slice.
    order = np.argsort(rs.question, kind="stable")
    v = verdict[order]
    q, who, a, b = (column[order] for column in columns[1:])
    bounds = np.searchsorted(q, np.arange(0, q_total + block_questions, block_questions))
    for k, start in enumerate(range(0, q_total, block_questions)):
        lo, hi = int(bounds[k]), int(bounds[k + 1])
        block = range(start, min(q_total, start + block_questions))
        sliced = (v[lo:hi], q[lo:hi], who[lo:hi], a[lo:hi], b[lo:hi])
        acc.add(count_battles(sliced, block, (r, c)))
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
    if features.rows is not None or (isinstance(matrix, np.ndarray) and matrix.dtype.kind in "iu"):
        _resample_blocks(features, counts, out)
    elif isinstance(matrix, np.ndarray):  # graded features are not integers: float64 only
        dense = matrix.astype(np.float64, copy=False)
        for start in range(0, rounds, step):
            out[start : start + step] = counts[start : start + step] @ dense
    else:
        as_float = matrix.astype(np.float64)
        for start in range(0, rounds, step):
            chunk = counts[start : start + step]
            out[start : start + step] = np.asarray((as_float.T @ chunk.T).T)
    out *= 0.5
    return out.reshape(rounds, r, c, c)


def _resample_blocks(features: QuestionFeatures, counts: FloatArray, out: FloatArray) -> None:
    """`resample`'s sums (not yet halved) of integer features into `out`, a block of
    questions at a time: only a block's rows stand as floats (or at all, with
    `features.rows`). Each block's product is exact (float32 while its sums stay
    below 2**24, else float64), so the totals are the same in any blocking."""
    rounds, n_q = counts.shape
    n_features = out.shape[1]
    out[:] = 0.0
    step = max(1, _CHUNK_CELLS // max(1, n_features))
    q_step = max(1, _RESAMPLE_CELLS // max(1, n_features))
    for q0 in range(0, n_q, q_step):
        q1 = min(n_q, q0 + q_step)
        block: NDArray[np.integer[Any]] = (
            features.rows(q0, q1)
            if features.rows is not None
            else cast("NDArray[np.integer[Any]]", features.matrix[q0:q1])
        )
        part = counts[:, q0:q1]
        largest = float(part.max(initial=0.0)) * float(block.sum(axis=0).max(initial=0))
        dense: NDArray[np.floating[Any]] = block.astype(
            np.float32 if largest < 2.0**24 else np.float64
        )
        del block
        for start in range(0, rounds, step):
            chunk: NDArray[np.floating[Any]] = part[start : start + step].astype(dense.dtype)
            out[start : start + step] += chunk @ dense


# Cells of the question features `resample` makes floats of at a time (4 MB as float32).
_RESAMPLE_CELLS = 1_000_000
