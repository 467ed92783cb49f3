"""Turn a reviews frame into integer-coded numpy arrays, once, for all the math.

Every rating and diagnostic in `arena.rank` works on a `ReviewSet`: contestants,
reviewers and questions replaced by dense integer codes, verdicts by the PRD
score (-1 = position A wins, 0 = tie, +1 = position B wins). Reviews without a
verdict (`invalid`, `failed`) are counted here and never become battles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from arena.rank._encode_rows import FAILED, INVALID, LEFT_OUT, UNKNOWN, code_dtype, row_pass

__all__ = ["REQUIRED_COLUMNS", "STYLE_FEATURES", "ReviewSet", "encode_reviews"]

IntArray = NDArray[np.int64]
CodeArray = NDArray[np.signedinteger[Any]]
FloatArray = NDArray[np.float64]

REQUIRED_COLUMNS = ("question_id", "model_a", "model_b", "reviewer", "verdict")
# Style features of the two answers, as columns `<name>_a` and `<name>_b`
# (length in any unit; counts of markdown headers, list items and bold spans).
STYLE_FEATURES = ("length", "headers", "lists", "bold")

# Outcome of a review: its score + 1 (0, 1, 2) when counted, else INVALID,
# FAILED or LEFT_OUT (see arena.rank._encode_rows).
_OUTCOME_OF_VERDICT = {"A": 0, "tie": 1, "B": 2, "invalid": INVALID}
_OUTCOME_OF_STATUS = {"invalid": INVALID, "failed": FAILED}


@dataclass(frozen=True, eq=False)
class ReviewSet:
    """Integer-coded reviews: the counted battles plus the counts of the rest.

    `question`, `model_a`, `model_b`, `reviewer` and `score` describe the counted
    battles only (valid verdicts). Model codes index `contestants`, reviewer
    codes index `reviewers`, question codes run over `0..n_questions-1`. Each
    is the narrowest signed integer type that holds its codes (int8 up to 128
    names, int16 up to 32,768, then int32: a byte a battle for a tournament's
    models): widen before doing arithmetic with them (`astype(np.int64)`), as a
    product or sum of two int8 codes overflows.
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
    # Graded verdicts of the counted battles, when the frame has `p_a` or
    # `weight`: the share of a win credited to position A (in [0, 1]; where a
    # row has none, 1 / 0.5 / 0 from its verdict) and the battle's weight
    # (1 where a row has none). None: every battle is a plain -1/0/1 of weight 1.
    p_a: FloatArray | None = None
    weight: FloatArray | None = None

    @property
    def graded(self) -> bool:
        """Whether any battle carries a graded share or a weight."""
        return self.p_a is not None or self.weight is not None

    @cached_property
    def style_missing(self) -> int:
        """Counted battles without style features (all of them when there are none;
        computed once: two NaN scans of a million rows' features)."""
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
    """A column as small integer codes (-1 for null) and the name of each code.

    `ordered` says the code order is the column's own order (an Enum's
    categories); otherwise codes follow first appearance and names sort by text.
    """

    codes: NDArray[np.integer[Any]]
    names: list[str]
    ordered: bool = False


def _categorize_all(columns: Sequence[pl.Series]) -> list[_Column]:
    """Code every column: Enums by their categories, anything else by its text."""
    out: list[_Column | None] = [None] * len(columns)
    texts: list[int] = []
    for i, column in enumerate(columns):
        if isinstance(column.dtype, pl.Enum):
            names = [str(v) for v in column.dtype.categories.to_list()]
            physical = column.to_physical()
            if physical.null_count():  # null is code -1: the narrowest signed type
                signed = (
                    pl.Int8
                    if len(names) < 1 << 7
                    else pl.Int16
                    if len(names) < 1 << 15
                    else pl.Int32
                )
                codes = physical.cast(signed).fill_null(-1).to_numpy()
            else:  # the Enum's own codes (a byte a row for a few names), not a wider copy
                codes = physical.to_numpy()
            out[i] = _Column(codes, names, ordered=True)
        else:
            texts.append(i)
    for i in texts:
        codes, names = _text_codes(columns[i])
        out[i] = _Column(codes, names)
    return [column for column in out if column is not None]


def _text_codes(column: pl.Series) -> tuple[NDArray[np.integer[Any]], list[str]]:
    """A column as text: codes in order of first appearance (-1 for null) and their texts.

    Hashing in polars (its distinct values, then a cast to an Enum of them), so no
    row is visited by the interpreter.
    """
    text = column if column.dtype == pl.String else column.cast(pl.String)
    names = text.unique(maintain_order=True).drop_nulls()
    physical = text.cast(pl.Enum(names)).to_physical()
    if physical.null_count():
        physical = physical.cast(pl.Int32).fill_null(-1)
    return physical.to_numpy(), names.to_list()


