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

    With `--baseline`, each row also carries `baseline`, the JSON `vs_baseline`
    entry's figures as `vs_baseline_<field>` and the length-controlled ones as
    `lc_win_rate`, `lc_ci_low`, `lc_ci_high` (empty for the baseline itself).
    With `--by category`, a first column `category`: the whole leaderboard's
    rows are `(all)`, then each category's rows (their figures as in JSON).
    """
    data = leaderboard_dict(board)
    models = data["models"]
    rows = [{"rank": k, **row} for k, row in enumerate(models, start=1)]
    if data.get("vs_baseline") is not None:
        # Each model's record against the baseline, on its row (`lc_*` as named in JSON).
        against = {entry["model"]: entry for entry in data["vs_baseline"]}
        for row in rows:
            entry = against.get(row["model"], {})
            row["baseline"] = data["baseline"]
            for key, value in entry.items():
                if key != "model":
                    row[key if key.startswith("lc_") else f"vs_baseline_{key}"] = value
    if board.by_category is None:
        return rows_csv(rows)
    every = [{"category": "(all)", **row} for row in rows]
    for part in board.by_category:
        every += [{"category": part.category, **row} for row in part.models]
    return rows_csv(every)
