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
_VERDICT_KIND = {"A": 0, "B": 0, "tie": 0, "invalid": 1}


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
    """The names whose code occurs in `codes` (-1 = null, ignored), in code order."""
    used = np.bincount(codes + 1, minlength=len(names) + 1)[1:] > 0
    return [name for name, flag in zip(names, used.tolist(), strict=True) if flag]


def _remap(codes: IntArray, names: Sequence[str], target: Sequence[str]) -> IntArray:
    """Codes against `names` -> codes against `target` (-1 where absent or null)."""
    if list(names) == list(target):
        return codes
    position = {name: i for i, name in enumerate(target)}
    # The extra last entry serves code -1 (null).
    table = np.array([position.get(name, -1) for name in names] + [-1], dtype=np.int64)
    return table[codes]


def _question_codes(column: pl.Series) -> tuple[IntArray, tuple[str, ...]]:
    """Dense question codes and the question id (as text) of each code."""
    if column.dtype.is_integer():
        values = column.to_numpy().astype(np.int64)
        if values.size == 0:
            return values, ()
        low, high = int(values.min()), int(values.max())
        if high - low < 4 * values.size + 1024:
            shifted = values - low if low else values
            present = np.bincount(shifted, minlength=high - low + 1) > 0
            ids = np.flatnonzero(present) + low
            ids_text = tuple(str(v) for v in ids.tolist())
            if present.all():
                return shifted, ids_text
            return (np.cumsum(present) - 1)[shifted], ids_text
        uniq, inverse = np.unique(values, return_inverse=True)
        return inverse.astype(np.int64).ravel(), tuple(str(v) for v in uniq.tolist())
    codes, categories = _categorize(column)
    used = _present(codes, categories)
    return _remap(codes, categories, used), tuple(used)


def _lookup(codes: IntArray, names: Sequence[str], table: dict[str, int], null: int) -> IntArray:
    """Map codes (-1 = null) through a name -> value table (`null` for null codes)."""
    values = np.array([table[name] for name in names] + [null], dtype=np.int64)
    return values[codes]


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
    for column in ("question_id", "model_a", "model_b", "reviewer"):
        if reviews[column].null_count():
            raise ValueError(f"column {column!r} has a missing value")
    a_codes, a_names = _categorize(reviews["model_a"])
    b_codes, b_names = _categorize(reviews["model_b"])
    r_codes, r_names = _categorize(reviews["reviewer"])
    if contestants is None:
        seen = set(_present(a_codes, a_names)) | set(_present(b_codes, b_names))
        contestant_names = tuple(sorted(seen))
    else:
        contestant_names = tuple(dict.fromkeys(contestants))
    if reviewers is None:
        reviewer_names = tuple(_present(r_codes, r_names))
    else:
        reviewer_names = tuple(dict.fromkeys(reviewers))
    model_a = _remap(a_codes, a_names, contestant_names)
    model_b = _remap(b_codes, b_names, contestant_names)
    reviewer = _remap(r_codes, r_names, reviewer_names)
    filtered = contestants is not None or reviewers is not None
    keep = (model_a >= 0) & (model_b >= 0) & (reviewer >= 0) if filtered else None
    same = model_a == model_b
    if keep is not None:
        same &= keep
    if same.any():
        row = int(np.flatnonzero(same)[0])
        raise ValueError(f"model {contestant_names[model_a[row]]!r} is reviewed against itself")

    v_codes, v_names = _categorize(reviews["verdict"])
    v_used = _present(v_codes if keep is None else v_codes[keep], v_names)
    unknown = [name for name in v_used if name not in _KNOWN_VERDICTS]
    if unknown:
        raise ValueError(f"unknown verdict {unknown[0]!r} (expected A, B, tie, invalid)")
    # Kind of each review: 0 counted, 1 unreadable verdict, 2 no verdict (failed call).
    kind_of = {n: _VERDICT_KIND.get(n, 0) for n in v_names}
    if "status" in reviews.columns:
        s_codes, s_names = _categorize(reviews["status"])
        status_of = {n: _STATUS_KIND.get(n, 0) for n in s_names}
        kind = np.maximum(
            _lookup(v_codes, v_names, kind_of, 2), _lookup(s_codes, s_names, status_of, 0)
        )
    else:
        kind = _lookup(v_codes, v_names, kind_of, 2)
    if keep is not None:
        kind = np.where(keep, kind, 3)
    counts = np.bincount(kind, minlength=4)
    n_invalid, n_failed = int(counts[1]), int(counts[2])
    counted = kind == 0
    everything = bool(counts[0] == kind.size)

    n_rev = len(reviewer_names)
    row_reviewer = reviewer if keep is None else np.where(keep, reviewer, n_rev)
    per_kind = np.bincount(row_reviewer * 4 + kind, minlength=4 * (n_rev + 1))
    per_kind = per_kind[: 4 * n_rev].reshape(n_rev, 4) if n_rev else np.zeros((0, 4), np.int64)
    answered = (per_kind[:, 0] + per_kind[:, 1]).astype(np.int64)
    invalid_per = per_kind[:, 1].astype(np.int64)
    position = {name: i for i, name in enumerate(contestant_names)}
    as_contestant = np.array([position.get(name, -1) for name in reviewer_names], dtype=np.int64)
    question_column = reviews["question_id"]
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
        n_rows=int(counts[:3].sum()),
        n_invalid=n_invalid,
        n_failed=n_failed,
        invalid_per_reviewer=invalid_per,
        answered_per_reviewer=answered,
    )
