"""Leaderboards: from a run directory or an imported reviews file, to table / markdown / JSON / CSV.

`build_leaderboard` reads the input (raising `LeaderboardInputError`, a
`ConfigError`, on bad input), ranks it with `arena.rank`, and returns a
`Leaderboard`; `render_table`, `render_markdown` and `render_json` show it.
"""

from arena.report._board import RANKINGS, STYLE_RANKING, Leaderboard, LeaderboardOptions
from arena.report._categories import CategoryRanking, category_rows
from arena.report._csv import render_csv, rows_csv
from arena.report._inputs import (
    IMPORT_COLUMNS,
    LeaderboardInputError,
    RunData,
    check_one_tournament,
    latest_rows,
    load_reviews_file,
    load_run,
    load_runs,
    load_single_grades,
)
from arena.report._json import leaderboard_dict
from arena.report._leaderboard import build_leaderboard, rank_frame, with_answer_style
from arena.report._render import render_json, render_markdown, render_table

__all__ = [
    "IMPORT_COLUMNS",
    "RANKINGS",
    "STYLE_RANKING",
    "CategoryRanking",
    "Leaderboard",
    "LeaderboardInputError",
    "LeaderboardOptions",
    "RunData",
    "build_leaderboard",
    "category_rows",
    "check_one_tournament",
    "latest_rows",
    "leaderboard_dict",
    "load_reviews_file",
    "load_run",
    "load_runs",
    "load_single_grades",
    "rank_frame",
    "render_csv",
    "render_json",
    "render_markdown",
    "render_table",
    "rows_csv",
    "with_answer_style",
]
