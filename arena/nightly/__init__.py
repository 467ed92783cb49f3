"""Nightly runs: the plan file, staleness, status, retry of failed calls, leaderboard history.

See docs/nightly.md. Nothing here imports the engine at run time, so that
`arena.report` can filter the log by the plan file without a cycle.

Importing this package registers the leaderboard-history log table; its
other names load on first use, from their modules (PEP 562), so a command
that needs one function (the report's `current_rows`) does not load them all.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

if TYPE_CHECKING:
    from arena.nightly._attribution import describe_changes, results_hash, tournament_context
    from arena.nightly._directory import (
        DirectoryStatus,
        StatusInputError,
        directory_status,
        logged_failures,
    )
    from arena.nightly._gc import (
        ARCHIVE_DIR,
        GcReport,
        collect_garbage,
        prune_archive,
        prune_reports,
        restore_archived,
    )
    from arena.nightly._ops import (
        OPS_LOG,
        OPS_STATE,
        AlertSettings,
        alert_reason,
        deliver_alert,
        last_success,
        log_problem,
        parse_age,
        read_ops_state,
        save_ops_state,
        write_metrics,
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
    from arena.nightly._record import (
        LAST_RUN,
        RECORD_SCHEMA_PATH,
        SCHEMA_VERSION,
        STATUS_OF_EXIT,
        build_record,
        iso_time,
        mark_report_killed,
        read_last_run,
        write_last_run_record,
    )
    from arena.nightly._report import (
        EXIT_MEANINGS,
        REPORTS_DIR,
        failures_by_reason,
        minimal_report,
        night_report,
        no_snapshot_note,
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
        STATES,
        StatusReport,
        classify,
        status_report,
    )
    from arena.nightly._views import HistoryView, change_phrases, history_view

# Each public name -> its module, imported on first use.
_LAZY: dict[str, str] = {
    "describe_changes": "arena.nightly._attribution",
    "results_hash": "arena.nightly._attribution",
    "tournament_context": "arena.nightly._attribution",
    "DirectoryStatus": "arena.nightly._directory",
    "StatusInputError": "arena.nightly._directory",
    "directory_status": "arena.nightly._directory",
    "logged_failures": "arena.nightly._directory",
    "ARCHIVE_DIR": "arena.nightly._gc",
    "GcReport": "arena.nightly._gc",
    "collect_garbage": "arena.nightly._gc",
    "prune_archive": "arena.nightly._gc",
    "prune_reports": "arena.nightly._gc",
    "restore_archived": "arena.nightly._gc",
    "OPS_LOG": "arena.nightly._ops",
    "OPS_STATE": "arena.nightly._ops",
    "AlertSettings": "arena.nightly._ops",
    "alert_reason": "arena.nightly._ops",
    "deliver_alert": "arena.nightly._ops",
    "last_success": "arena.nightly._ops",
    "log_problem": "arena.nightly._ops",
    "parse_age": "arena.nightly._ops",
    "read_ops_state": "arena.nightly._ops",
    "save_ops_state": "arena.nightly._ops",
    "write_metrics": "arena.nightly._ops",
    "PLAN_FILE": "arena.nightly._planfile",
    "PLAN_SCHEMA": "arena.nightly._planfile",
    "current_rows": "arena.nightly._planfile",
    "plan_changes": "arena.nightly._planfile",
    "plan_frame": "arena.nightly._planfile",
    "read_plan": "arena.nightly._planfile",
    "write_plan": "arena.nightly._planfile",
    "LAST_RUN": "arena.nightly._record",
    "RECORD_SCHEMA_PATH": "arena.nightly._record",
    "SCHEMA_VERSION": "arena.nightly._record",
    "STATUS_OF_EXIT": "arena.nightly._record",
    "build_record": "arena.nightly._record",
    "iso_time": "arena.nightly._record",
    "mark_report_killed": "arena.nightly._record",
    "read_last_run": "arena.nightly._record",
    "write_last_run_record": "arena.nightly._record",
    "EXIT_MEANINGS": "arena.nightly._report",
    "REPORTS_DIR": "arena.nightly._report",
    "failures_by_reason": "arena.nightly._report",
    "minimal_report": "arena.nightly._report",
    "night_report": "arena.nightly._report",
    "no_snapshot_note": "arena.nightly._report",
    "report_markdown": "arena.nightly._report",
    "report_paths": "arena.nightly._report",
    "write_report": "arena.nightly._report",
    "PlanChanged": "arena.nightly._runs",
    "RunStart": "arena.nightly._runs",
    "call_states": "arena.nightly._runs",
    "failed_only": "arena.nightly._runs",
    "load_for_directory": "arena.nightly._runs",
    "record_history": "arena.nightly._runs",
    "recorded_config": "arena.nightly._runs",
    "start_run": "arena.nightly._runs",
    "STATES": "arena.nightly._status",
    "StatusReport": "arena.nightly._status",
    "classify": "arena.nightly._status",
    "status_report": "arena.nightly._status",
    "HistoryView": "arena.nightly._views",
    "change_phrases": "arena.nightly._views",
    "history_view": "arena.nightly._views",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "DirectoryStatus",
    "StatusInputError",
    "directory_status",
    "logged_failures",
    "LAST_RUN",
    "OPS_LOG",
    "OPS_STATE",
    "RECORD_SCHEMA_PATH",
    "SCHEMA_VERSION",
    "STATUS_OF_EXIT",
    "AlertSettings",
    "alert_reason",
    "build_record",
    "iso_time",
    "deliver_alert",
    "last_success",
    "log_problem",
    "parse_age",
    "mark_report_killed",
    "minimal_report",
    "no_snapshot_note",
    "read_last_run",
    "read_ops_state",
    "save_ops_state",
    "write_last_run_record",
    "write_metrics",
    "ARCHIVE_DIR",
    "GcReport",
    "collect_garbage",
    "prune_archive",
    "prune_reports",
    "restore_archived",
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
    "call_states",
    "classify",
    "current_rows",
    "diff_snapshots",
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
