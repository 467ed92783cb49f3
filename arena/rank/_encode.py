"""Turn a reviews frame into integer-coded numpy arrays, once, for all the math.

Every rating and diagnostic in `arena.rank` works on a `ReviewSet`: contestants,
reviewers and questions replaced by dense integer codes, verdicts by the PRD
score (-1 = position A wins, 0 = tie, +1 = position B wins). Reviews without a
verdict (`invalid`, `failed`) are counted here and never become battles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

__all__ = ["REQUIRED_COLUMNS", "STYLE_FEATURES", "ReviewSet", "encode_reviews"]

IntArray = NDArray[np.int64]
CodeArray = NDArray[np.int32]
FloatArray = NDArray[np.float64]

REQUIRED_COLUMNS = ("question_id", "model_a", "model_b", "reviewer", "verdict")
# Style features of the two answers, as columns `<name>_a` and `<name>_b`
# (length in any unit; counts of markdown headers, list items and bold spans).
STYLE_FEATURES = ("length", "headers", "lists", "bold")

_KNOWN_VERDICTS = ("A", "B", "tie", "invalid")
# Outcome of a review: its score + 1 (0, 1, 2) when counted, else one of these.
_INVALID, _FAILED, _LEFT_OUT = 3, 4, 5
_OUTCOME_OF_VERDICT = {"A": 0, "tie": 1, "B": 2, "invalid": _INVALID}
_OUTCOME_OF_STATUS = {"invalid": _INVALID, "failed": _FAILED}


@dataclass(frozen=True, eq=False)
class ReviewSet:
    """Integer-coded reviews: the counted battles plus the counts of the rest.

    `question`, `model_a`, `model_b`, `reviewer` and `score` describe the counted
    battles only (valid verdicts). Model codes index `contestants`, reviewer
    codes index `reviewers`, question codes run over `0..n_questions-1`; all
    are int32 (widen before multiplying codes together).
    """

    contestants: tuple[str, ...]
    reviewers: tuple[str, ...]
    questions: tuple[str, ...]
    question: CodeArray
    model_a: CodeArray
    model_b: CodeArray
    reviewer: CodeArray
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
    # Style features of the answers of each counted battle (columns follow
    # `style_names`; NaN where a row lacks them), when the frame has them.
    style_names: tuple[str, ...] = ()
    style_a: FloatArray | None = None
    style_b: FloatArray | None = None
    # Reviews of a reviewer's own battles left out (`exclude_self`).
    n_self_excluded: int = 0

    @property
    def style_missing(self) -> int:
        """Counted battles without style features (all of them when there are none)."""
        if self.style_a is None or self.style_b is None:
            return self.n_battles
        lacking = np.isnan(self.style_a).any(axis=1) | np.isnan(self.style_b).any(axis=1)
        return int(lacking.sum())

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


@dataclass(frozen=True)
class _Column:
    """A column as small integer codes (-1 for null) and the name of each code."""

    codes: NDArray[np.integer[Any]]
    names: list[str]
    has_null: bool


def _categorize(column: pl.Series) -> _Column:
    if isinstance(column.dtype, pl.Enum):
        names = [str(v) for v in column.dtype.categories.to_list()]
        physical = column.to_physical()
    else:
        text = column.cast(pl.String)
        names = [str(v) for v in text.drop_nulls().unique().sort().to_list()]
        physical = text.cast(pl.Enum(names)).to_physical()
    if physical.null_count():
        return _Column(physical.cast(pl.Int64).fill_null(-1).to_numpy(), names, True)
    return _Column(physical.to_numpy(), names, False)


def _present(column: _Column) -> list[str]:
    """The names that occur in the column, in code order."""
    codes = column.codes[column.codes >= 0] if column.has_null else column.codes
    used = np.bincount(codes, minlength=len(column.names)) > 0
    return [name for name, flag in zip(column.names, used.tolist(), strict=True) if flag]


def _lookup(
    column: _Column, table: Mapping[str, int], default: int, null: int
) -> NDArray[np.integer[Any]]:
    """Map each code's name through `table` (`default` if absent, `null` for null)."""
    values = [table.get(name, default) for name in column.names] + [null]
    dtype = np.int8 if max(values, default=0) < 128 and min(values, default=0) >= -128 else np.int32
    lookup = np.array(values, dtype=dtype)
    codes = column.codes
    if column.has_null:
        codes = np.where(codes >= 0, codes, len(column.names))
    out: NDArray[np.integer[Any]] = lookup[codes]
    return out


