"""Nightly runs: the plan file, staleness, status, retry of failed calls, leaderboard history.

See docs/nightly.md. Nothing here imports the engine at run time, so that
`arena.report` can filter the log by the plan file without a cycle.
"""

from arena.nightly._attribution import describe_changes, results_hash, tournament_context
from arena.nightly._gc import ARCHIVE_DIR, GcReport, collect_garbage
from arena.nightly._history import (
    HISTORY_SCHEMA,
    HISTORY_TABLE,
    ModelChange,
    append_history,
    diff_snapshots,
    read_history,
    select_range,
    select_snapshot,
    snapshot_ids,
    snapshot_rows,
)
from arena.nightly._planfile import (
    PLAN_FILE,
    PLAN_SCHEMA,
    current_rows,
    plan_changes,
    plan_frame,
    read_plan,
    write_plan,
)
from arena.nightly._report import (
    EXIT_MEANINGS,
    REPORTS_DIR,
    failures_by_reason,
    night_report,
    report_markdown,
    report_paths,
    write_report,
)
from arena.nightly._runs import (
    PlanChanged,
    RunStart,
    call_states,
    failed_only,
    load_for_directory,
    record_history,
    recorded_config,
    start_run,
)
from arena.nightly._status import (
    BATCHEVAL_SCHEMA,
    STATES,
    StatusReport,
    batcheval_states,
    classify,
    discussion_counts,
    status_report,
)
from arena.nightly._views import HistoryView, change_phrases, history_view

__all__ = [
    "ARCHIVE_DIR",
    "GcReport",
    "collect_garbage",
    "EXIT_MEANINGS",
    "REPORTS_DIR",
    "change_phrases",
    "describe_changes",
    "failures_by_reason",
    "night_report",
    "report_markdown",
    "report_paths",
    "results_hash",
    "select_range",
    "select_snapshot",
    "tournament_context",
    "write_report",
    "BATCHEVAL_SCHEMA",
    "HISTORY_SCHEMA",
    "HISTORY_TABLE",
    "PLAN_FILE",
    "PLAN_SCHEMA",
    "STATES",
    "HistoryView",
    "ModelChange",
    "PlanChanged",
    "RunStart",
    "StatusReport",
    "append_history",
    "batcheval_states",
    "call_states",
    "classify",
    "current_rows",
    "diff_snapshots",
    "discussion_counts",
    "failed_only",
    "history_view",
    "load_for_directory",
    "plan_changes",
    "plan_frame",
    "read_history",
    "read_plan",
    "record_history",
    "recorded_config",
    "snapshot_ids",
    "snapshot_rows",
    "start_run",
    "status_report",
    "write_plan",
]
