"""Alerts to a real local HTTP server and to a command, the metrics file, `status --max-age`,
retention (`gc --keep-reports/--keep-history/--keep-archive`) and the logrotate snippet."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

from arena.cli import main
from arena.config import DEFAULT_REVIEW_TEMPLATE
from arena.ops import alert_reason
from arena.rundir import read_history, snapshot_ids
from tests.conftest import small_tournament
from tests.rundir._support import cli, edit_yaml, priced, validate_record

REPO = Path(__file__).resolve().parents[2]
FLAKY = {"retry": {"max_attempts": 1, "backoff_base": 0.0, "backoff_max": 0.0}}


class _Inbox:
    """A real HTTP server on 127.0.0.1 that keeps every JSON body POSTed to it."""

    def __init__(self, status: int = 200) -> None:
        self.bodies: list[dict[str, Any]] = []
        self.paths: list[str] = []
        inbox = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length", "0"))
                inbox.paths.append(self.path)
                inbox.bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(status)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/arena"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> _Inbox:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def inbox() -> Iterator[_Inbox]:
    with _Inbox() as box:
        yield box


def _night(yaml_path: Path, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["run", str(yaml_path), "--json", *extra])
    line: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert line["exit_code"] == result.exit_code, result.output
    validate_record(line["record"])
    return line


def _heal(data: dict[str, Any]) -> None:
    """No sim model fails any more (failure rates are not part of any call id)."""
    for model in data["models"].values():
        model["sim"]["failure_rate"] = 0.0


def _metrics(path: Path) -> dict[str, float]:
    values = {}
    for family in text_string_to_metric_families(path.read_text()):
        for sample in family.samples:
            values[sample.name] = sample.value
    return values


def test_an_exit_3_night_posts_its_record_and_writes_parseable_metrics(
    tmp_path: Path, inbox: _Inbox
) -> None:
    metrics = tmp_path / "textfile" / "arena.prom"
    yaml_path = small_tournament(
        tmp_path,
        models=3,
        questions=2,
        sim={"failure_rate": 0.3},
        extra={
            **FLAKY,
            **priced(),
            "alerts": {"webhook": inbox.url, "after_partial_nights": 1},
            "metrics_file": "textfile/arena.prom",
        },
    )
    (tmp_path / "textfile").mkdir()
    line = _night(yaml_path)
    assert line["exit_code"] == 3 and line["failed"] > 0
    assert len(inbox.bodies) == 1 and inbox.paths == ["/arena"]
    posted = validate_record(inbox.bodies[0])
    assert posted["exit_code"] == 3 and posted["run_id"] == line["run_id"]
    assert posted["alert"]["reason"].startswith("1 partial night")
    values = _metrics(metrics)
    assert values["arena_run_calls_failed"] == line["failed"]
    assert values["arena_last_run_exit_code"] == 3
    assert values["arena_run_spent_usd"] == pytest.approx(line["spent_usd"])
    assert values["arena_tournament_spent_usd"] == pytest.approx(posted["spent_total_usd"])
    assert values["arena_run_calls_made"] == line["completed"] + line["invalid"] + line["failed"]
    assert (
        values["arena_last_success_timestamp_seconds"]
        != values["arena_last_success_timestamp_seconds"]
    )  # NaN: no complete run yet
    assert not list(metrics.parent.glob("*.tmp*"))  # written through a rename

    # The failures are retried: the first success after an alert alerts once more.
    edit_yaml(yaml_path, _heal)
    ok = _night(yaml_path)
    assert ok["exit_code"] == 0 and len(inbox.bodies) == 2
    assert inbox.bodies[1]["exit_code"] == 0 and "recovered" in inbox.bodies[1]["alert"]["reason"]
    values = _metrics(metrics)
    assert values["arena_last_success_timestamp_seconds"] == pytest.approx(
        ok["record"]["ended_unix"]
    )
    assert values["arena_snapshot_age_seconds"] >= 0
    assert _night(yaml_path)["exit_code"] == 0 and len(inbox.bodies) == 2  # nothing to say


def test_alerts_fire_on_failures_budget_and_the_nth_partial_night() -> None:
    state: dict[str, Any] = {"partial_streak": 0, "alerted": False}
    reasons = []
    for code in (3, 75, 3, 3, 130, 3, 0, 0, 2, 2, 0, 4, 4, 74, 1, 1):
        reason, state = alert_reason(code, state, 3)
        reasons.append(reason)
    assert reasons[:3] == [None, None, None]  # a locked night neither counts nor breaks
    assert reasons[3] is not None and "3 partial night(s) in a row" in reasons[3]
    assert reasons[4] is None  # an interrupted night
    assert reasons[5] is None  # the 4th partial night: alerted once already
    assert reasons[6] is not None and "recovered" in reasons[6] and reasons[7] is None
    # one alert per change of state: the same failure the next night says nothing new
    assert "exit 2" in str(reasons[8]) and reasons[9] is None and "recovered" in str(reasons[10])
    assert "budget" in str(reasons[11]) and reasons[12] is None and "exit 74" in str(reasons[13])
    assert "exit 1" in str(reasons[14]) and reasons[15] is None


def test_bad_input_alerts_through_the_command_and_a_dead_webhook_never_fails_the_run(
    tmp_path: Path,
) -> None:
    got = tmp_path / "alert.json"
    script = tmp_path / "notify.py"
    script.write_text(f"import sys\nopen({str(got)!r}, 'w').write(sys.stdin.read())\n")
    dead = "http://127.0.0.1:9/arena"  # the discard port: nothing listens
    yaml_path = small_tournament(
        tmp_path,
        models=3,
        questions=2,
        extra={"alerts": {"webhook": dead, "command": f"{sys.executable} {script}", "timeout": 5}},
    )
    assert _night(yaml_path)["exit_code"] == 0
    good = yaml_path.read_text()
    yaml_path.write_text(good.replace("contestants:", "contestant:"))
    result = CliRunner().invoke(main, ["run", str(yaml_path), "--json"])
    assert result.exit_code == 2  # the run's own code, whatever the alerts did
    record = validate_record(json.loads(got.read_text()))
    assert record["exit_code"] == 2 and "exit 2" in record["alert"]["reason"]
    problems = (tmp_path / "out" / "reports" / "problems.log").read_text()
    assert "alert webhook http://127.0.0.1:9/***: not delivered" in problems  # no path
    assert "/arena" not in problems  # a webhook path may hold a token
    assert "alert webhook" in result.stderr


def test_status_max_age_fails_when_no_night_succeeded_recently(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2, sim={"failure_rate": 1.0})
    out = tmp_path / "out"
    edit_yaml(yaml_path, lambda d: d.update(FLAKY))
    assert _night(yaml_path)["exit_code"] == 3
    never = cli("status", str(out), "--max-age", "26h", "--json")
    assert never.exit_code == 3
    assert json.loads(never.stdout)["freshness"]["last_success_at"] is None
    edit_yaml(yaml_path, _heal)
    assert _night(yaml_path)["exit_code"] == 0
    fresh = cli("status", str(out), "--max-age", "26h")
    assert fresh.exit_code == 0 and "last complete run: 20" in fresh.stdout
    state = json.loads((out / "ops_state.json").read_text())
    state["last_success_unix"] -= 27 * 3600  # as if the last success were 27 hours old
    (out / "ops_state.json").write_text(json.dumps(state))
    stale = cli("status", str(out), "--max-age", "1d2h", "--json")
    assert stale.exit_code == 3 and not json.loads(stale.stdout)["freshness"]["fresh"]
    assert cli("status", str(out), "--max-age", "28h").exit_code == 0
    bad = cli("status", str(out), "--max-age", "soon")
    assert bad.exit_code == 2 and "--max-age" in bad.output


def test_gc_retention_of_reports_history_and_archive(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2, extra=priced())
    out = tmp_path / "out"
    _night(yaml_path, "--tag", "first")
    for skill in (0.5, 0.7, 0.9):

        def retune(data: dict[str, Any], value: float = skill) -> None:
            data["models"]["m0"]["sim"]["skill"] = value

        edit_yaml(yaml_path, retune)
        _night(yaml_path)
        cli("gc", str(out))  # each gc archives the older m0 calls
    spent = json.loads(cli("status", str(out), "--json").stdout)["total"]["spent_usd"]
    assert len(list((out / "reports").glob("*.json"))) == 4
    assert len(snapshot_ids(read_history(out))) == 4
    assert len(list((out / "archive" / "reviews").glob("*.parquet"))) == 3
    result = cli(
        "gc",
        str(out),
        "--keep-reports",
        "2",
        "--keep-history",
        "2",
        "--keep-archive",
        "1",
        "--json",
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert len(data["reports_deleted"]) == 2 and len(data["archive_parts_deleted"]) == 4
    assert len(list((out / "reports").glob("*.json"))) == 2
    assert len(list((out / "reports").glob("*.md"))) == 2
    history = read_history(out)
    assert len(snapshot_ids(history)) == 3  # the newest two, and the tagged first one
    assert "first" in history["tag"].to_list()
    assert len(list((out / "archive" / "reviews").glob("*.parquet"))) == 1
    after = json.loads(cli("status", str(out), "--json").stdout)["total"]["spent_usd"]
    assert after == pytest.approx(spent)
    assert cli("leaderboard", str(out), "--diff", "first..", "--format", "json").exit_code == 0


def test_the_logrotate_snippet_covers_the_cron_lines_logs(tmp_path: Path) -> None:
    snippet = REPO / "scripts" / "logrotate" / "arena-nightly"
    text = snippet.read_text()
    docs = (REPO / "docs" / "nightly.md").read_text()
    cron = next(
        line for line in docs.splitlines() if line.startswith("15 ") and "arena-nightly.sh" in line
    )
    logs = [word.lstrip(">2") for word in cron.split() if "/var/log/arena/" in word]
    assert logs and all(log in text.split("{")[0] for log in logs)
    assert "copytruncate" not in text.replace("no copytruncate", "")
    logrotate = shutil.which("logrotate")
    if logrotate is None:
        pytest.skip("logrotate is not installed: the snippet was not checked by it")
    local = tmp_path / "arena-nightly"
    local.write_text(text.replace("/var/log/arena", str(tmp_path)).replace("root adm", ""))
    for log in logs:
        (tmp_path / Path(log).name).write_text("x\n")
    done = subprocess.run(
        [logrotate, "-d", "-s", str(tmp_path / "state"), str(local)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "error" not in done.stderr.lower()


def test_the_record_template_change_is_one_snapshot_with_its_report(tmp_path: Path) -> None:
    """The report of a night with a changed template names the change (attribution intact)."""
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    _night(yaml_path)
    template = tmp_path / "review.txt"
    template.write_text("Judge carefully.\n" + DEFAULT_REVIEW_TEMPLATE.read_text())
    edit_yaml(yaml_path, lambda d: d.update(review={"template": "review.txt"}))
    line = _night(yaml_path)
    report = json.loads(Path(line["report"]).read_text())
    assert report["diff"]["changes"] == ["review template changed: 36 reviews re-run"]
    assert report["record"] == line["record"]
