"""The per-night report: `DIR/reports/<start>-<run id>.json` and `.md`, for every exit code.

It holds the run's record (run id, start and end time, process id, exit
code), its call counts and cost, the calls that failed during the run
grouped by reason, the latest leaderboard snapshot, and the diff with the
snapshot before it with the list of what changed in the tournament.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from arena.rundir._history import HISTORY_TABLE, read_history, snapshot_ids, snapshot_numbers
from arena.rundir._views import HistoryView
from arena.stages import register_all_tables
from arena.store import TABLES, RunLog

__all__ = [
    "EXIT_MEANINGS",
    "REPORTS_DIR",
    "failures_by_reason",
    "minimal_report",
    "night_report",
    "no_snapshot_note",
    "report_markdown",
    "report_paths",
    "write_report",
]

REPORTS_DIR = "reports"

EXIT_MEANINGS = {
    0: "complete",
    1: "internal error",
    2: "bad input; nothing was called",
    3: "partial: failed or pending calls remain",
    4: "budget reached",
    74: "the log cannot be written (disk full, read-only file system)",
    75: "another run holds the lock",
    129: "hangup",
    130: "interrupted (SIGINT)",
    137: "killed",
    143: "interrupted (SIGTERM)",
}

# Counts copied from the run's JSON summary into the report's `calls`.
_CALL_KEYS = (
    "planned",
    "new",
    "stale",
    "retried",
    "unblocked",
    "skipped",
    "completed",
    "invalid",
    "failed",
    "pending",
    "deferred",
)

# "provider NAME: " as the scheduler prefixes provider-wide stops.
_PROVIDER_PREFIX = re.compile(r"^provider \S+: ")
# The column naming the model that made a table's calls (the first one present).
_CALLER_COLUMNS = ("reviewer", "scorer", "speaker", "model")


def _reason(error: str | None) -> str:
    """An error's reason: what comes before its details ("KIND (HTTP STATUS): details"
    gives "KIND (HTTP STATUS)"; a provider-wide stop "provider X: why: ..." gives "why")."""
    if not error or not error.strip():
        return "unknown"
    text = _PROVIDER_PREFIX.sub("", error.strip().splitlines()[0])
    head, sep, _ = text.partition(": ")
    return head if sep else text[:80]


def failures_by_reason(directory: str | os.PathLike[str], since: float) -> list[dict[str, Any]]:
    """Calls logged as failed at or after `since` (epoch seconds), grouped by table,
    provider, model and reason, with `count` and a `sample` error; most frequent first.

    A plain grouping of the log's `status` and `error` columns; a retried call
    counts once, by its last row.
    """
    if not (Path(directory) / "log").is_dir():
        return []
    log = RunLog(directory)
    groups: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    register_all_tables()
    for table, schema in TABLES.items():
        names = set(schema.names)
        caller = next((c for c in _CALLER_COLUMNS if c in names), None)
        if table == HISTORY_TABLE or caller is None:
            continue
        if not {"status", "error", "started_at", "provider"} <= names:
            continue
        failed = (pl.col("status") == "failed") & (pl.col("started_at") >= since)
        # A few parts at a time, keeping only the failed rows: memory does not grow
        # with the log (a million-row table is never read whole).
        frame = log.read_where(
            table, failed, columns=["status", "started_at", "provider", caller, "error"]
        )
        for provider, model, error in frame.select("provider", caller, "error").iter_rows():
            key = (table, str(provider), str(model), _reason(error))
            entry = groups.get(key)
            if entry is None:
                groups[key] = {
                    "table": table,
                    "provider": key[1],
                    "model": key[2],
                    "reason": key[3],
                    "count": 1,
                    "sample": (error or "")[:300],
                }
            else:
                entry["count"] += 1
    return sorted(
        groups.values(),
        key=lambda g: (-g["count"], g["table"], g["provider"], g["model"], g["reason"]),
    )


def _iso(at: float | None) -> str | None:
    if at is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(at))


def report_paths(directory: Path, run_id: str) -> tuple[Path, Path]:
    """The JSON and Markdown report files of a run (run ids start with their start time)."""
    base = directory / REPORTS_DIR / run_id
    return Path(f"{base}.json"), Path(f"{base}.md")


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


# Why a run that ended so took no snapshot (when the run does not say).
_NO_SNAPSHOT = {
    1: "the run crashed",
    2: "nothing ran (bad input)",
    4: "the budget stopped the run before its plan was through",
    74: "the log could not be written",
    75: "another run held the lock; nothing ran",
    129: "the run was interrupted (SIGHUP)",
    130: "the run was interrupted (SIGINT)",
    137: "the run was killed",
    143: "the run was interrupted (SIGTERM)",
}


def no_snapshot_note(code: int | None, note: str | None) -> str:
    """Why a run added no history snapshot: the run's own note, else its exit code's."""
    if note:
        return note
    if code is None:
        return "the run has not ended"
    return _NO_SNAPSHOT.get(int(code), "nothing changed since the last snapshot")


def _skeleton(summary: Mapping[str, Any]) -> dict[str, Any]:
    code = summary.get("exit_code")
    return {
        "run": {
            k: summary.get(k)
            for k in ("run_id", "command", "started_at", "ended_at", "pid", "output")
        },
        "exit_code": code,
        "exit_meaning": "running (no exit yet)"
        if code is None
        else EXIT_MEANINGS.get(int(code), "other"),
        "error": summary.get("error"),
        "calls": {k: summary[k] for k in _CALL_KEYS if k in summary},
        "spent_usd": summary.get("spent_usd"),
        "errors": list(summary.get("errors", []))[:50],
        "failures": [],
        "snapshot_added": False,
        "snapshot_note": None,
        "snapshot": {"added": False, "number": None, "taken_unix": None, "note": None},
        "leaderboard": None,
        "diff": None,
    }


def minimal_report(summary: Mapping[str, Any]) -> dict[str, Any]:
    """The report of a run when DIR's log or history cannot be read: the run's own data."""
    return _skeleton(summary)


def night_report(
    directory: Path,
    summary: Mapping[str, Any],
    *,
    started: float,
    snapshots_at_start: int,
) -> dict[str, Any]:
    """The report of one run from its JSON summary (with `run_id`, `started_at`, ...) and DIR.

    `started` (epoch seconds) bounds the failures counted as this run's;
    a snapshot counts as taken by this run when DIR has more than
    `snapshots_at_start`. A summary without `exit_code` is a run still going.
    The diff with the snapshot before is shown only when this run took a
    snapshot; else `snapshot_note` says why it took none (`history_note` of
    the summary, else what its exit code implies).
    """
    report = _skeleton(summary)
    code = report["exit_code"]
    if code is not None:
        report["failures"] = failures_by_reason(directory, started)
    history = read_history(directory) if (directory / "log").is_dir() else pl.DataFrame()
    if history.height:
        ids = snapshot_ids(history)
        report["snapshot_added"] = len(ids) > snapshots_at_start
        rows = history.filter(pl.col("snapshot") == ids[-1]).sort("rank", nulls_last=True)
        taken = float(rows["at"][0])
        number = snapshot_numbers(history).get(ids[-1], len(ids))  # kept by gc
        report["snapshot"].update(number=number, taken_unix=taken)
        report["leaderboard"] = {
            "snapshot": number,
            "at": _iso(taken),
            "tag": rows["tag"][0],
            "models": [
                {
                    "rank": r["rank"],
                    "model": r["model"],
                    "bt": _clean(r["bt"]),
                    "bt_ci_low": _clean(r["bt_ci_low"]),
                    "bt_ci_high": _clean(r["bt_ci_high"]),
                    "win_rate": _clean(r["win_rate"]),
                }
                for r in rows.iter_rows(named=True)
            ],
        }
        if report["snapshot_added"] and len(ids) > 1:
            view = HistoryView(directory, history, "")
            report["diff"] = view.to_json()
            report["diff_markdown"] = view.markdown()
    if not report["snapshot_added"]:
        report["snapshot_note"] = no_snapshot_note(code, summary.get("history_note"))
    report["snapshot"].update(added=report["snapshot_added"], note=report["snapshot_note"])
    return report


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 10 else f"{value:.3g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return [*lines, ""]


def report_markdown(report: Mapping[str, Any]) -> str:
    """The report as Markdown."""
    run = report["run"]
    code = report["exit_code"]
    lines = [
        f"# arena {run.get('command') or 'run'} {run.get('run_id')}: "
        + ("running" if code is None else f"exit {code} ({report['exit_meaning']})"),
        "",
        f"- started: {run.get('started_at')}",
        f"- ended: {run.get('ended_at') or '-'}",
        f"- pid: {run.get('pid')}",
        f"- output: {run.get('output')}",
    ]
    if report.get("error"):
        lines.append(f"- error: {report['error']}")
    if report.get("spent_usd") is not None:
        lines.append(f"- cost: ${float(report['spent_usd']):.4f}")
    lines.append("")
    calls = report.get("calls") or {}
    if calls:
        lines += ["## Calls", ""]
        lines += _table(list(calls), [list(calls.values())])
    lines += ["## Failures by reason", ""]
    if report["failures"]:
        lines += _table(
            ["table", "provider", "model", "count", "reason", "sample"],
            [
                [f["table"], f["provider"], f["model"], f["count"], f["reason"], f["sample"]]
                for f in report["failures"]
            ],
        )
    else:
        lines += ["No call failed during this run.", ""]
    board = report.get("leaderboard")
    lines += ["## Leaderboard", ""]
    if board is None:
        lines += ["No leaderboard snapshot yet.", ""]
    else:
        added = "taken by this run" if report["snapshot_added"] else "from an earlier run"
        lines += [f"Snapshot {board['snapshot']} ({board['at']}, {added}).", ""]
        if not report["snapshot_added"] and report.get("exit_code") is not None:
            lines += [
                "This run added no snapshot: "
                + str(report.get("snapshot_note") or "nothing changed")
                + ". The table is the latest snapshot's; there is no change to show for "
                "tonight.",
                "",
            ]
        lines += _table(
            ["#", "model", "BT", "95% CI", "win rate"],
            [
                [
                    m["rank"],
                    m["model"],
                    m["bt"],
                    f"{_cell(m['bt_ci_low'])}-{_cell(m['bt_ci_high'])}",
                    m["win_rate"],
                ]
                for m in board["models"]
            ],
        )
    if report.get("diff_markdown"):
        body = str(report["diff_markdown"]).split("\n", 2)[-1]  # without its title
        lines += [body.strip(), ""]
    return "\n".join(lines).rstrip() + "\n"


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.parent / f".{path.name}.{uuid.uuid4().hex}.tmp"
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_report(directory: Path, report: Mapping[str, Any]) -> Path:
    """Write the report's JSON and Markdown files (replacing the run's earlier ones).

    Returns the JSON file's path.
    """
    run_id = str(report["run"]["run_id"])
    json_path, md_path = report_paths(directory, run_id)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    data = {k: v for k, v in report.items() if k != "diff_markdown"}
    _write_atomic(json_path, json.dumps(data, indent=2, default=str) + "\n")
    _write_atomic(md_path, report_markdown(report))
    return json_path
