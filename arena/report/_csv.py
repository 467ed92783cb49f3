"""The leaderboard as CSV: one row per model, every number at full precision."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping
from typing import Any

from arena.report._leaderboard import Leaderboard, leaderboard_dict

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
    """The models of the leaderboard JSON, best first, with their rank, as CSV."""
    models = leaderboard_dict(board)["models"]
    return rows_csv({"rank": k, **row} for k, row in enumerate(models, start=1))