def _remap(column: _Column, target: Sequence[str]) -> CodeArray:
    """Codes against `target` (-1 where absent or null)."""
    if not column.has_null and column.names == list(target):
        return column.codes.astype(np.int32)
    position = {name: i for i, name in enumerate(target)}
    return _lookup(column, position, -1, -1).astype(np.int32, copy=False)


def _question_codes(column: pl.Series) -> tuple[CodeArray, tuple[str, ...]]:
    """Dense question codes and the question id (as text) of each code."""
    if column.dtype.is_integer():
        values = column.to_numpy().astype(np.int64, copy=False)
        if values.size == 0:
            return values.astype(np.int32), ()
        low, high = int(values.min()), int(values.max())
        if high - low < 4 * values.size + 1024:
            shifted = values - low if low else values
            present = np.bincount(shifted, minlength=high - low + 1) > 0
            ids_text = tuple(str(v) for v in (np.flatnonzero(present) + low).tolist())
            if present.all():
                return shifted.astype(np.int32), ids_text
            remap = (np.cumsum(present) - 1).astype(np.int32)
            return remap[shifted], ids_text
        uniq, inverse = np.unique(values, return_inverse=True)
        return inverse.astype(np.int32).ravel(), tuple(str(v) for v in uniq.tolist())
    categories = _categorize(column)
    used = _present(categories)
    return _remap(categories, used), tuple(used)


