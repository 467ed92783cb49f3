"""`arena leaderboard DIR --history` and `--diff [A..B]`: the history as tables, markdown, JSON."""

from __future__ import annotations

import json
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
from arena.rundir._attribution import describe_changes
from arena.rundir._history import (
    RATING_FIELDS,
    ModelChange,
    anchor_shift,
    diff_snapshots,
    read_history,
    select_range,
    snapshot_ids,
    snapshot_numbers,
)

__all__ = ["HistoryView", "history_view", "change_phrases"]

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
    "run_id",
    "tag",
    "rerun_answers",
    "rerun_reviews",
)

_TEXT_COLUMNS = {"model", "time", "command", "config", "move", "tag", "change", "status"}

# Snapshots shown as columns of the --history table (JSON has them all).
TABLE_SNAPSHOTS = 6

NOT_SIGNIFICANT = "n.s."


@dataclass
class _Section:
    title: str
    header: list[str]
    rows: list[list[str]]
    notes: list[str] = field(default_factory=list)


def _stamp(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))


def _num(value: float | None, digits: int = 0) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:.{digits}f}"


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def _context(rows: pl.DataFrame) -> dict[str, Any] | None:
    raw = rows["context"][0]
    if raw is None:
        return None
    data = json.loads(raw)
    return data if isinstance(data, dict) else None


def change_phrases(history: pl.DataFrame, before: str | None, after: str) -> list[str]:
    """What changed in the tournament from snapshot `before` to `after` (see _attribution);
    the stale calls re-run are summed over the snapshots after `before` up to `after`."""
    if before is None:
        return []
    ids = snapshot_ids(history)
    span = ids[ids.index(before) + 1 : ids.index(after) + 1]
    rows = history.filter(pl.col("snapshot").is_in(span)).unique("snapshot")
    rerun = {
        "answers": int(rows["rerun_answers"].fill_null(0).sum()),
        "reviews": int(rows["rerun_reviews"].fill_null(0).sum()),
    }
    ctx_before = _context(history.filter(pl.col("snapshot") == before))
    ctx_after = _context(history.filter(pl.col("snapshot") == after))
    return describe_changes(ctx_before, ctx_after, rerun)


def _move(c: ModelChange) -> str:
    if c.status != "kept":
        return c.status
    assert c.rank_move is not None
    if c.rank_move == 0:
        return "="
    text = f"up {c.rank_move}" if c.rank_move > 0 else f"down {-c.rank_move}"
    if c.rank_significant is False:
        text += f" ({NOT_SIGNIFICANT})"
    return text


def _change(c: ModelChange) -> str:
    if c.bt_change is None:
        return "-"
    text = f"{c.bt_change:+.1f}"
    if c.rating_significant is False:
        text += f" ({NOT_SIGNIFICANT})"
    return text


