"""Operations of a run directory: the run record, alerts, metrics and night reports.

`arena run` and `arena retry-failed` end every run (whatever its exit code)
by writing its record (`DIR/last_run.json`), its report files
(`DIR/reports/<run id>.json` and `.md`), the metrics file and, when the
tournament asks for them, alerts (docs/nightly.md). This package builds on
`arena.rundir` (the history the reports show) and never imports the CLI.

Its names load on first use, from their modules (PEP 562).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.lazy import lazy_attributes as _lazy_attributes

if TYPE_CHECKING:
    from arena.ops._alerts import (
        OPS_LOG,
        AlertSettings,
        alert_reason,
        deliver_alert,
        log_problem,
        metrics_file_problem,
        parse_age,
        redact_url,
        save_ops_state,
        write_metrics,
    )
    from arena.ops._heartbeat import HEARTBEAT_SECONDS, Heartbeat
    from arena.ops._record import (
        RECORD_SCHEMA_PATH,
        SCHEMA_VERSION,
        STATUS_OF_EXIT,
        build_record,
        mark_report_killed,
        write_last_run_record,
    )
    from arena.ops._report import (
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
    from arena.ops._runrecord import (
        RUN_ID_ENV,
        RunRecord,
        alert_settings,
        count_snapshots,
        is_dir,
        mark_killed,
        new_run_id,
        run_spend,
        warn_problem,
        whole_run,
    )

# Each public name -> its module, imported on first use.
_LAZY: dict[str, str] = {
    "count_snapshots": "arena.ops._runrecord",
    "is_dir": "arena.ops._runrecord",
    "warn_problem": "arena.ops._runrecord",
    "whole_run": "arena.ops._runrecord",
    "RUN_ID_ENV": "arena.ops._runrecord",
    "RunRecord": "arena.ops._runrecord",
    "alert_settings": "arena.ops._runrecord",
    "mark_killed": "arena.ops._runrecord",
    "new_run_id": "arena.ops._runrecord",
    "run_spend": "arena.ops._runrecord",
    "HEARTBEAT_SECONDS": "arena.ops._heartbeat",
    "Heartbeat": "arena.ops._heartbeat",
    "metrics_file_problem": "arena.ops._alerts",
    "redact_url": "arena.ops._alerts",
    "AlertSettings": "arena.ops._alerts",
    "OPS_LOG": "arena.ops._alerts",
    "alert_reason": "arena.ops._alerts",
    "deliver_alert": "arena.ops._alerts",
    "log_problem": "arena.ops._alerts",
    "parse_age": "arena.ops._alerts",
    "save_ops_state": "arena.ops._alerts",
    "write_metrics": "arena.ops._alerts",
    "RECORD_SCHEMA_PATH": "arena.ops._record",
    "SCHEMA_VERSION": "arena.ops._record",
    "STATUS_OF_EXIT": "arena.ops._record",
    "build_record": "arena.ops._record",
    "mark_report_killed": "arena.ops._record",
    "write_last_run_record": "arena.ops._record",
    "EXIT_MEANINGS": "arena.ops._report",
    "REPORTS_DIR": "arena.ops._report",
    "failures_by_reason": "arena.ops._report",
    "minimal_report": "arena.ops._report",
    "night_report": "arena.ops._report",
    "no_snapshot_note": "arena.ops._report",
    "report_markdown": "arena.ops._report",
    "report_paths": "arena.ops._report",
    "write_report": "arena.ops._report",
}


__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)


__all__ = [
    "count_snapshots",
    "is_dir",
    "warn_problem",
    "whole_run",
    "RUN_ID_ENV",
    "RunRecord",
    "alert_settings",
    "mark_killed",
    "new_run_id",
    "run_spend",
    "HEARTBEAT_SECONDS",
    "Heartbeat",
    "metrics_file_problem",
    "redact_url",
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
]
