"""Turn a reviews frame into integer-coded numpy arrays, once, for all the math.

Every rating and diagnostic in `arena.rank` works on a `ReviewSet`: contestants,
reviewers and questions replaced by dense integer codes, verdicts by the PRD
score (-1 = position A wins, 0 = tie, +1 = position B wins). Reviews without a
verdict (`invalid`, `failed`) are counted here and never become battles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from numpy.typing import NDArray

__all__ = ["REQUIRED_COLUMNS", "ReviewSet", "encode_reviews"]

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

REQUIRED_COLUMNS = ("question_id", "model_a", "model_b", "reviewer", "verdict")

_SCORE_OF_VERDICT = {"A": -1, "B": 1, "tie": 0}
_KNOWN_VERDICTS = ("A", "B", "tie", "invalid")
_STATUS_KIND = {"ok": 0, "invalid": 1, "failed": 2}


@dataclass(frozen=True, eq=False)
class ReviewSet:
    """Integer-coded reviews: the counted battles plus the counts of the rest.

    `question`, `model_a`, `model_b`, `reviewer` and `score` describe the counted
    battles only (valid verdicts). Model codes index `contestants`, reviewer
    codes index `reviewers`, question codes run over `0..n_questions-1`.
    """

    contestants: tuple[str, ...]
    reviewers: tuple[str, ...]
    questions: tuple[str, ...]
    question: IntArray
    model_a: IntArray
    model_b: IntArray
    reviewer: IntArray
    score: NDArray[np.int8]
    # Index of each reviewer among the contestants, -1 when it does not compete.
    reviewer_as_contestant: IntArray
    # Rows considered (after filtering), and those that are not battles.
    n_rows: int
    n_invalid: int
    n_failed: int
    # Per reviewer: reviews with a readable verdict or an unreadable one.
    invalid_per_reviewer: IntArray
    answered_per_reviewer: IntArray

    @property
    def n_questions(self) -> int:
        """Number of distinct questions among the counted battles."""
        return len(self.questions)

    @property
    def n_battles(self) -> int:
        """Counted reviews (verdict A, B or tie)."""
        return int(self.score.shape[0])

    @property
    def n_models(self) -> int:
        """Number of contestants."""
        return len(self.contestants)

    @property
    def n_reviewers(self) -> int:
        """Number of reviewers."""
        return len(self.reviewers)


def _categorize(column: pl.Series) -> tuple[IntArray, list[str]]:
    """Codes of a column (-1 for null) and the name of each code."""
    if isinstance(column.dtype, pl.Enum):
        names = [str(v) for v in column.dtype.categories.to_list()]
        physical = column.to_physical()
    else:
        text = column.cast(pl.String)
        names = [str(v) for v in text.drop_nulls().unique().sort().to_list()]
        physical = text.cast(pl.Enum(names)).to_physical()
    if physical.null_count():
        return physical.cast(pl.Int64).fill_null(-1).to_numpy(), names
    return physical.to_numpy().astype(np.int64, copy=False), names


def _present(codes: IntArray, names: Sequence[str]) -> list[str]:
    """The names whose code occurs in `codes`, in code order."""
    used = np.bincount(codes[codes >= 0], minlength=len(names)) > 0
    return [name for name, flag in zip(names, used.tolist(), strict=True) if flag]


def _remap(codes: IntArray, names: Sequence[str], target: Sequence[str]) -> IntArray:
    """Codes against `names` -> codes against `target` (-1 where absent or null)."""
    position = {name: i for i, name in enumerate(target)}
    table = np.array([position.get(name, -1) for name in names] + [-1], dtype=np.int64)
    return table[np.where(codes >= 0, codes, len(names))]


def _question_codes(column: pl.Series) -> tuple[IntArray, tuple[str, ...]]:
    """Dense question codes and the question id (as text) of each code."""
    if column.dtype.is_integer():
        values = column.to_numpy().astype(np.int64)
        if values.size == 0:
            return values, ()
        low, high = int(values.min()), int(values.max())
        if high - low < 4 * values.size + 1024:
            shifted = values - low
            present = np.zeros(high - low + 1, dtype=bool)
            present[shifted] = True
            remap = np.cumsum(present) - 1
            ids = np.flatnonzero(present) + low
            return remap[shifted], tuple(str(v) for v in ids.tolist())
        uniq, inverse = np.unique(values, return_inverse=True)
        return inverse.astype(np.int64).ravel(), tuple(str(v) for v in uniq.tolist())
    codes, names = _categorize(column)
    present = _present(codes, names)
    return _remap(codes, names, present), tuple(present)


def _lookup(codes: IntArray, names: Sequence[str], table: dict[str, int], null: int) -> IntArray:
    """Map codes through a name -> value table (`null` for null codes)."""
    values = np.array([table[name] for name in names] + [null], dtype=np.int64)
    return values[np.where(codes >= 0, codes, len(names))]


def encode_reviews(
    reviews: pl.DataFrame,
    *,
    contestants: Sequence[str] | None = None,
    reviewers: Sequence[str] | None = None,
) -> ReviewSet:
    """Integer-code a reviews frame (columns of the log's `reviews` table).

    Needs `question_id, model_a, model_b, reviewer, verdict`; `status` is used
    when present. When `contestants` / `reviewers` are given, rows naming any
    other model or reviewer are left out (a model dropped from the tournament
    leaves the leaderboard). Raises ValueError on a missing value, an unknown
    verdict or a model reviewed against itself.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in reviews.columns]
    if missing:
        raise ValueError(f"reviews frame lacks column(s): {', '.join(missing)}")
    a_codes, a_names = _categorize(reviews["model_a"])
    b_codes, b_names = _categorize(reviews["model_b"])
    r_codes, r_names = _categorize(reviews["reviewer"])
    if contestants is None:
        contestant_names = tuple(
            sorted(set(_present(a_codes, a_names)) | set(_present(b_codes, b_names)))
        )
    else:
        contestant_names = tuple(dict.fromkeys(contestants))
    if reviewers is None:
        reviewer_names = tuple(_present(r_codes, r_names))
    else:
        reviewer_names = tuple(dict.fromkeys(reviewers))
    model_a = _remap(a_codes, a_names, contestant_names)
    model_b = _remap(b_codes, b_names, contestant_names)
    reviewer = _remap(r_codes, r_names, reviewer_names)
    for column, codes in (("model_a", a_codes), ("model_b", b_codes), ("reviewer", r_codes)):
        if (codes < 0).any():
            raise ValueError(f"column {column!r} has a missing value")
    keep = (model_a >= 0) & (model_b >= 0) & (reviewer >= 0)
    if (keep & (model_a == model_b)).any():
        row = int(np.flatnonzero(keep & (model_a == model_b))[0])
        raise ValueError(f"model {contestant_names[model_a[row]]!r} is reviewed against itself")

    v_codes, v_names = _categorize(reviews["verdict"])
    v_used = _present(v_codes[keep], v_names)
    unknown = [name for name in v_used if name not in _KNOWN_VERDICTS]
    if unknown:
        raise ValueError(f"unknown verdict {unknown[0]!r} (expected A, B, tie, invalid)")
    # Kind of each verdict: 0 counted, 1 unreadable, 2 no verdict (failed call).
    kind = _lookup(v_codes, v_names, {n: int(n == "invalid") for n in v_names}, 2)
    if "status" in reviews.columns:
        s_codes, s_names = _categorize(reviews["status"])
        status = _lookup(s_codes, s_names, {n: _STATUS_KIND.get(n, 0) for n in s_names}, 0)
        kind = np.maximum(kind, status)
    is_failed = keep & (kind == 2)
    is_invalid = keep & (kind == 1)
    counted = keep & (kind == 0)

    n_rev = len(reviewer_names)
    answered = np.bincount(reviewer[keep & ~is_failed], minlength=n_rev).astype(np.int64)
    invalid_per = np.bincount(reviewer[is_invalid], minlength=n_rev).astype(np.int64)
    position = {name: i for i, name in enumerate(contestant_names)}
    as_contestant = np.array([position.get(name, -1) for name in reviewer_names], dtype=np.int64)
    question_column = reviews["question_id"]
    if question_column.null_count():
        raise ValueError("column 'question_id' has a missing value")
    everything = bool(counted.all())
    question, questions = _question_codes(
        question_column if everything else question_column.filter(pl.Series(counted))
    )
    scores = _lookup(v_codes, v_names, {n: _SCORE_OF_VERDICT.get(n, 0) for n in v_names}, 0)
    select = slice(None) if everything else counted
    return ReviewSet(
        contestants=contestant_names,
        reviewers=reviewer_names,
        questions=questions,
        question=question,
        model_a=model_a[select],
        model_b=model_b[select],
        reviewer=reviewer[select],
        score=scores[select].astype(np.int8),
        reviewer_as_contestant=as_contestant,
        n_rows=int(keep.sum()),
        n_invalid=int(is_invalid.sum()),
        n_failed=int(is_failed.sum()),
        invalid_per_reviewer=invalid_per,
        answered_per_reviewer=answered,
    )
