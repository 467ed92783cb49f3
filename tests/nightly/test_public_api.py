"""The public surface of arena.nightly, and its place in the import graph."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import arena.nightly


def test_public_names() -> None:
    assert set(arena.nightly.__all__) == {
        "DirectoryStatus",
        "StatusInputError",
        "directory_status",
        "logged_failures",
        "HISTORY_SCHEMA",
        "HISTORY_TABLE",
        "PLAN_FILE",
        "PLAN_SCHEMA",
        "STATES",
        "Classifier",
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
        "plan_chunks",
        "plan_fingerprint",
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
        "LAST_RUN",
        "OPS_LOG",
        "OPS_STATE",
        "RECORD_SCHEMA_PATH",
        "SCHEMA_VERSION",
        "STATUS_OF_EXIT",
        "AlertSettings",
        "alert_reason",
        "build_record",
        "deliver_alert",
        "iso_time",
        "last_success",
        "log_problem",
        "mark_report_killed",
        "minimal_report",
        "no_snapshot_note",
        "parse_age",
        "read_last_run",
        "read_ops_state",
        "save_ops_state",
        "write_last_run_record",
        "write_metrics",
        "prune_archive",
        "prune_reports",
        "restore_archived",
    }
    for name in arena.nightly.__all__:
        assert getattr(arena.nightly, name) is not None


def test_importing_it_loads_neither_the_engine_nor_the_report() -> None:
    code = (
        "import sys, arena.nightly; "
        "print(sorted(m for m in ('arena.engine', 'arena.report') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


def test_the_cli_uses_only_the_public_names() -> None:
    cli = Path(arena.nightly.__file__).resolve().parent.parent / "cli"
    private = [
        path.name
        for path in sorted(cli.glob("*.py"))
        if re.search(r"^\s*(from|import) arena\.nightly\._", path.read_text(), re.M)
    ]
    assert private == []
