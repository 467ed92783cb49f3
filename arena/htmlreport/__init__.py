"""`arena report`: a run as one self-contained HTML file (tables, inline SVG charts, battles).

`build_report(DIR)` gathers the data (the leaderboard, pairwise counts,
reviewer diagnostics, history, calls and the most disputed battles);
`render_report` turns it into an HTML page that needs nothing else to open
(no network, no script); `write_report` does both and writes the file.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from arena.htmlreport._data import DEFAULT_BATTLES, ReportData, build_report
from arena.htmlreport._page import render_report
from arena.htmlreport._svg import Series, heatmap, interval_chart, line_chart, trajectory_chart

__all__ = [
    "DEFAULT_BATTLES",
    "ReportData",
    "Series",
    "build_report",
    "heatmap",
    "interval_chart",
    "line_chart",
    "render_report",
    "trajectory_chart",
    "write_report",
]


def write_report(data: ReportData, path: str | os.PathLike[str]) -> Path:
    """Render the report and write it to `path` atomically (temporary file, then rename)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        os.fchmod(fd, 0o644)
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(render_report(data))
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target
