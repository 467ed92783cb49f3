"""The public surfaces of arena.rundir and arena.ops, and their place in the import graph."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import arena.ops
import arena.rundir


def test_public_names() -> None:
    assert set(arena.rundir.__all__) == {
        "RUN_COLUMNS",
        "RUNS_FILE",
        "directory_summary",
        "live_last_run",
        "lock_state",
        "read_runs",
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
    }
    assert set(arena.ops.__all__) == {
        "HEARTBEAT_SECONDS",
        "Heartbeat",
        "metrics_file_problem",
        "redact_url",
        "run_spend",
        "AlertSettings",
        "EXIT_MEANINGS",
        "OPS_LOG",
        "RECORD_SCHEMA_PATH",
        "REPORTS_DIR",
        "SCHEMA_VERSION",
        "STATUS_OF_EXIT",
        "alert_reason",
        "build_record",
        "deliver_alert",
        "failures_by_reason",
        "log_problem",
        "mark_report_killed",
        "minimal_report",
        "night_report",
        "no_snapshot_note",
        "parse_age",
        "report_markdown",
        "report_paths",
        "save_ops_state",
        "write_last_run_record",
        "write_metrics",
        "write_report",
        "RUN_ID_ENV",
        "count_snapshots",
        "is_dir",
        "warn_problem",
        "whole_run",
        "RunRecord",
        "alert_settings",
        "mark_killed",
        "new_run_id",
    }
    for package in (arena.rundir, arena.ops):
        for name in package.__all__:
            assert getattr(package, name) is not None


def test_importing_them_loads_neither_the_engine_nor_the_report_nor_the_cli() -> None:
    code = (
        "import sys, arena.rundir, arena.ops; "
        "print(sorted(m for m in ('arena.engine', 'arena.report', 'arena.cli')"
        " if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_the_cli_uses_only_the_public_names() -> None:
    cli = Path(arena.rundir.__file__).resolve().parent.parent / "cli"
    private = [
        path.name
        for path in sorted(cli.glob("*.py"))
        if re.search(r"^\s*(from|import) arena\.(rundir|ops)\._", path.read_text(), re.M)
    ]
    assert private == []


def test_the_old_name_still_imports_with_a_deprecation_warning() -> None:
    code = (
        "import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
        "try:\n"
        "    import arena.nightly\n"
        "except DeprecationWarning as e:\n"
        "    print('warned:', e)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.startswith("warned: arena.nightly is deprecated")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import arena.nightly as old
    assert old.read_plan is arena.rundir.read_plan
    assert old.write_metrics is arena.ops.write_metrics
    assert set(old.__all__) == set(arena.rundir.__all__) | set(arena.ops.__all__)
