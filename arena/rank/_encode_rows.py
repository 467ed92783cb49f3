"""The passes over the reviews behind `encode_reviews` and the tallies.

`row_pass` keeps or leaves out each row, checks, tallies and writes the
counted battles; `count_battles` scatters battles into the per-question count
tensor of `arena.rank._aggregate`; `fold_block` folds one block of it into its
totals, agreement sums and features. All three are whole-array NumPy operations
(lookups, masks, bincounts). Verdict categories are indexed tie 0, B wins 1,
A wins 2 throughout.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
CodeArray = NDArray[np.signedinteger[Any]]


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

    The battles' model and reviewer codes are in `code_dtype` of the numbers of
    contestants and reviewers (`counts`).
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
        # The counted battles (set by the pass; empty until then).
        self.model_a: CodeArray = np.empty(0, dtype=models)
        self.model_b: CodeArray = np.empty(0, dtype=models)
        self.reviewer: CodeArray = np.empty(0, dtype=judges)
        self.score: NDArray[np.int8] = np.empty(0, dtype=np.int8)
        # As the raw question codes.
        self.question: NDArray[Any] = np.empty(0, dtype=question_type)
        # Each battle's row (for its style and graded columns): 4 bytes below 2**31 rows.
        self.row: NDArray[np.integer[Any]] = np.empty(
            0, dtype=np.int32 if rows < 1 << 31 else np.int64
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
    found.counted = _pass(
        codes, question, lookups, outcomes, judge_as, exclude_self, question_codes, found
    )
    return found


def count_battles(
    columns: tuple[
        NDArray[np.int8], NDArray[np.int32], NDArray[np.int32], NDArray[np.int32], NDArray[np.int32]
    ],
    questions: range,
    shape: tuple[int, int],
) -> NDArray[np.int64]:
    """Battles per (verdict category, question, reviewer, model A, model B) for the
    questions in `questions` (a step-1 range), which holds every battle's question.
    `columns` are the battles' (category, question, reviewer, model_a, model_b);
    `shape` is (reviewers, models).
    """
    category, question, reviewer, model_a, model_b = columns
    r, c = shape
    dims = (3, len(questions), r, c, c)
    cells = 3 * len(questions) * r * c * c
    # The flat cell of each battle, built in place in the narrowest type that holds it.
    flat: NDArray[np.signedinteger[Any]] = category.astype(
        np.int32 if cells < 1 << 31 else np.int64
    )
    for column, size in zip((question, reviewer, model_a, model_b), dims[1:], strict=True):
        flat *= size
        flat += column
    if questions.start:
        flat -= questions.start * r * c * c
    counted: NDArray[np.int64] = np.bincount(flat, minlength=cells).reshape(dims)
    return counted


def fold_block(
    block: NDArray[np.int64],
    count: NDArray[np.int64],
    swap: NDArray[np.float64],
    fleiss: NDArray[np.float64],
    per_model: NDArray[np.int64],
    keep_features: bool,
    out: NDArray[np.integer[Any]] | None = None,
) -> NDArray[np.integer[Any]]:
    """Add one block of counts (3, questions, R, C, C) into `count` (3, R, C, C), the
    swap tallies `swap` (judged, agreed per reviewer) and the Fleiss sums `fleiss`
    (agreement, subjects, totals per category) and `per_model` (questions each
    model has a counted battle in); returns its rows of twice the win
    tensor per question (questions x R*C*C) when `keep_features`, else an empty array.
    `out`: where those rows go (the block's rows of the whole matrix), when the
    caller has it."""
    _, n_q, n_r, n_c, _ = block.shape
    rows = n_q if keep_features else 0
    features: NDArray[np.integer[Any]] = (
        np.empty((rows, n_r * n_c * n_c), dtype=np.int32) if out is None else out
    )
    _fold(block, count, swap, fleiss, per_model, features)
    return features


def _lookup(table: NDArray[np.int32], codes: NDArray[np.integer[Any]], dtype: Any) -> CodeArray:
    """`table[codes]` in `dtype` (the table narrowed first: a byte a row for few names)."""
    if not codes.size:
        return np.zeros(0, dtype=dtype)
    out: CodeArray = table.astype(dtype)[codes]
    return out


def _pass(
    codes: tuple[NDArray[np.integer[Any]], ...],
    cq: NDArray[np.integer[Any]],
    lookups: tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int32]],
    outcomes: tuple[NDArray[np.int8], NDArray[np.int8]],
    judge_as: IntArray,
    exclude_self: bool,
    n_question_codes: int,
    found: RowPass,
) -> int:
    """Keep or leave out each row, check, tally, and put the counted battles in
    `found`; returns their number (see `RowPass`). Where every row is kept and
    counted (a run's log, as a rule), the battles are the looked-up columns
    themselves: no row index is built and nothing is copied."""
    ca, cb, cr, cv, cs = codes
    models, judges = found.model_a.dtype, found.reviewer.dtype
    a = _lookup(lookups[0], ca, models)
    b = _lookup(lookups[1], cb, models)
    r = _lookup(lookups[2], cr, judges)
    keep = (a >= 0) & (b >= 0) & (r >= 0)
    found.tally[LEFT_OUT] += int(ca.size - np.count_nonzero(keep))
    if exclude_self:
        own = judge_as[np.where(keep, r, 0)] if judge_as.size else np.full(r.size, -1)
        mine = keep & (own >= 0) & ((own == a) | (own == b))
        left = int(np.count_nonzero(mine))
        found.found[2] += left
        found.tally[LEFT_OUT] += left
        keep &= ~mine
    rows: NDArray[np.int64] | None = None
    code, status, question = cv, cs, cq
    if not bool(keep.all()):
        rows = np.flatnonzero(keep)
        a, b, r, code, question = a[rows], b[rows], r[rows], cv[rows], cq[rows]
        status = cs[rows] if cs.size else cs
    del keep
    same = np.flatnonzero(a == b)
    if same.size and found.found[0] < 0:
        found.found[0] = same[0] if rows is None else rows[same[0]]
    verdicts = outcomes[0] if outcomes[0].size else np.zeros(1, np.int8)
    if code.dtype.kind == "u":  # an Enum's codes: no null
        outcome = verdicts[code]
    else:
        outcome = np.where(code < 0, FAILED, verdicts[np.maximum(code, 0)]).astype(np.int8)
    unknown = np.flatnonzero(outcome == UNKNOWN)
    if unknown.size:
        if found.found[1] < 0:
            found.found[1] = unknown[0] if rows is None else rows[unknown[0]]
        outcome[unknown] = INVALID
    statuses = outcomes[1]
    # A status (not null) overrides the verdict where its table says invalid or failed.
    if status.size and statuses.any():
        override = statuses[np.maximum(status, 0)]
        outcome = np.where((status >= 0) & (override > outcome), override, outcome)
    tally = np.bincount(outcome, minlength=LEFT_OUT + 1)[: LEFT_OUT + 1]
    found.tally[: LEFT_OUT + 1] += tally
    reviewers = found.per_reviewer.shape[1]
    found.per_reviewer[0] += np.bincount(r, minlength=reviewers)[:reviewers]
    for line, kind in ((1, INVALID), (2, FAILED)):
        if tally[kind]:
            found.per_reviewer[line] += np.bincount(r[outcome == kind], minlength=reviewers)[
                :reviewers
            ]
    n = int(tally[:INVALID].sum())
    if n == outcome.size:  # every kept row is a battle
        found.model_a, found.model_b, found.reviewer = a, b, r
        found.score = outcome - np.int8(1)
        found.question = question
        found.row = np.arange(n, dtype=found.row.dtype) if rows is None else rows
    else:
        counted = outcome < INVALID
        found.model_a, found.model_b, found.reviewer = a[counted], b[counted], r[counted]
        found.score = outcome[counted] - np.int8(1)
        found.question = question[counted]
        found.row = (np.flatnonzero(counted) if rows is None else rows[counted]).astype(
            found.row.dtype
        )
    if n_question_codes > 0:
        found.question_seen[found.question] = True
    return n


def _fold(
    block: NDArray[np.int64],
    count: IntArray,
    swap: FloatArray,
    fleiss: FloatArray,
    per_model: IntArray,
    features: NDArray[np.integer[Any]],
) -> None:
    """`fold_block` into its arrays (`features`: (questions or 0, R*C*C))."""
    n_c = block.shape[-1]
    tie, b_win, a_win = block[0], block[1], block[2]  # (Q, R, C, C)
    count += block.sum(axis=1)
    if features.shape[0] > 0:
        doubled = 2 * a_win
        doubled += tie
        shown_second = 2 * b_win
        shown_second += tie
        doubled += np.swapaxes(shown_second, -1, -2)
        del shown_second
        features[:] = doubled.reshape(features.shape)
        del doubled
    judged = block.sum(axis=0) > 0
    upper = np.triu(np.ones((n_c, n_c), dtype=bool), 1)
    both = judged & np.swapaxes(judged, -1, -2) & upper
    # Agreed: the verdicts at (a, b) and (b, a) prefer the same answer, or neither.
    ahead = a_win > b_win
    behind = a_win < b_win
    agreed = both & (ahead == np.swapaxes(behind, -1, -2)) & (behind == np.swapaxes(ahead, -1, -2))
    swap[0] += both.sum(axis=(0, 2, 3))
    swap[1] += agreed.sum(axis=(0, 2, 3))
    panel = block.sum(axis=2)  # (3, Q, C, C)
    raters = panel.sum(axis=0)
    several = raters >= 2
    if several.any():
        r = raters[several].astype(np.float64)
        squares = (panel[:, several].astype(np.float64) ** 2).sum(axis=0)
        fleiss[0] += float(((squares - r) / (r * (r - 1.0))).sum())
        fleiss[1] += float(np.count_nonzero(several))
        fleiss[2:5] += panel[:, several].sum(axis=1)
    met = raters > 0
    per_model += (met.any(axis=2) | met.any(axis=1)).sum(axis=0)
