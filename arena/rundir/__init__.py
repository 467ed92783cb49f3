"""The run directory: the plan file and staleness, status, the leaderboard history
with change attribution and its views, retry of failed calls, `arena gc`.

See docs/nightly.md. Nothing here imports the engine, the leaderboard or the
CLI, so `arena.report` can filter the log by the plan file without a cycle.

Importing this package registers the leaderboard-history log table; its
other names load on first use, from their modules (PEP 562), so a command
that needs one function (the report's `current_rows`) does not load them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.lazy import lazy_attributes as _lazy_attributes
from arena.rundir._history import (
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
    from arena.rundir._attribution import (
        describe_changes,
        results_hash,
        tournament_context,
    )
    from arena.rundir._directory import (
        DirectoryStatus,
        StatusInputError,
        directory_status,
        directory_summary,
        logged_failures,
    )
    from arena.rundir._files import (
        LAST_RUN,
        OPS_STATE,
        RUN_COLUMNS,
        RUNS_FILE,
        iso_time,
        last_success,
        live_last_run,
        lock_state,
        read_last_run,
        read_ops_state,
        read_runs,
    )
    from arena.rundir._gc import (
        ARCHIVE_DIR,
        GcReport,
        collect_garbage,
        prune_archive,
        prune_reports,
        restore_archived,
    )
    from arena.rundir._planfile import (
        PLAN_FILE,
        PLAN_SCHEMA,
        current_rows,
        plan_changes,
        plan_chunks,
        plan_fingerprint,
        plan_frame,
        read_plan,
        write_plan,
    )
    from arena.rundir._runs import (
        PlanChanged,
        RunStart,
        call_states,
        failed_only,
        load_for_directory,
        record_history,
        recorded_config,
        start_run,
    )
    from arena.rundir._status import (
        STATES,
        Classifier,
        StatusReport,
        classify,
        status_report,
    )
    from arena.rundir._views import (
        HistoryView,
        change_phrases,
        history_view,
    )

# Each public name -> its module, imported on first use.
_LAZY: dict[str, str] = {
    "describe_changes": "arena.rundir._attribution",
    "results_hash": "arena.rundir._attribution",
    "tournament_context": "arena.rundir._attribution",
    "DirectoryStatus": "arena.rundir._directory",
    "StatusInputError": "arena.rundir._directory",
    "directory_status": "arena.rundir._directory",
    "directory_summary": "arena.rundir._directory",
    "live_last_run": "arena.rundir._files",
    "lock_state": "arena.rundir._files",
    "read_runs": "arena.rundir._files",
    "RUN_COLUMNS": "arena.rundir._files",
    "RUNS_FILE": "arena.rundir._files",
    "logged_failures": "arena.rundir._directory",
    "LAST_RUN": "arena.rundir._files",
    "OPS_STATE": "arena.rundir._files",
    "iso_time": "arena.rundir._files",
    "last_success": "arena.rundir._files",
    "read_last_run": "arena.rundir._files",
    "read_ops_state": "arena.rundir._files",
    "ARCHIVE_DIR": "arena.rundir._gc",
    "GcReport": "arena.rundir._gc",
    "collect_garbage": "arena.rundir._gc",
    "prune_archive": "arena.rundir._gc",
    "prune_reports": "arena.rundir._gc",
    "restore_archived": "arena.rundir._gc",
    "PLAN_FILE": "arena.rundir._planfile",
    "PLAN_SCHEMA": "arena.rundir._planfile",
    "current_rows": "arena.rundir._planfile",
    "plan_changes": "arena.rundir._planfile",
    "plan_chunks": "arena.rundir._planfile",
    "plan_fingerprint": "arena.rundir._planfile",
    "plan_frame": "arena.rundir._planfile",
    "read_plan": "arena.rundir._planfile",
    "write_plan": "arena.rundir._planfile",
    "PlanChanged": "arena.rundir._runs",
    "RunStart": "arena.rundir._runs",
    "call_states": "arena.rundir._runs",
    "failed_only": "arena.rundir._runs",
    "load_for_directory": "arena.rundir._runs",
    "record_history": "arena.rundir._runs",
    "recorded_config": "arena.rundir._runs",
    "start_run": "arena.rundir._runs",
    "Classifier": "arena.rundir._status",
    "STATES": "arena.rundir._status",
    "StatusReport": "arena.rundir._status",
    "classify": "arena.rundir._status",
    "status_report": "arena.rundir._status",
    "HistoryView": "arena.rundir._views",
    "change_phrases": "arena.rundir._views",
    "history_view": "arena.rundir._views",
}


__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)


__all__ = [
    "ARCHIVE_DIR",
    "Classifier",
    "DirectoryStatus",
    "GcReport",
    "HISTORY_SCHEMA",
    "HISTORY_TABLE",
    "HistoryView",
    "LAST_RUN",
    "ModelChange",
    "OPS_STATE",
    "PLAN_FILE",
    "PLAN_SCHEMA",
    "PlanChanged",
    "RunStart",
    "STATES",
    "StatusInputError",
    "StatusReport",
    "append_history",
    "call_states",
    "change_phrases",
    "classify",
    "collect_garbage",
    "current_rows",
    "describe_changes",
    "diff_snapshots",
    "directory_status",
    "directory_summary",
    "live_last_run",
    "lock_state",
    "read_runs",
    "RUN_COLUMNS",
    "RUNS_FILE",
    "failed_only",
    "history_view",
    "iso_time",
    "last_success",
    "load_for_directory",
    "logged_failures",
    "plan_changes",
    "plan_chunks",
    "plan_fingerprint",
    "plan_frame",
    "prune_archive",
    "prune_reports",
    "read_history",
    "read_last_run",
    "read_ops_state",
    "read_plan",
    "record_history",
    "recorded_config",
    "restore_archived",
    "results_hash",
    "select_range",
    "select_snapshot",
    "snapshot_ids",
    "snapshot_rows",
    "start_run",
    "status_report",
    "tournament_context",
    "write_plan",
]
