"""The leaderboard as CSV: one row per model, every number at full precision."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from typing import Any

from arena.report._board import Leaderboard
from arena.report._json import leaderboard_dict

__all__ = ["render_csv", "rows_csv"]


def _value(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, float):
        return repr(value)  # shortest text that reads back as the same float
    if isinstance(value, list | tuple):
        return ";".join(str(_value(v)) for v in value)
    return value


def rows_csv(rows: Iterable[Mapping[str, Any]]) -> str:
    """Dicts as CSV with a header: the union of their keys, in first-seen order."""
    materialised = list(rows)
    columns = list(dict.fromkeys(k for row in materialised for k in row))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for row in materialised:
        writer.writerow([_value(row.get(c)) for c in columns])
    return out.getvalue()


def render_csv(board: Leaderboard) -> str:
    """The models of the leaderboard JSON, best first, with their rank, as CSV.

    With `--by category`, a first column `category`: the whole leaderboard's
    rows are `(all)`, then each category's rows (their figures as in JSON).
    """
    models = leaderboard_dict(board)["models"]
    rows = [{"rank": k, **row} for k, row in enumerate(models, start=1)]
    if board.by_category is None:
        return rows_csv(rows)
    every = [{"category": "(all)", **row} for row in rows]
    for part in board.by_category:
        every += [{"category": part.category, **row} for row in part.models]
    return rows_csv(every)