def _present(column: _Column) -> list[str]:
    """The names that occur in the column: in code order for an Enum, else sorted
    (a text column's codes are its distinct values, so every name occurs)."""
    if not column.ordered:
        return sorted(column.names)
    codes = column.codes[column.codes >= 0]
    used = np.bincount(codes, minlength=len(column.names)) > 0
    return [name for name, flag in zip(column.names, used.tolist(), strict=True) if flag]


def _table(column: _Column, table: Mapping[str, int], default: int, dtype: Any) -> NDArray[Any]:
    """Lookup table from the column's codes: each name through `table`."""
    return np.array([table.get(name, default) for name in column.names], dtype=dtype)


def _position(column: _Column, target: Sequence[str]) -> CodeArray:
    """Lookup table from the column's codes to indices in `target` (-1 if absent)."""
    where = {name: i for i, name in enumerate(target)}
    return _table(column, where, -1, np.int32)


def _codes(column: _Column) -> NDArray[np.integer[Any]]:
    """The column's codes as they are: the row pass reads any integer type, so a
    million rows of byte codes are not widened to four bytes each."""
    return column.codes


def _integer_questions(values: NDArray[np.int64]) -> tuple[CodeArray, tuple[str, ...]]:
    """Dense codes of integer question ids (numeric order) and each code's id as text."""
    if values.size == 0:
        return values.astype(np.int8), ()
    low, high = int(values.min()), int(values.max())
    if high - low < 4 * values.size + 1024:
        shifted = values - low if low else values
        present = np.bincount(shifted, minlength=high - low + 1) > 0
        ids_text = tuple(str(v) for v in (np.flatnonzero(present) + low).tolist())
        dtype = code_dtype(len(ids_text))
        if present.all():
            return shifted.astype(dtype), ids_text
        remap = (np.cumsum(present) - 1).astype(dtype)
        return remap[shifted], ids_text
    uniq, inverse = np.unique(values, return_inverse=True)
    return inverse.astype(code_dtype(uniq.size)).ravel(), tuple(str(v) for v in uniq.tolist())


