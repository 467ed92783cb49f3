"""Box-drawn tables of `arena status` and `arena plan`, drawn by polars.

polars, which these commands load anyway to read the log, draws the table;
rich (which `arena leaderboard` uses for its coloured views) is not loaded
for them: about 25 ms of a command that takes half a second. Cells are given
as text, padded to their column's width (left for the columns named `left`,
right for the others, numbers among them), so polars' own alignment rules do
not apply; nothing is cut to fit a terminal.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import polars as pl

__all__ = ["box_table"]

# The widest table polars draws (its width is a 16-bit number).
_WIDEST = 65_535


def box_table(
    title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], *, left: Collection[str]
) -> str:
    """`rows` (a cell of text per column) as a box-drawn table under `title`."""
    widths = [max([len(name), *(len(row[k]) for row in rows)]) for k, name in enumerate(columns)]
    cells = {
        name: [row[k].ljust(widths[k]) if name in left else row[k].rjust(widths[k]) for row in rows]
        for k, name in enumerate(columns)
    }
    frame = pl.DataFrame(cells, schema=dict.fromkeys(columns, pl.String))
    with pl.Config(
        tbl_formatting="UTF8_FULL_CONDENSED",
        tbl_hide_column_data_types=True,
        tbl_hide_dataframe_shape=True,
        tbl_hide_dtype_separator=True,
        tbl_rows=-1,
        tbl_cols=-1,
        # As wide as the cells and their borders: nothing is cut to fit a width.
        tbl_width_chars=min(_WIDEST, sum(widths) + 3 * len(columns) + 1),
        fmt_str_lengths=max(widths),
    ):
        return f"{title}\n{frame}"
