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
) -> NDArray[np.int32]:
    """Battles per (verdict category, question, reviewer, model A, model B) for the
    questions in `questions` (a step-1 range). `columns` are the battles'
    (category, question, reviewer, model_a, model_b); `shape` is (reviewers, models).
    """
    category, question, reviewer, model_a, model_b = columns
    r, c = shape
    out = np.zeros((3, len(questions), r, c, c), dtype=np.int32)
    q = question.astype(np.int64) - questions.start
    inside = (q >= 0) & (q < out.shape[1])
    flat = np.ravel_multi_index(
        (category[inside], q[inside], reviewer[inside], model_a[inside], model_b[inside]),
        out.shape,
    )
    out += np.bincount(flat, minlength=out.size).reshape(out.shape).astype(out.dtype)
    return out


def fold_block(
    block: NDArray[np.int32],
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
    """Keep or leave out each row, check, tally, and write the counted battles into
    `found`; returns their number (see `RowPass`)."""
    ca, cb, cr, cv, cs = codes
    a = lookups[0][ca] if ca.size else np.zeros(0, np.int32)
    b = lookups[1][cb] if cb.size else np.zeros(0, np.int32)
    r = lookups[2][cr] if cr.size else np.zeros(0, np.int32)
    keep = (a >= 0) & (b >= 0) & (r >= 0)
    found.tally[LEFT_OUT] += int(ca.size - np.count_nonzero(keep))
    if exclude_self:
        own = judge_as[np.where(keep, r, 0)] if judge_as.size else np.full(r.size, -1)
        mine = keep & (own >= 0) & ((own == a) | (own == b))
        left = int(np.count_nonzero(mine))
        found.found[2] += left
        found.tally[LEFT_OUT] += left
        keep &= ~mine
    rows = np.flatnonzero(keep)
    a, b, r = a[rows], b[rows], r[rows]
    same = np.flatnonzero(a == b)
    if same.size and found.found[0] < 0:
        found.found[0] = rows[same[0]]
    code = cv[rows]
    verdicts = outcomes[0] if outcomes[0].size else np.zeros(1, np.int8)
    outcome = np.where(code < 0, FAILED, verdicts[np.maximum(code, 0)]).astype(np.int8)
    unknown = np.flatnonzero(outcome == UNKNOWN)
    if unknown.size:
        if found.found[1] < 0:
            found.found[1] = rows[unknown[0]]
        outcome[unknown] = INVALID
    if cs.size:
        status = cs[rows]
        statuses = outcomes[1] if outcomes[1].size else np.zeros(1, np.int8)
        override = statuses[np.maximum(status, 0)]
        outcome = np.where((status >= 0) & (override > outcome), override, outcome)
    found.tally[: LEFT_OUT + 1] += np.bincount(outcome, minlength=LEFT_OUT + 1)[: LEFT_OUT + 1]
    reviewers = found.per_reviewer.shape[1]
    found.per_reviewer[0] += np.bincount(r, minlength=reviewers)[:reviewers]
    found.per_reviewer[1] += np.bincount(r[outcome == INVALID], minlength=reviewers)[:reviewers]
    found.per_reviewer[2] += np.bincount(r[outcome == FAILED], minlength=reviewers)[:reviewers]
    counted = outcome < INVALID
    n = int(np.count_nonzero(counted))
    kept = rows[counted]
    found.model_a[:n] = a[counted]
    found.model_b[:n] = b[counted]
    found.reviewer[:n] = r[counted]
    found.score[:n] = outcome[counted] - 1
    found.question[:n] = cq[kept]
    found.row[:n] = kept
    if n_question_codes > 0:
        found.question_seen[cq[kept]] = True
    return n


def _fold(
    block: NDArray[np.int32],
    count: IntArray,
    swap: FloatArray,
    fleiss: FloatArray,
    per_model: IntArray,
    features: NDArray[np.integer[Any]],
) -> None:
    """`fold_block` into its arrays (`features`: (questions or 0, R*C*C))."""
    n_c = block.shape[-1]
    wide = block.astype(np.int64)
    tie, b_win, a_win = wide[0], wide[1], wide[2]  # (Q, R, C, C)
    count += wide.sum(axis=1)
    if features.shape[0] > 0:
        doubled = 2 * a_win + tie + np.swapaxes(2 * b_win + tie, -1, -2)
        features[:] = doubled.reshape(features.shape)
    judged = (tie + b_win + a_win) > 0
    upper = np.triu(np.ones((n_c, n_c), dtype=bool), 1)
    both = judged & np.swapaxes(judged, -1, -2) & upper
    first = np.sign(a_win - b_win)
    agreed = both & ((first + np.swapaxes(first, -1, -2)) == 0)
    swap[0] += both.sum(axis=(0, 2, 3))
    swap[1] += agreed.sum(axis=(0, 2, 3))
    panel = wide.sum(axis=2)  # (3, Q, C, C)
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
