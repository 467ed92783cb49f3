"""What an on-call engineer relies on: every exit recorded truthfully (a full disk at the
start too), a locked run that changes nothing, kills and hangs visible, one run id,
`arena status --json` always an object, and alerts that arrive and cannot hurt."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner
from prometheus_client.parser import text_string_to_metric_families

import arena.ops._alerts as alerts_module
import arena.ops._record as record_module
from arena.cli import main
from arena.ops import AlertSettings, deliver_alert, write_metrics
from arena.rundir import read_history
from arena.store import RunLog
from tests.conftest import small_tournament
from tests.rundir._support import add_model, cli, edit_yaml, priced, validate_record

REPO = Path(__file__).resolve().parents[2]


def _metrics(path: Path) -> dict[str, float]:
    return {
        sample.name: sample.value
        for family in text_string_to_metric_families(path.read_text())
        for sample in family.samples
    }


def _alert_command(folder: Path) -> str:
    """An alert command appending each record it gets as one line of folder/alerts.jsonl."""
    script = folder / "notify.py"
    target = folder / "alerts.jsonl"
    script.write_text(
        "import json, os, sys\n"
        "record = json.load(sys.stdin)\n"
        "record['_env_run_id'] = os.environ.get('ARENA_RUN_ID')\n"
        f"with open({str(target)!r}, 'a') as f:\n"
        "    f.write(json.dumps(record) + '\\n')\n"
    )
    return f"{sys.executable} {script}"


def _alerts(folder: Path) -> list[dict[str, Any]]:
    path = folder / "alerts.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


# 1. A full disk at the start: exit 74 "storage" everywhere, one line on stdout.


def test_a_full_disk_at_the_start_is_recorded_as_storage_everywhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_path = small_tournament(
        tmp_path,
        models=3,
        questions=2,
        extra={"alerts": {"command": _alert_command(tmp_path)}, "metrics_file": "arena.prom"},
    )
    out = tmp_path / "out"
    assert cli("run", str(yaml_path)).exit_code == 0
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def no_space(*args: Any, **kwargs: Any) -> None:
        raise full

    # The disk is full from the start: the plan file cannot be written, nor any new file
    # (the reports, a new last_run.json); only what already holds blocks can be rewritten.
    monkeypatch.setattr("arena.engine.start_run", no_space)
    monkeypatch.setattr(record_module, "write_json_atomic", no_space)
    monkeypatch.setattr("arena.ops._report.write_report", no_space)
    result = CliRunner().invoke(main, ["run", str(yaml_path), "--json"])
    assert result.exit_code == 74, result.output
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1  # exactly one line, and it carries the record
    line = json.loads(lines[0])
    record = validate_record(line["record"])
    assert (line["exit_code"], record["exit_code"], record["status"]) == (74, 74, "storage")
    assert os.strerror(errno.ENOSPC) in record["error"]
    last = validate_record(json.loads((out / "last_run.json").read_text()))
    assert (last["run_id"], last["exit_code"], last["status"]) == (line["run_id"], 74, "storage")
    alert = _alerts(tmp_path)[-1]
    assert alert["exit_code"] == 74 and "exit 74" in alert["alert"]["reason"]
    assert _metrics(tmp_path / "arena.prom")["arena_last_run_exit_code"] == 74
    status = cli("status", str(out))
    assert f"{line['run_id']}: exit 74" in status.stdout


def test_when_nothing_can_be_written_the_line_still_carries_the_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_path = small_tournament(tmp_path, models=2, questions=1)
    full = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def no_space(*args: Any, **kwargs: Any) -> None:
        raise full

    monkeypatch.setattr("arena.engine.start_run", no_space)
    monkeypatch.setattr("arena.ops._report.write_report", no_space)
    monkeypatch.setattr("arena.ops._record.write_last_run_record", no_space)
    result = CliRunner().invoke(main, ["run", str(yaml_path), "--json"])
    assert result.exit_code == 74
    (line,) = result.stdout.strip().splitlines()
    assert validate_record(json.loads(line)["record"])["status"] == "storage"


# 2. A locked run changes nothing on disk: tests/rundir/test_defects.py
#    (test_every_early_exit_updates_last_run_json_and_a_held_lock_changes_nothing).


# 3. Kills and hangs visible.


def _slow(folder: Path, **extra: Any) -> Path:
    """84 calls two at a time, 0.05 s each: a run that goes on for a few heartbeats."""
    return small_tournament(
        folder,
        models=3,
        questions=4,
        sim={"latency_mean": 0.05},
        extra={
            "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 2}}},
            **priced(),
            **extra,
        },
    )


def _wait_for(check: Any, proc: subprocess.Popen[bytes], what: str) -> None:
    deadline = time.monotonic() + 120
    while not check():
        assert proc.poll() is None, f"the run ended before {what}"
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _spent_rows(out: Path) -> bool:
    try:
        return RunLog(out).spent_usd() > 0
    except Exception:  # noqa: BLE001 - the log is being created
        return False


def test_a_kill_9_shows_at_once_and_the_next_run_records_and_alerts_it(tmp_path: Path) -> None:
    yaml_path = _slow(
        tmp_path,
        alerts={"command": _alert_command(tmp_path)},
        metrics_file="arena.prom",
    )
    out = tmp_path / "out"
    metrics = tmp_path / "arena.prom"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena", "run", str(yaml_path), "--json"],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        # The heartbeat: while the run works, the metrics say a run is in progress.
        _wait_for(lambda: metrics.exists(), proc, "the first heartbeat")
        beat = _metrics(metrics)
        assert beat["arena_run_in_progress"] == 1
        assert beat["arena_run_started_timestamp_seconds"] <= time.time()
        assert (
            beat["arena_run_last_progress_timestamp_seconds"]
            >= (beat["arena_run_started_timestamp_seconds"])
        )
        _wait_for(lambda: _spent_rows(out), proc, "it spent")
        live = json.loads(cli("status", str(out), "--json").stdout)
        running = live["last_run"]
        assert running["status"] == "running" and running["alive"] is True
        assert (live["lock"]["pid"], live["lock"]["alive"]) == (proc.pid, True)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    killed_id = running["run_id"]
    spent = RunLog(out).spent_usd()
    # At once, before any other run: status says killed, with the dead pid and host.
    status = cli("status", str(out))
    assert f"{killed_id}: killed (pid {proc.pid} on {socket.gethostname()}" in status.stdout
    shown = json.loads(cli("status", str(out), "--json").stdout)
    data = shown["last_run"]
    assert (data["status"], data["alive"], data["exit_code"]) == ("killed", False, None)
    # the lock's holder file, left by kill -9, names the dead process
    assert (shown["lock"]["pid"], shown["lock"]["alive"]) == (proc.pid, False)
    assert f"lock: left by pid {proc.pid}" in status.stdout
    # The next run lists it with what it spent, and alerts for it.
    result = CliRunner().invoke(main, ["run", str(yaml_path), "--json"])
    assert result.exit_code == 0, result.output
    line = json.loads(result.stdout.strip().splitlines()[-1])
    record = validate_record(line["record"])
    assert [k["run_id"] for k in record["killed_runs"]] == [killed_id]
    assert record["killed_runs"][0]["spent_usd"] == pytest.approx(spent)
    assert record["spent_usd"] + spent == pytest.approx(RunLog(out).spent_usd())  # none lost
    alert = _alerts(tmp_path)[-1]
    assert alert["run_id"] == line["run_id"] and killed_id in alert["alert"]["reason"]
    assert alert["_env_run_id"] == line["run_id"]  # ARENA_RUN_ID for the alert command
    after = _metrics(metrics)
    assert after["arena_run_in_progress"] == 0 and after["arena_killed_runs_found"] == 1
    assert after["arena_killed_runs_spent_usd"] == pytest.approx(spent)
    killed = json.loads((out / "reports" / f"{killed_id}.json").read_text())["record"]
    assert (killed["status"], killed["spent_usd"]) == ("killed", pytest.approx(spent))
    runs = {r["run_id"]: r for r in json.loads(cli("runs", str(out), "--json").stdout)["runs"]}
    assert (runs[killed_id]["status"], runs[killed_id]["exit_code"]) == ("killed", 137)
    assert runs[killed_id]["spent_usd"] == pytest.approx(spent)


def test_a_night_longer_than_after_seconds_alerts_once_while_it_runs(tmp_path: Path) -> None:
    yaml_path = _slow(tmp_path, alerts={"command": _alert_command(tmp_path), "after_seconds": 0.5})
    result = CliRunner().invoke(main, ["run", str(yaml_path), "--json"])
    assert result.exit_code == 0, result.output
    line = json.loads(result.stdout.strip().splitlines()[-1])
    assert line["wall_seconds"] > 0.5
    (alert,) = _alerts(tmp_path)  # once, while it ran (the run itself ended well)
    assert alert["run_id"] == line["run_id"] and alert["exit_code"] is None
    assert "longer than alerts.after_seconds (0.5 s)" in alert["alert"]["reason"]


# 4. `arena status --json` always prints an object; `arena run` words a config error
#    as `arena check` does.


def test_status_json_prints_an_object_when_the_yaml_has_an_error(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=2, questions=1)
    first = json.loads(cli("run", str(yaml_path), "--json").stdout.strip().splitlines()[-1])
    yaml_path.write_text(yaml_path.read_text().replace("contestants:", "contestant:"))
    result = cli("status", str(tmp_path / "out"), "--json", "--max-age", "1d")
    assert result.exit_code == 2
    data = json.loads(result.stdout)
    assert "contestants" in data["error"]
    assert data["last_run"]["run_id"] == first["run_id"] and data["freshness"]["fresh"]


def test_run_words_a_misspelt_key_as_check_does(tmp_path: Path) -> None:
    commands = {"command": _alert_command(tmp_path)}
    yaml_path = small_tournament(tmp_path, models=2, questions=1, extra={"alerts": commands})
    yaml_path.write_text(yaml_path.read_text().replace("contestants:", "contestant:"))
    hint = "contestant: unknown key (did you mean 'contestants'?)"
    assert hint in cli("check", str(yaml_path)).output
    result = cli("run", str(yaml_path), "--json")
    assert result.exit_code == 2 and hint in result.stderr
    assert hint in json.loads(result.stdout)["record"]["error"]
    assert hint in _alerts(tmp_path)[-1]["error"]  # the alert carries the helpful one


# 5. One run id everywhere.


def test_one_run_id_in_log_rows_ledger_record_report_history_and_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2, extra=priced())
    out = tmp_path / "out"
    monkeypatch.setenv("ARENA_RUN_ID", "nightly-2026-12-04")
    line = json.loads(cli("run", str(yaml_path), "--json").stdout.strip().splitlines()[-1])
    run_id = line["run_id"]
    assert run_id == "nightly-2026-12-04" == line["record"]["run_id"]
    log = RunLog(out)
    for table in ("answers", "reviews"):
        assert set(log.read_all(table, ["run_id"])["run_id"].unique()) == {run_id}
    assert (out / "reports" / f"{run_id}.json").is_file()
    assert json.loads((out / "last_run.json").read_text())["run_id"] == run_id
    assert set(read_history(out)["run_id"].unique()) == {run_id}
    edit_yaml(yaml_path, lambda d: d["models"]["m0"]["sim"].update(skill=0.5))  # stale rows
    monkeypatch.delenv("ARENA_RUN_ID")
    second = json.loads(cli("run", str(yaml_path), "--json").stdout.strip().splitlines()[-1])
    assert cli("gc", str(out)).exit_code == 0
    ledger = json.loads((out / "log" / "spend_ledger.json").read_text())["entries"]
    by_run = pl.DataFrame(ledger).group_by("run_id").agg(pl.col("cost_usd").sum())
    spent = dict(zip(by_run["run_id"], by_run["cost_usd"], strict=True))
    assert spent[run_id] == pytest.approx(line["spent_usd"])  # joins the record by run id
    assert spent[second["run_id"]] == pytest.approx(second["spent_usd"])


# 6. Alerts that arrive and cannot hurt.


class _Hostile:
    """A local HTTP server that answers badly: `mode` trickle, endless, redirect or 503."""

    def __init__(self, mode: str) -> None:
        self.hits = 0
        hostile = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                hostile.hits += 1
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    if mode == "redirect":
                        self.send_response(302)
                        self.send_header("Location", "http://127.0.0.1:9/elsewhere?token=x")
                        self.end_headers()
                    elif mode == "503":
                        self.send_response(503 if hostile.hits < 3 else 200)
                        self.end_headers()
                    else:
                        self.send_response(200)
                        self.end_headers()
                        chunk = b"x" if mode == "trickle" else b"x" * 65536
                        while True:
                            self.wfile.write(chunk)
                            self.wfile.flush()
                            if mode == "trickle":
                                time.sleep(0.2)
                except OSError:
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/services/T0/B0/s3cr3t"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hostile(request: pytest.FixtureRequest) -> Iterator[_Hostile]:
    server = _Hostile(request.param)
    yield server
    server.close()


@pytest.mark.parametrize("hostile", ["trickle", "endless"], indirect=True)
def test_a_webhook_that_never_finishes_is_cut_at_the_deadline(
    hostile: _Hostile,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The deadline is the point here (the 503 case below waits the real backoff).
    monkeypatch.setattr(alerts_module, "BACKOFF_SECONDS", 0.05)
    settings = AlertSettings(webhook=hostile.url, timeout=0.3)
    started = time.monotonic()
    problems = deliver_alert(settings, {"run_id": "r", "alert": {"reason": "x"}}, tmp_path)
    # Either the answer was read (capped) and closed, or the deadline cut it: never more
    # than 3 attempts of 0.3 s and the backoff.
    assert time.monotonic() - started < 3 * 0.3 + 0.15 + 3.0
    if problems:
        assert "no answer within 0.3 s" in problems[0]
    assert "s3cr3t" not in capsys.readouterr().err


@pytest.mark.parametrize("hostile", ["redirect"], indirect=True)
def test_a_redirect_is_not_followed_and_logged(
    hostile: _Hostile, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    problems = deliver_alert(AlertSettings(webhook=hostile.url), {"run_id": "r"}, tmp_path)
    assert hostile.hits == 1  # no retry, no GET to the new place
    assert "HTTP 302" in problems[0] and "not followed" in problems[0]
    logged = (tmp_path / "reports" / "problems.log").read_text()
    assert "not followed" in logged
    for text in (logged, capsys.readouterr().err):
        assert "s3cr3t" not in text and "token=x" not in text  # secrets in URLs redacted


@pytest.mark.parametrize("hostile", ["503"], indirect=True)
def test_a_failing_webhook_is_tried_again_with_backoff(hostile: _Hostile, tmp_path: Path) -> None:
    problems = deliver_alert(AlertSettings(webhook=hostile.url), {"run_id": "r"}, tmp_path)
    assert problems == [] and hostile.hits == 3


def test_an_alert_command_that_prints_without_end_is_capped_and_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(alerts_module, "BACKOFF_SECONDS", 0.05)
    loud = tmp_path / "loud.py"
    loud.write_text("import sys\nwhile True:\n    sys.stdout.write('y' * 65536)\n")
    settings = AlertSettings(command=f"{sys.executable} {loud}", timeout=0.3)
    started = time.monotonic()
    problems = deliver_alert(settings, {"run_id": "r"}, tmp_path)
    assert problems and "still running after 0.3 s" in problems[0]
    assert time.monotonic() - started < 3 * 0.3 + 0.15 + 3.0


def test_an_undelivered_alert_is_sent_again_with_the_next_run(tmp_path: Path) -> None:
    gate = tmp_path / "down"
    gate.write_text("")
    target = tmp_path / "alerts.jsonl"
    script = tmp_path / "notify.py"
    script.write_text(
        "import json, os, sys\n"
        f"if os.path.exists({str(gate)!r}):\n    sys.exit(1)\n"
        f"with open({str(target)!r}, 'a') as f:\n"
        "    f.write(json.dumps(json.load(sys.stdin)) + '\\n')\n"
    )
    yaml_path = small_tournament(
        tmp_path,
        models=2,
        questions=1,
        extra={"alerts": {"command": f"{sys.executable} {script}", "timeout": 5}},
    )
    bad = yaml_path.read_text()
    yaml_path.write_text(bad.replace("contestants:", "contestant:"))
    (tmp_path / "out").mkdir()
    first = json.loads(cli("run", str(yaml_path), "--json").stdout)
    assert first["exit_code"] == 2 and not target.exists()  # the channel is down
    gate.unlink()
    yaml_path.write_text(bad)
    second = json.loads(cli("run", str(yaml_path), "--json").stdout.strip().splitlines()[-1])
    assert second["exit_code"] == 0
    sent = _alerts(tmp_path)
    assert [a["run_id"] for a in sent] == [first["run_id"], second["run_id"]]
    assert "recovered" in sent[1]["alert"]["reason"]


def test_metrics_are_written_only_as_a_regular_file_in_an_existing_folder(tmp_path: Path) -> None:
    record = {"output": "runs/x", "exit_code": 0, "calls": {}, "snapshot": {}}
    with pytest.raises(ValueError, match="does not exist"):
        write_metrics(tmp_path / "missing" / "arena.prom", record, {})
    assert not (tmp_path / "missing").exists()  # no folder is created
    fifo = tmp_path / "arena.prom"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        write_metrics(fifo, record, {})
    assert fifo.is_fifo()  # left as it was
    fifo.unlink()
    write_metrics(fifo, record, {})
    text = fifo.read_text()
    assert f'directory="{os.path.abspath("runs/x")}"' in text  # the label is absolute
    # `arena check` warns about what `arena run` refuses.
    yaml_path = small_tournament(tmp_path, extra={"metrics_file": "missing/arena.prom"})
    assert "missing does not exist" in cli("check", str(yaml_path)).output


# 7. `arena runs DIR`: one row per run, kept across gc.


def test_runs_lists_every_run_and_gc_keeps_the_list(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=2, questions=1, extra=priced(2))
    out = tmp_path / "out"
    lines = [
        json.loads(cli("run", str(yaml_path), "--json", *extra).stdout.strip().splitlines()[-1])
        for extra in ((), ("--tag", "second"))
    ]
    yaml_path.write_text(yaml_path.read_text().replace("contestants:", "contestant:"))
    bad = json.loads(cli("run", str(yaml_path), "--json").stdout)
    assert cli("gc", str(out), "--keep-reports", "1").exit_code == 0
    assert len(list((out / "reports").glob("*.json"))) == 1  # the reports were pruned...
    rows = json.loads(cli("runs", str(out), "--json").stdout)["runs"]  # ...not the runs
    assert [r["run_id"] for r in rows] == [x["run_id"] for x in (*lines, bad)]
    assert [(r["exit_code"], r["status"], r["snapshot"]) for r in rows] == [
        (0, "complete", 1),
        (0, "complete", 2),
        (2, "bad_input", None),
    ]
    assert rows[0]["calls"] == lines[0]["completed"] and rows[0]["spent_usd"] > 0
    csv_text = cli("runs", str(out), "--format", "csv").stdout.splitlines()
    assert csv_text[0].startswith("run_id,command,started_at") and len(csv_text) == 4
    table = cli("runs", str(out)).stdout
    assert all(r["run_id"] in table for r in rows)


def test_gc_keep_history_never_renumbers_snapshots(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    out = tmp_path / "out"
    numbers = []
    for skill in (3.0, 0.5, 0.7, 0.9, 1.1):
        edit_yaml(yaml_path, lambda d, v=skill: d["models"]["m0"]["sim"].update(skill=v))
        line = json.loads(cli("run", str(yaml_path), "--json").stdout.strip().splitlines()[-1])
        numbers.append(line["record"]["snapshot"]["number"])
    assert numbers == [1, 2, 3, 4, 5]
    before = json.loads(cli("leaderboard", str(out), "--diff", "4..5", "--format", "json").stdout)
    assert cli("gc", str(out), "--keep-history", "2").exit_code == 0
    after = cli("leaderboard", str(out), "--diff", "4..5", "--format", "json")
    assert after.exit_code == 0, after.output  # snapshot 4 is still number 4
    moved = json.loads(after.stdout)
    assert (moved["before"]["number"], moved["after"]["number"]) == (4, 5)
    assert moved["models"] == before["models"]
    gone = cli("leaderboard", str(out), "--diff", "2..5")
    assert gone.exit_code == 2 and "numbered 4 to 5" in gone.output
    history = json.loads(cli("leaderboard", str(out), "--history", "--format", "json").stdout)
    assert [s["number"] for s in history["snapshots"]] == [4, 5]
    edit_yaml(yaml_path, lambda d: d["models"]["m0"]["sim"].update(skill=1.3))
    line = json.loads(cli("run", str(yaml_path), "--json").stdout.strip().splitlines()[-1])
    assert line["record"]["snapshot"]["number"] == 6  # the next number, not 3


def test_the_diff_table_shows_before_and_now_on_the_scale_of_the_change(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=3)
    out = tmp_path / "out"
    assert cli("run", str(yaml_path)).exit_code == 0
    edit_yaml(yaml_path, add_model("m3", 6.0))  # a strong newcomer: every stored rating moves
    assert cli("run", str(yaml_path)).exit_code == 0
    data = json.loads(cli("leaderboard", str(out), "--diff", "--format", "json").stdout)
    kept = [m for m in data["models"] if m["status"] == "kept"]
    assert any(abs(m["bt_change"] - m["bt_change_raw"]) > 0.05 for m in kept)  # anchored
    for m in kept:
        assert m["bt_before"] + m["bt_change"] == pytest.approx(m["bt_after_anchored"])
    table = cli("leaderboard", str(out), "--diff", "--format", "markdown").stdout
    assert "| BT before | BT now (anchored) | change |" in table
    name = kept[0]["model"]
    row = next(
        line
        for line in table.splitlines()
        if line.startswith(f"| {kept[0]['rank_after']} | {name} |")
    )
    before, now, change = (cell.strip() for cell in row.strip("|").split("|")[4:7])
    assert float(before) + float(change.split()[0]) == pytest.approx(float(now), abs=0.11)
