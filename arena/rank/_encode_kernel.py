"""The compiled passes over the reviews (numba), for logs of `COMPILED_MIN_ROWS` or more.

`_pass` is the row loop of `encode_reviews`: given the columns as raw codes
and small lookup tables from raw code to contestant, reviewer and outcome, one
pass keeps or leaves out each row, checks it, tallies it and writes the
counted battles compactly (the same work as a dozen NumPy passes of lookups,
masks, bincounts and filters). `_count` scatters the battles into the
per-question count tensor of `arena.rank._aggregate`, and `_fold` folds
one block of that tensor into its totals, agreement sums and features;
`_question_cells` writes the reliability model's per-question features
(`arena.rank._reliability`) without a per-battle temporary.
Verdict categories are indexed tie 0, B wins 1, A wins 2 throughout.
`arena.rank._encode_rows` calls these (or their NumPy twins in
`arena.rank._plain` on small logs) and imports this module only when needed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from arena.rank._encode_rows import FAILED, INVALID, LEFT_OUT, UNKNOWN
from arena.rank._jit import njit

__all__ = ["_count", "_fold", "_pass", "_question_cells", "_warm"]


@njit(cache=True, nogil=True)
def _pass(
    ca: NDArray[np.integer[Any]],
    cb: NDArray[np.integer[Any]],
    cr: NDArray[np.integer[Any]],
    cv: NDArray[np.integer[Any]],
    cs: NDArray[np.integer[Any]],
    cq: NDArray[np.integer[Any]],
    la: NDArray[np.int32],
    lb: NDArray[np.int32],
    lr: NDArray[np.int32],
    lv: NDArray[np.int8],
    ls: NDArray[np.int8],
    judge_as: NDArray[np.int64],
    exclude_self: bool,
    n_question_codes: int,
    out_a: NDArray[np.int32],
    out_b: NDArray[np.int32],
    out_r: NDArray[np.int32],
    out_score: NDArray[np.int8],
    out_q: NDArray[np.integer[Any]],
    out_row: NDArray[np.integer[Any]],
    tally: NDArray[np.int64],
    per_reviewer: NDArray[np.int64],
    question_seen: NDArray[np.bool_],
    found: NDArray[np.int64],
) -> int:  # pragma: no cover - compiled
    """Returns the number of counted battles written to `out_*` (`out_row`: their rows).

    `per_reviewer` is (3, reviewers): kept rows, invalid, failed. `found` gets
    the first kept row of a model against itself [0], of an unknown verdict
    [1], and the number of own battles left out [2]. A null verdict code is -1
    (outcome FAILED), a null status -1 (no change); `cs` empty: no status column.
    `n_question_codes` > 0 marks `cq` as raw codes whose presence among the
    counted battles goes to `question_seen`.
    """
    has_status = cs.shape[0] > 0
    counted = 0
    for row in range(ca.shape[0]):
        a = la[ca[row]]
        b = lb[cb[row]]
        r = lr[cr[row]]
        if a < 0 or b < 0 or r < 0:
            tally[LEFT_OUT] += 1
            continue
        if exclude_self:
            own = judge_as[r]
            if own >= 0 and (own == a or own == b):
                found[2] += 1
                tally[LEFT_OUT] += 1
                continue
        if a == b and found[0] < 0:
            found[0] = row
        code = cv[row]
        outcome = FAILED if code < 0 else lv[code]
        if outcome == UNKNOWN:
            if found[1] < 0:
                found[1] = row
            outcome = INVALID
        if has_status:
            status = cs[row]
            if status >= 0 and ls[status] > outcome:
                outcome = ls[status]
        tally[outcome] += 1
        per_reviewer[0, r] += 1
        if outcome == INVALID:
            per_reviewer[1, r] += 1
        elif outcome == FAILED:
            per_reviewer[2, r] += 1
        else:
            out_a[counted] = a
            out_b[counted] = b
            out_r[counted] = r
            out_score[counted] = outcome - 1
            question = cq[row]
            out_q[counted] = question
            out_row[counted] = row
            if n_question_codes > 0:
                question_seen[question] = True
            counted += 1
    return counted


@njit(cache=True, nogil=True)
def _count(
    category: NDArray[np.int8],
    question: NDArray[np.int32],
    reviewer: NDArray[np.int32],
    model_a: NDArray[np.int32],
    model_b: NDArray[np.int32],
    first: int,
    out: NDArray[np.int32],
) -> None:  # pragma: no cover - compiled
    for row in range(category.shape[0]):
        q = question[row] - first
        if 0 <= q < out.shape[1]:
            out[category[row], q, reviewer[row], model_a[row], model_b[row]] += 1


@njit(cache=True, nogil=True)
def _fold(
    block: NDArray[np.int32],
    count: NDArray[np.int64],
    swap: NDArray[np.float64],
    fleiss: NDArray[np.float64],
    per_model: NDArray[np.int64],
    features: NDArray[np.integer[Any]],
) -> None:  # pragma: no cover - compiled
    _, n_q, n_r, n_c, _ = block.shape
    keep_features = features.shape[0] > 0
    panel = np.zeros((3, n_c, n_c), dtype=np.int64)
    played = np.zeros(n_c, dtype=np.bool_)
    for q in range(n_q):
        panel[:] = 0
        played[:] = False
        for r in range(n_r):
            for a in range(n_c):
                for b in range(n_c):
                    tie = block[0, q, r, a, b]
                    b_win = block[1, q, r, a, b]
                    a_win = block[2, q, r, a, b]
                    count[0, r, a, b] += tie
                    count[1, r, a, b] += b_win
                    count[2, r, a, b] += a_win
                    panel[0, a, b] += tie
                    panel[1, a, b] += b_win
                    panel[2, a, b] += a_win
                    if keep_features:
                        # Twice the win value of a over b: 2 A + T here, 2 B + T at (b, a).
                        mirror = 2 * block[1, q, r, b, a] + block[0, q, r, b, a]
                        features[q, (r * n_c + a) * n_c + b] = 2 * a_win + tie + mirror
                    if a < b and tie + b_win + a_win > 0:
                        t2 = block[0, q, r, b, a]
                        b2 = block[1, q, r, b, a]
                        a2 = block[2, q, r, b, a]
                        if t2 + b2 + a2 > 0:
                            swap[0, r] += 1.0
                            first = np.sign(a_win - b_win) + np.sign(a2 - b2)
                            if first == 0:
                                swap[1, r] += 1.0
        for a in range(n_c):
            for b in range(n_c):
                t = panel[0, a, b]
                bw = panel[1, a, b]
                aw = panel[2, a, b]
                raters = float(t + bw + aw)
                if raters > 0.0:
                    played[a] = True
                    played[b] = True
                if raters >= 2.0:
                    squares = float(t * t + bw * bw + aw * aw)
                    fleiss[0] += (squares - raters) / (raters * (raters - 1.0))
                    fleiss[1] += 1.0
                    fleiss[2] += t
                    fleiss[3] += bw
                    fleiss[4] += aw
        for m in range(n_c):
            if played[m]:
                per_model[m] += 1


@njit(cache=True, nogil=True)
def _question_cells(
    question: NDArray[np.int32],
    reviewer: NDArray[np.int32],
    model_a: NDArray[np.int32],
    model_b: NDArray[np.int32],
    score: NDArray[np.int8],
    n_models: int,
    first: int,
    out: NDArray[np.int32],
) -> None:  # pragma: no cover - compiled
    """Add each battle of questions `first` to `first + len(out) - 1` to `out` (those
    questions x 2 * cells, cells = R * C * C, zeroed): two to its cell's battles (the
    first half) and twice the first-shown answer's win value (2 for A, 1 for a tie,
    0 for B) to its cell's wins (the second half). Other battles are skipped."""
    c = n_models
    cells = out.shape[1] // 2
    for k in range(question.shape[0]):
        row = question[k] - first
        if 0 <= row < out.shape[0]:
            cell = (reviewer[k] * c + model_a[k]) * c + model_b[k]
            out[row, cell] += 2
            out[row, cells + cell] += 1 - score[k]


@njit(cache=True, nogil=True)
def _warm(x: int) -> int:  # pragma: no cover - compiled
    """Nothing: its first call readies numba's compiler and cache (most of the cost of a
    process's first kernel), which `arena.rank.prefetch_kernels` does early."""
    return x + 1
