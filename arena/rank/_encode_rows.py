"""The passes over the reviews behind `encode_reviews` and the tallies.

`row_pass` keeps or leaves out each row, checks, tallies and writes the
counted battles; `count_battles` scatters battles into the per-question count
tensor of `arena.rank._aggregate`; `fold_block` folds one block of it into its
totals, agreement sums and features. Each runs the compiled kernel of
`arena.rank._encode_kernel` on logs of `COMPILED_MIN_ROWS` rows or more, and
its NumPy twin (`arena.rank._plain`) below that, so small logs never load numba.
Verdict categories are indexed tie 0, B wins 1, A wins 2 throughout.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from arena.rank import _plain

__all__ = [
    "FAILED",
    "INVALID",
    "LEFT_OUT",
    "UNKNOWN",
    "RowPass",
    "code_dtype",
    "count_battles",
    "fold_block",
    "row_pass",
]

# Outcome of a review: its score + 1 (0, 1, 2) when counted, else one of these.
INVALID, FAILED, LEFT_OUT = 3, 4, 5
# Lookup value of a verdict that is none of A, B, tie, invalid.
UNKNOWN = 6


def code_dtype(count: int) -> np.dtype[Any]:
    """The narrowest signed integer type that holds the codes `0..count-1` (and -1):
    a byte a battle for up to 128 models, reviewers or questions."""
    for dtype in (np.int8, np.int16, np.int32):
        if count <= int(np.iinfo(dtype).max) + 1:
            return np.dtype(dtype)
    return np.dtype(np.int64)


class RowPass:
    """What one pass over the rows found (see `row_pass`).

    The battles' model and reviewer codes are written in `code_dtype` of the
    numbers of contestants and reviewers (`counts`).
    """

    def __init__(
        self,
        rows: int,
        reviewers: int,
        question_codes: int,
        question_type: Any = np.int64,
        counts: tuple[int, int] = (1 << 31, 1 << 31),
    ) -> None:
        models, judges = code_dtype(counts[0]), code_dtype(counts[1])
        self.model_a = np.empty(rows, dtype=models)
        self.model_b = np.empty(rows, dtype=models)
        self.reviewer = np.empty(rows, dtype=judges)
        self.score = np.empty(rows, dtype=np.int8)
        self.question = np.empty(rows, dtype=question_type)  # as the raw question codes
        # Each battle's row (for its style and graded columns): 4 bytes below 2**31 rows.
        self.row: NDArray[np.integer[Any]] = np.empty(
            rows, dtype=np.int32 if rows < 1 << 31 else np.int64
        )
        self.tally = np.zeros(LEFT_OUT + 1, dtype=np.int64)
        self.per_reviewer = np.zeros((3, reviewers), dtype=np.int64)
        self.question_seen = np.zeros(question_codes, dtype=np.bool_)
        self.found = np.array([-1, -1, 0], dtype=np.int64)
        self.counted = 0

    @property
    def self_row(self) -> int:
        """First kept row of a model reviewed against itself, or -1."""
        return int(self.found[0])

    @property
    def unknown_row(self) -> int:
        """First kept row with an unknown verdict, or -1."""
        return int(self.found[1])

    @property
    def n_self_excluded(self) -> int:
        """Reviews of a reviewer's own battles left out."""
        return int(self.found[2])


def row_pass(
    codes: tuple[NDArray[np.integer[Any]], ...],
    question: NDArray[np.integer[Any]],
    lookups: tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int32]],
    outcomes: tuple[NDArray[np.int8], NDArray[np.int8]],
    judge_as: NDArray[np.int64],
    exclude_self: bool,
    question_codes: int,
    n_models: int,
) -> RowPass:
    """Run the pass over `codes` = (model_a, model_b, reviewer, verdict, status)
    raw codes (status empty when absent); `question` holds raw question codes
    (`question_codes` of them) or, with `question_codes` 0, integer ids.
    `n_models` contestants and `judge_as.shape[0]` reviewers size the codes' type."""
    ca, cb, cr, cv, cs = codes
    reviewers = judge_as.shape[0]
    found = RowPass(ca.shape[0], reviewers, question_codes, question.dtype, (n_models, reviewers))
    if not _plain.compiled(ca.shape[0]):
        found.counted = _plain.pass_plain(
            codes, question, lookups, outcomes, judge_as, exclude_self, question_codes, found
        )
        return found
    from arena.rank._encode_kernel import _pass

    found.counted = int(
        _pass(
            ca,
            cb,
            cr,
            cv,
            cs,
            question,
            lookups[0],
            lookups[1],
            lookups[2],
            outcomes[0],
            outcomes[1],
            judge_as,
            exclude_self,
            question_codes,
            found.model_a,
            found.model_b,
            found.reviewer,
            found.score,
            found.question,
            found.row,
            found.tally,
            found.per_reviewer,
            found.question_seen,
            found.found,
        )
    )
    return found


def count_battles(
    columns: tuple[
        NDArray[np.int8], NDArray[np.int32], NDArray[np.int32], NDArray[np.int32], NDArray[np.int32]
    ],
    questions: range,
    shape: tuple[int, int],
    compiled: bool = True,
) -> NDArray[np.int32]:
    """Battles per (verdict category, question, reviewer, model A, model B) for the
    questions in `questions` (a step-1 range). `columns` are the battles'
    (category, question, reviewer, model_a, model_b); `shape` is (reviewers, models).
    `compiled`: run the numba kernel (else its NumPy twin)."""
    r, c = shape
    out = np.zeros((3, len(questions), r, c, c), dtype=np.int32)
    if not compiled:
        _plain.count_plain(columns, questions.start, out)
        return out
    from arena.rank._encode_kernel import _count

    _count(*columns, questions.start, out)
    return out


def fold_block(
    block: NDArray[np.int32],
    count: NDArray[np.int64],
    swap: NDArray[np.float64],
    fleiss: NDArray[np.float64],
    per_model: NDArray[np.int64],
    keep_features: bool,
    compiled: bool = True,
    out: NDArray[np.integer[Any]] | None = None,
) -> NDArray[np.integer[Any]]:
    """Add one block of counts (3, questions, R, C, C) into `count` (3, R, C, C), the
    swap tallies `swap` (judged, agreed per reviewer) and the Fleiss sums `fleiss`
    (agreement, subjects, totals per category) and `per_model` (questions each
    model has a counted battle in); returns its rows of twice the win
    tensor per question (questions x R*C*C) when `keep_features`, else an empty array.
    `compiled`: run the numba kernel (else its NumPy twin). `out`: where those rows go
    (the block's rows of the whole matrix), when the caller has it."""
    _, n_q, n_r, n_c, _ = block.shape
    rows = n_q if keep_features else 0
    features: NDArray[np.integer[Any]] = (
        np.empty((rows, n_r * n_c * n_c), dtype=np.int32) if out is None else out
    )
    if not compiled:
        _plain.fold_plain(block, count, swap, fleiss, per_model, features)
        return features
    from arena.rank._encode_kernel import _fold

    _fold(block, count, swap, fleiss, per_model, features)
    return features