def _text_questions(
    raw: NDArray[np.int64], coded: _Column, seen: NDArray[np.bool_]
) -> tuple[CodeArray, tuple[str, ...]]:
    """Dense codes (question ids in text order) of raw codes, of which `seen` occur."""
    if coded.ordered:
        order = list(range(len(coded.names)))
    else:
        order = sorted(range(len(coded.names)), key=coded.names.__getitem__)
    used = [code for code in order if seen[code]]
    dtype = code_dtype(len(used))
    remap = np.full(len(coded.names) + 1, -1, dtype=dtype)
    remap[used] = np.arange(len(used), dtype=dtype)
    return remap[raw], tuple(coded.names[code] for code in used)


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
    verdict or a model reviewed against itself. Columns may be strings (coded
    by polars, exactly) or polars Enums (their codes as they are).

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
    names = ["model_a", "model_b", "reviewer", "verdict"]
    if "status" in reviews.columns:
        names.append("status")
    numeric_questions = reviews["question_id"].dtype.is_integer()
    if not numeric_questions:
        names.append("question_id")
    coded = dict(zip(names, _categorize_all([reviews[n] for n in names]), strict=True))
    column_a, column_b, column_r = coded["model_a"], coded["model_b"], coded["reviewer"]
    if contestants is None:
        contestant_names = tuple(sorted(set(_present(column_a)) | set(_present(column_b))))
    else:
        contestant_names = tuple(dict.fromkeys(contestants))
    if reviewers is None:
        reviewer_names = tuple(_present(column_r))
    else:
        reviewer_names = tuple(dict.fromkeys(reviewers))
    position = {name: i for i, name in enumerate(contestant_names)}
    as_contestant = np.array([position.get(name, -1) for name in reviewer_names], dtype=np.int64)

    verdicts = coded["verdict"]
    outcome_of = {name: _OUTCOME_OF_VERDICT.get(name, UNKNOWN) for name in verdicts.names}
    status_codes: NDArray[np.integer[Any]] = np.zeros(0, dtype=np.int32)
    status_table = np.zeros(0, dtype=np.int8)
    if "status" in coded:
        status_codes = _codes(coded["status"])
        status_table = _table(coded["status"], _OUTCOME_OF_STATUS, 0, np.int8)
    raw_questions: NDArray[np.integer[Any]]
    if numeric_questions:
        raw_questions = reviews["question_id"].to_numpy().astype(np.int64, copy=False)
        question_codes = 0
    else:
        # The column's codes as they are (two bytes a row for up to 65,536 questions).
        raw_questions = coded["question_id"].codes
        question_codes = len(coded["question_id"].names)
    found = row_pass(
        (
            _codes(column_a),
            _codes(column_b),
            _codes(column_r),
            _codes(verdicts),
            status_codes,
        ),
        raw_questions,
        (
            _position(column_a, contestant_names),
            _position(column_b, contestant_names),
            _position(column_r, reviewer_names),
        ),
        (_table(verdicts, outcome_of, UNKNOWN, np.int8), status_table),
        as_contestant,
        exclude_self and bool(len(reviewer_names)),
        question_codes,
        len(contestant_names),
    )
    if found.self_row >= 0:
        row = found.self_row
        name = str(reviews["model_a"][row])
        raise ValueError(f"model {name!r} is reviewed against itself")
    if found.unknown_row >= 0:
        verdict = reviews["verdict"][found.unknown_row]
        raise ValueError(f"unknown verdict {verdict!r} (expected A, B, tie, invalid)")
    n = found.counted
    tally = found.tally
    if numeric_questions:
        question, questions = _integer_questions(found.question[:n])
    else:
        question, questions = _text_questions(
            found.question[:n], coded["question_id"], found.question_seen
        )
    counted_rows = None if n == reviews.height else found.row[:n]
    style_names, style_a, style_b = _style_columns(reviews, counted_rows)
    p_a, weight = _graded_columns(reviews, counted_rows, found.score[:n])
    kept, invalid_per, failed_per = found.per_reviewer
    return ReviewSet(
        contestants=contestant_names,
        reviewers=reviewer_names,
        questions=questions,
        question=question,
        model_a=found.model_a[:n],
        model_b=found.model_b[:n],
        reviewer=found.reviewer[:n],
        score=found.score[:n],
        reviewer_as_contestant=as_contestant,
        n_rows=int(tally[:LEFT_OUT].sum()),
        n_invalid=int(tally[INVALID]),
        n_failed=int(tally[FAILED]),
        invalid_per_reviewer=invalid_per,
        answered_per_reviewer=kept - failed_per,
        style_names=style_names,
        style_a=style_a,
        style_b=style_b,
        n_self_excluded=found.n_self_excluded,
        p_a=p_a,
        weight=weight,
    )


def _graded_columns(
    reviews: pl.DataFrame, counted: NDArray[np.integer[Any]] | None, score: NDArray[np.int8]
) -> tuple[FloatArray | None, FloatArray | None]:
    """`p_a` and `weight` of the counted battles; None for a column absent or all null."""
    out: list[FloatArray | None] = []
    for name in ("p_a", "weight"):
        if name not in reviews.columns or reviews[name].null_count() == reviews.height:
            out.append(None)
            continue
        values = reviews[name].cast(pl.Float64, strict=False).to_numpy().astype(np.float64)
        if counted is not None:
            values = values[counted]
        given = ~np.isnan(values)
        if name == "p_a":
            bad = given & ~((values >= 0.0) & (values <= 1.0))
            values = np.where(given, values, (1.0 - score.astype(np.float64)) / 2.0)
        else:
            bad = given & ~((values > 0.0) & np.isfinite(values))
            values = np.where(given, values, 1.0)
        if bad.any():
            expected = "in [0, 1]" if name == "p_a" else "positive"
            raise ValueError(f"{name} must be {expected}, not {values[np.argmax(bad)]!r}")
        out.append(values)
    return out[0], out[1]


def _style_columns(
    reviews: pl.DataFrame, counted: NDArray[np.integer[Any]] | None
) -> tuple[tuple[str, ...], FloatArray | None, FloatArray | None]:
    """The style features present in both positions, for the counted battles."""
    names = tuple(
        name
        for name in STYLE_FEATURES
        if f"{name}_a" in reviews.columns and f"{name}_b" in reviews.columns
    )
    if "length" not in names:
        return (), None, None
    rows = reviews.height if counted is None else counted.shape[0]
    sides = []
    for side in ("a", "b"):
        # Filled column by column: one (rows, K) array, no stacked copies of a big log.
        values = np.empty((rows, len(names)))
        for k, name in enumerate(names):
            column = reviews[f"{name}_{side}"].cast(pl.Float64, strict=False).to_numpy()
            values[:, k] = column if counted is None else column[counted]
        values[~(values >= 0)] = np.nan  # negative or missing: unknown
        sides.append(values)
    return names, sides[0], sides[1]
