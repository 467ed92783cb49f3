"""`arena leaderboard DIR --history` and `--diff`: the history table as tables, markdown, JSON."""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from rich import box
from rich.console import Console, JustifyMethod
from rich.table import Table

from arena.config import ConfigError
from arena.nightly._history import (
    RATING_FIELDS,
    ModelChange,
    diff_snapshots,
    read_history,
    snapshot_ids,
)

__all__ = ["HistoryView", "history_view"]

# Snapshot columns (the same on every row of a snapshot).
_SNAPSHOT_FIELDS = (
    "snapshot",
    "at",
    "command",
    "config_hash",
    "n_models",
    "n_questions",
    "reviews",
    "invalid",
    "failed",
    "calls_planned",
    "calls_open",
)

_TEXT_COLUMNS = {"model", "time", "command", "config", "move"}

# Snapshots shown as columns of the --history table (JSON has them all).
TABLE_SNAPSHOTS = 6


@dataclass
class _Section:
    title: str
    header: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


def _stamp(at: float) -> str:
    return time.strftime("%m-%d %H:%M", time.localtime(at))


def _num(value: float | None, digits: int = 0) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.{digits}f}"


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


@dataclass
class HistoryView:
    """The history of a run directory, ready to show as `--history` or `--diff`."""

    directory: Path
    history: pl.DataFrame
    diff: bool

    def _snapshots(self) -> list[dict[str, Any]]:
        ids = snapshot_ids(self.history)
        out: list[dict[str, Any]] = []
        for sid in ids:
            rows = self.history.filter(pl.col("snapshot") == sid).sort("rank")
            meta = {k: _clean(rows[k][0]) for k in _SNAPSHOT_FIELDS}
            meta["models"] = [
                {"model": r["model"], "rank": r["rank"], **{k: _clean(r[k]) for k in RATING_FIELDS}}
                for r in rows.iter_rows(named=True)
            ]
            out.append(meta)
        return out

    def _pair(self) -> tuple[dict[str, Any] | None, dict[str, Any], list[ModelChange]]:
        snaps = self._snapshots()
        after = snaps[-1]
        before = snaps[-2] if len(snaps) > 1 else None
        changes = diff_snapshots(
            self.history, before["snapshot"] if before else "", after["snapshot"]
        )
        return before, after, changes

    def to_json(self) -> dict[str, Any]:
        """`--history`: every snapshot with its models; `--diff`: the last two and the changes."""
        if not self.diff:
            return {"directory": str(self.directory), "snapshots": self._snapshots()}
        before, after, changes = self._pair()
        strip = ("models",)
        return {
            "directory": str(self.directory),
            "before": None
            if before is None
            else {k: v for k, v in before.items() if k not in strip},
            "after": {k: v for k, v in after.items() if k not in strip},
            "config_changed": before is not None and before["config_hash"] != after["config_hash"],
            "models": [c.to_json() for c in changes],
        }

    def _sections(self) -> tuple[str, list[_Section]]:
        return self._diff_sections() if self.diff else self._history_sections()

    def _history_sections(self) -> tuple[str, list[_Section]]:
        snaps = self._snapshots()
        shown = snaps[-TABLE_SNAPSHOTS:]
        latest = {m["model"]: m for m in snaps[-1]["models"]}
        order = [m["model"] for m in snaps[-1]["models"]]
        for snap in reversed(snaps):
            order += [m["model"] for m in snap["models"] if m["model"] not in order]
        rows = []
        for model in order:
            cells = []
            for snap in shown:
                entry = next((m for m in snap["models"] if m["model"] == model), None)
                cells.append("-" if entry is None else f"{_num(entry['bt'])} #{entry['rank']}")
            now = latest.get(model)
            ci = "dropped" if now is None else f"{_num(now['bt_ci_low'])}-{_num(now['bt_ci_high'])}"
            rows.append([model, *cells, ci])
        ratings = _Section(
            "Bradley-Terry rating and rank per snapshot",
            [
                "model",
                *[str(len(snaps) - len(shown) + i + 1) for i in range(len(shown))],
                "95% CI now",
            ],
            rows,
            ["Columns are snapshots, oldest first (numbered as below); '-' = not ranked then."],
        )
        meta_rows = [
            [
                str(i),
                _stamp(s["at"]),
                s["command"],
                s["config_hash"][:8],
                str(s["n_models"]),
                str(s["reviews"]),
                f"{s['calls_open']}/{s['calls_planned']}",
            ]
            for i, s in enumerate(snaps, 1)
        ][-TABLE_SNAPSHOTS:]
        meta = _Section(
            "Snapshots",
            ["#", "time", "command", "config", "models", "reviews", "open calls"],
            meta_rows,
            [f"{len(snaps)} snapshots; the JSON format has all of them."]
            if len(snaps) > TABLE_SNAPSHOTS
            else [],
        )
        return f"Rating history of {self.directory}", [ratings, meta]

    def _diff_sections(self) -> tuple[str, list[_Section]]:
        before, after, changes = self._pair()
        rows = []
        for c in changes:
            if c.status != "kept":
                move = c.status
            else:
                assert c.rank_move is not None
                move = (
                    "="
                    if c.rank_move == 0
                    else (f"up {c.rank_move}" if c.rank_move > 0 else f"down {-c.rank_move}")
                )
            change = "-" if c.bt_change is None else f"{c.bt_change:+.1f}"
            rows.append(
                [
                    "-" if c.rank_after is None else str(c.rank_after),
                    c.model,
                    "-" if c.rank_before is None else str(c.rank_before),
                    move,
                    _num(c.bt_before, 1),
                    _num(c.bt_after, 1),
                    change,
                ]
            )
        notes = []
        if before is None:
            notes.append("Only one snapshot so far: every model is new.")
        else:
            notes.append(
                f"From {_stamp(before['at'])} ({before['command']}, config "
                f"{before['config_hash'][:8]}) to {_stamp(after['at'])} "
                f"({after['command']}, config {after['config_hash'][:8]})."
            )
            if before["config_hash"] != after["config_hash"]:
                notes.append("The tournament config changed between the two snapshots.")
        section = _Section(
            "Changes since the previous snapshot",
            ["#", "model", "was", "move", "BT before", "BT now", "change"],
            rows,
            notes,
        )
        return f"Leaderboard diff of {self.directory}", [section]

    def markdown(self) -> str:
        """The view as GitHub-flavoured markdown."""
        title, sections = self._sections()
        lines = [f"# {title}", ""]
        for s in sections:
            lines += [
                f"## {s.title}",
                "",
                "| " + " | ".join(s.header) + " |",
                "|" + "|".join("---" for _ in s.header) + "|",
            ]
            lines += ["| " + " | ".join(row) + " |" for row in s.rows]
            lines.append("")
            for note in s.notes:
                lines += [note, ""]
        return "\n".join(lines).rstrip() + "\n"

    def print_table(self, console: Console) -> None:
        """Print the view as rich tables."""
        title, sections = self._sections()
        console.print(f"[bold]{title}[/bold]", highlight=False)
        for s in sections:
            table = Table(title=s.title, title_justify="left", box=box.SIMPLE_HEAD)
            for head in s.header:
                justify: JustifyMethod = "left" if head in _TEXT_COLUMNS else "right"
                table.add_column(head, justify=justify, no_wrap=True)
            for row in s.rows:
                table.add_row(*row)
            console.print()
            console.print(table)
            for note in s.notes:
                console.print(note, highlight=False)


def history_view(directory: str | os.PathLike[str], *, diff: bool) -> HistoryView:
    """The history of run directory DIR; ConfigError when it has none."""
    folder = Path(directory)
    if not (folder / "log").is_dir():
        raise ConfigError(folder, "", "not a run directory (no log/)")
    history = read_history(folder)
    if not history.height:
        raise ConfigError(
            folder,
            "",
            "no history yet: each completed `arena run` adds a snapshot of the leaderboard",
        )
    return HistoryView(folder, history, diff)