def encode_reviews(
    reviews: pl.DataFrame,
    *,
    contestants: Sequence[str] | None = None,
    reviewers: Sequence[str] | None = None,
    exclude_self: bool = False,
) -> ReviewSet:
    """Integer-code a reviews frame (columns of the log's `reviews` table).

    Needs `question_id, model_a, model_b, reviewer, verdict`; `status` is used
    when present. When `contestants` / `reviewers` are given, rows naming any
    other model or reviewer are left out (a model dropped from the tournament
    leaves the leaderboard). Raises ValueError on a missing value, an unknown
    verdict or a model reviewed against itself. Columns may be strings or
    polars Enums (the fast path: no string work at all).

    With `exclude_self`, reviews by a reviewer of a battle it takes part in
    are left out (counted in `n_self_excluded`). Columns `length_a` and
    `length_b` (and optionally `headers_*`, `lists_*`, `bold_*`, see
    STYLE_FEATURES) give the answers' style for style control.
    """
    missing = [c for c in REQUIRED_COLUMNS if c not in reviews.columns]
    if missing:
        raise ValueError(f"reviews frame lacks column(s): {', '.join(missing)}")
    for name in ("question_id", "model_a", "model_b", "reviewer"):
        if reviews[name].null_count():
            raise ValueError(f"column {name!r} has a missing value")
    column_a = _categorize(reviews["model_a"])
    column_b = _categorize(reviews["model_b"])
    column_r = _categorize(reviews["reviewer"])
    if contestants is None:
        contestant_names = tuple(sorted(set(_present(column_a)) | set(_present(column_b))))
    else:
        contestant_names = tuple(dict.fromkeys(contestants))
    if reviewers is None:
        reviewer_names = tuple(_present(column_r))
    else:
        reviewer_names = tuple(dict.fromkeys(reviewers))
    model_a = _remap(column_a, contestant_names)
    model_b = _remap(column_b, contestant_names)
    reviewer = _remap(column_r, reviewer_names)
    keep = None
    if contestants is not None or reviewers is not None:
        keep = (model_a >= 0) & (model_b >= 0) & (reviewer >= 0)
    position = {name: i for i, name in enumerate(contestant_names)}
    as_contestant = np.array([position.get(name, -1) for name in reviewer_names], dtype=np.int64)
    n_self = 0
    if exclude_self and len(reviewer_names):
        judge_as = as_contestant[np.where(reviewer >= 0, reviewer, 0)]
        own = (reviewer >= 0) & (judge_as >= 0) & ((judge_as == model_a) | (judge_as == model_b))
        if keep is not None:
            own &= keep
        n_self = int(own.sum())
        if n_self:
            keep = ~own if keep is None else keep & ~own
    same = model_a == model_b
    if keep is not None:
        same &= keep
    if same.any():
        row = int(np.flatnonzero(same)[0])
        raise ValueError(f"model {contestant_names[model_a[row]]!r} is reviewed against itself")

    verdicts = _categorize(reviews["verdict"])
    unknown = [name for name in verdicts.names if name not in _KNOWN_VERDICTS]
    if unknown:  # an unknown category may still be unused: look closer
        used = _present(
            verdicts
            if keep is None
            else _Column(verdicts.codes[keep], verdicts.names, verdicts.has_null)
        )
        unknown = [name for name in used if name not in _KNOWN_VERDICTS]
        if unknown:
            raise ValueError(f"unknown verdict {unknown[0]!r} (expected A, B, tie, invalid)")
    outcome = _lookup(verdicts, _OUTCOME_OF_VERDICT, _INVALID, _FAILED)
    if "status" in reviews.columns:
        status = _categorize(reviews["status"])
        outcome = np.maximum(outcome, _lookup(status, _OUTCOME_OF_STATUS, 0, 0))
    if keep is not None:
        outcome[~keep] = _LEFT_OUT
    tally = np.bincount(outcome, minlength=_LEFT_OUT + 1)
    n_counted = int(tally[:_INVALID].sum())
    counted = None if n_counted == outcome.size else outcome < _INVALID

    n_rev = len(reviewer_names)
    kept = reviewer if keep is None else reviewer[keep]
    rows_per_reviewer = np.bincount(kept, minlength=n_rev).astype(np.int64)
    invalid_per = np.bincount(reviewer[outcome == _INVALID], minlength=n_rev).astype(np.int64)
    failed_per = np.bincount(reviewer[outcome == _FAILED], minlength=n_rev).astype(np.int64)
    question_column = reviews["question_id"]
    if counted is not None:
        question_column = question_column.filter(pl.Series(counted))
    question, questions = _question_codes(question_column)
    counted_outcome = outcome if counted is None else outcome[counted]
    score: NDArray[np.int8] = counted_outcome.astype(np.int8) - np.int8(1)
    style_names, style_a, style_b = _style_columns(reviews, counted)
    return ReviewSet(
        contestants=contestant_names,
        reviewers=reviewer_names,
        questions=questions,
        question=question,
        model_a=model_a if counted is None else model_a[counted],
        model_b=model_b if counted is None else model_b[counted],
        reviewer=reviewer if counted is None else reviewer[counted],
        score=score,
        reviewer_as_contestant=as_contestant,
        n_rows=int(tally[:_LEFT_OUT].sum()),
        n_invalid=int(tally[_INVALID]),
        n_failed=int(tally[_FAILED]),
        invalid_per_reviewer=invalid_per,
        answered_per_reviewer=rows_per_reviewer - failed_per,
        style_names=style_names,
        style_a=style_a,
        style_b=style_b,
        n_self_excluded=n_self,
    )


def _style_columns(
    reviews: pl.DataFrame, counted: NDArray[np.bool_] | None
) -> tuple[tuple[str, ...], FloatArray | None, FloatArray | None]:
    """The style features present in both positions, for the counted battles."""
    names = tuple(
        name
        for name in STYLE_FEATURES
        if f"{name}_a" in reviews.columns and f"{name}_b" in reviews.columns
    )
    if "length" not in names:
        return (), None, None
    sides = []
    for side in ("a", "b"):
        columns = [
            reviews[f"{name}_{side}"].cast(pl.Float64, strict=False).to_numpy() for name in names
        ]
        values = np.column_stack(columns).astype(np.float64)
        if counted is not None:
            values = values[counted]
        sides.append(np.where(values >= 0, values, np.nan))
    return names, sides[0], sides[1]