@dataclass
class HistoryView:
    """The history of a run directory, ready to show as `--history` or `--diff`.

    `diff` is None for `--history`; for `--diff` it is the range as given
    ("" for the last two snapshots, or "A..B"). `anchor` pins the rating
    comparison on one model (default: the models ranked in both snapshots).
    """

    directory: Path
    history: pl.DataFrame
    diff: str | None
    anchor: str | None = None

    def _numbered(self) -> dict[str, int]:
        return snapshot_numbers(self.history)  # kept by gc --keep-history

    def _meta(self, sid: str) -> dict[str, Any]:
        rows = self.history.filter(pl.col("snapshot") == sid).sort("rank", nulls_last=True)
        meta = {k: _clean(rows[k][0]) for k in _SNAPSHOT_FIELDS}
        meta["number"] = self._numbered()[sid]
        meta["models"] = [
            {"model": r["model"], "rank": r["rank"], **{k: _clean(r[k]) for k in RATING_FIELDS}}
            for r in rows.iter_rows(named=True)
        ]
        return meta

    def _snapshots(self) -> list[dict[str, Any]]:
        """Every snapshot, with `bt_anchored`: ratings chained so that the models ranked
        in two consecutive snapshots keep their mean (or the anchor model its rating)."""
        ids = snapshot_ids(self.history)
        out: list[dict[str, Any]] = []
        offset = 0.0
        prev: dict[str, float | None] | None = None
        for i, sid in enumerate(ids):
            meta = self._meta(sid)
            ratings = {m["model"]: m["bt"] for m in meta["models"]}
            if prev is not None:
                offset += anchor_shift(prev, ratings, self.anchor)
            for m in meta["models"]:
                m["bt_anchored"] = None if m["bt"] is None else m["bt"] - offset
            meta["changes"] = change_phrases(self.history, ids[i - 1] if i else None, sid)
            prev = ratings
            out.append(meta)
        return out

    def _pair(self) -> tuple[dict[str, Any] | None, dict[str, Any], list[ModelChange], list[str]]:
        try:
            before_id, after_id = select_range(self.history, self.diff)
        except ValueError as exc:
            raise ConfigError(self.directory, "--diff", str(exc)) from None
        before = None if before_id is None else self._meta(before_id)
        after = self._meta(after_id)
        changes = diff_snapshots(self.history, before_id or "", after_id, anchor=self.anchor)
        phrases = change_phrases(self.history, before_id, after_id)
        return before, after, changes, phrases

    def check(self) -> None:
        """Raise ConfigError when the --diff range names no snapshot."""
        if self.diff is not None:
            self._pair()

    def to_json(self) -> dict[str, Any]:
        """`--history`: every snapshot with its models; `--diff`: two snapshots and the changes."""
        if self.diff is None:
            return {"directory": str(self.directory), "snapshots": self._snapshots()}
        before, after, changes, phrases = self._pair()
        strip = ("models",)
        return {
            "directory": str(self.directory),
            "before": None
            if before is None
            else {k: v for k, v in before.items() if k not in strip},
            "after": {k: v for k, v in after.items() if k not in strip},
            "config_changed": before is not None and before["config_hash"] != after["config_hash"],
            "changes": phrases,
            "anchor": self.anchor
            if self.anchor is not None and any(c.model == self.anchor for c in changes)
            else "common models",
            "models": [c.to_json() for c in changes],
        }

    def _sections(self) -> tuple[str, list[_Section]]:
        return self._history_sections() if self.diff is None else self._diff_sections()

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
                if entry is None:
                    cells.append("-")
                elif entry["rank"] is None:
                    cells.append("unranked")
                else:
                    cells.append(f"{_num(entry['bt_anchored'])} #{entry['rank']}")
            now = latest.get(model)
            ci = "dropped" if now is None else f"{_num(now['bt_ci_low'])}-{_num(now['bt_ci_high'])}"
            rows.append([model, *cells, ci])
        ratings = _Section(
            "Bradley-Terry rating and rank per snapshot",
            ["model", *[str(s["number"]) for s in shown], "95% CI now"],
            rows,
            [
                "Columns are snapshots, oldest first (numbered as below); '-' = not in the "
                "tournament then; 'unranked' = in it without a usable battle yet.",
                "Ratings are anchored so that the models ranked in two consecutive snapshots "
                "keep their mean"
                + (f" (or {self.anchor} its rating)" if self.anchor else "")
                + "; the 95% CI is the latest snapshot's as stored.",
            ],
        )
        meta_rows = [
            [
                str(s["number"]),
                _stamp(s["at"]),
                s["command"],
                s["tag"] or "",
                s["config_hash"][:8],
                str(s["n_models"]),
                str(s["reviews"]),
                f"{s['calls_open']}/{s['calls_planned']}",
                "; ".join(s["changes"]) or "-",
            ]
            for s in snaps
        ][-TABLE_SNAPSHOTS:]
        meta = _Section(
            "Snapshots",
            [
                "#",
                "time",
                "command",
                "tag",
                "config",
                "models",
                "reviews",
                "open calls",
                "change",
            ],
            meta_rows,
            [f"{len(snaps)} snapshots; the JSON format has all of them."]
            if len(snaps) > TABLE_SNAPSHOTS
            else [],
        )
        return f"Rating history of {self.directory}", [ratings, meta]

    def _diff_sections(self) -> tuple[str, list[_Section]]:
        before, after, changes, phrases = self._pair()
        rows = [
            [
                "-" if c.rank_after is None else str(c.rank_after),
                c.model,
                "-" if c.rank_before is None else str(c.rank_before),
                _move(c),
                _num(c.bt_before, 1),
                _num(c.bt_after_anchored, 1),  # before + change = now: one scale
                _change(c),
            ]
            for c in changes
        ]
        notes = []
        if before is None:
            notes.append("Only one snapshot so far: every model is new.")
        else:

            def name(s: dict[str, Any]) -> str:
                tag = f", tag {s['tag']}" if s["tag"] else ""
                return (
                    f"#{s['number']} {_stamp(s['at'])} ({s['command']}{tag}, "
                    f"config {s['config_hash'][:8]})"
                )

            notes.append(f"From {name(before)} to {name(after)}.")
            if phrases:
                notes.append("What changed: " + "; ".join(phrases) + ".")
            elif before["config_hash"] != after["config_hash"]:
                notes.append("The tournament config changed between the two snapshots.")
            else:
                notes.append("What changed: nothing in the tournament; only the results.")
            anchor = (
                self.anchor
                if self.anchor is not None and any(c.model == self.anchor for c in changes)
                else None
            )
            notes.append(
                "Ratings anchored on "
                + (anchor if anchor else "the models ranked in both snapshots")
                + " (BT now is on the earlier snapshot's scale: before + change = now; the "
                + f"stored ratings are in the JSON); {NOT_SIGNIFICANT} = within chance (95%, "
                + "from the bootstrap intervals)."
            )
        section = _Section(
            "Changes between two snapshots" if self.diff else "Changes since the previous snapshot",
            ["#", "model", "was", "move", "BT before", "BT now (anchored)", "change"],
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
        """Print the view as rich tables; when not on a terminal, nothing is cut to fit a width."""
        title, sections = self._sections()
        tables: list[tuple[Table, _Section]] = []
        for s in sections:
            table = Table(title=s.title, title_justify="left", box=box.SIMPLE_HEAD)
            for head in s.header:
                justify: JustifyMethod = "left" if head in _TEXT_COLUMNS else "right"
                table.add_column(head, justify=justify, no_wrap=True)
            for row in s.rows:
                table.add_row(*row)
            tables.append((table, s))
        if not console.is_terminal:  # piped: as wide as the widest table needs
            wide = Console(file=console.file, width=100_000, soft_wrap=False, color_system=None)
            width = max(wide.measure(t).maximum for t, _ in tables)
            console = Console(
                file=console.file, width=max(width, 80), soft_wrap=False, color_system=None
            )
        console.print(f"[bold]{title}[/bold]", highlight=False, soft_wrap=True)
        for table, s in tables:
            console.print()
            console.print(table)
            for note in s.notes:
                console.print(note, highlight=False, soft_wrap=True)


def history_view(
    directory: str | os.PathLike[str], *, diff: str | None, anchor: str | None = None
) -> HistoryView:
    """The history of run directory DIR; ConfigError when it has none (or --diff names
    no snapshot). `diff` None: the history; "" the last two snapshots; "A..B" two of them."""
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
    view = HistoryView(folder, history, diff, anchor)
    view.check()
    return view
