"""Operations under cron: every exit code through the wrapper script, signals, kill -9."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from arena.store import RunLock
from arena.store._lock import LOCK_NAME
from tests.conftest import small_tournament
from tests.rundir._support import validate_record

REPO = Path(__file__).resolve().parents[2]
WRAPPER = REPO / "scripts" / "arena-nightly.sh"
STAMP = re.compile(r"^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\] ")

pytestmark = pytest.mark.slow


@dataclass
class Ended:
    """A finished process: exit code, stdout, stderr."""

    code: int
    out: str
    err: str

    def summary(self) -> dict[str, Any]:
        """The JSON summary line of `arena run --json`."""
        data: dict[str, Any] = json.loads(self.out.strip().splitlines()[-1])
        return data


def _slow(folder: Path) -> Path:
    folder.mkdir()
    return small_tournament(
        folder,
        models=3,
        questions=4,
        sim={"latency_mean": 0.1},
        extra={"providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 2}}}},
    )


def _rows(out: Path) -> int:
    log = out / "log"
    return sum(f.read_bytes().count(b"\n") for f in log.glob("*.jsonl")) if log.is_dir() else 0


def _signal_when_running(targets: list[tuple[subprocess.Popen[str], Path, int]]) -> None:
    """Send each process its signal once its run has logged a few rows."""
    deadline = time.monotonic() + 120
    waiting = list(targets)
    while waiting:
        for target in list(waiting):
            proc, out, sig = target
            if _rows(out) >= 5:
                proc.send_signal(sig)
                waiting.remove(target)
            else:
                assert proc.poll() is None, f"{out}: the run ended before it was signalled"
        assert time.monotonic() < deadline
        time.sleep(0.01)


def _default_hangup() -> None:
    """In the child before exec: SIGHUP to its default action, whatever the parent did."""
    signal.signal(signal.SIGHUP, signal.SIG_DFL)


def _shim(folder: Path) -> Path:
    """An `arena` executable for the wrapper: this interpreter's arena."""
    shim = folder / "arena"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m arena "$@"\n')
    shim.chmod(0o755)
    return shim


@pytest.fixture(scope="module")
def ended(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Ended]]:
    """Every exit-code scenario, started at once (they spend most time importing)."""
    root = tmp_path_factory.mktemp("ops")
    env_file = root / "keys.env"
    env_file.write_text("# API keys\nexport OPENAI_API_KEY='sk-test'\n")
    env = {**os.environ, "ARENA_BIN": str(_shim(root)), "ARENA_ENV_FILE": str(env_file)}

    def start(yaml_path: Path, *args: str, direct: bool = False) -> subprocess.Popen[str]:
        cmd = (
            [sys.executable, "-m", "arena", "run", str(yaml_path), "--json"]
            if direct
            else [str(WRAPPER), str(yaml_path), *args]
        )
        return subprocess.Popen(
            cmd,
            cwd=REPO,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            # A shell cannot trap a signal ignored when it starts: under `nohup pytest`
            # the wrapper would inherit SIGHUP ignored and never see the hangup.
            preexec_fn=_default_hangup,
        )

    dirs = {name: root / name for name in ("ok", "bad", "partial", "budget", "locked")}
    for folder in dirs.values():
        folder.mkdir()
    bad = small_tournament(dirs["bad"])
    bad.write_text(bad.read_text().replace("contestants:", "contestant:"))
    priced = {
        "prices": {f"m{i}": {"input": 1000.0, "output": 1000.0} for i in range(3)},
        "models": {f"m{i}": {"provider": "sim", "max_tokens": 64} for i in range(3)},
    }
    flaky = {"retry": {"max_attempts": 1, "backoff_base": 0.0, "backoff_max": 0.0}}
    (dirs["locked"] / "out").mkdir()
    lock = RunLock(dirs["locked"] / "out")
    lock.acquire()
    procs = {
        "ok": start(small_tournament(dirs["ok"], models=3, questions=2)),
        "bad": start(bad),
        "partial": start(small_tournament(dirs["partial"], sim={"failure_rate": 0.5}, extra=flaky)),
        "budget": start(small_tournament(dirs["budget"], extra=priced), "--budget", "0.5"),
        "locked": start(small_tournament(dirs["locked"])),
        "sigterm": start(_slow(root / "sigterm")),
        "sighup": start(_slow(root / "sighup")),
        "sigint": start(_slow(root / "sigint"), direct=True),
        "sigkill": start(_slow(root / "sigkill"), direct=True),
    }
    try:
        _signal_when_running(
            [
                (procs["sigterm"], root / "sigterm" / "out", signal.SIGTERM),  # to the wrapper
                (procs["sighup"], root / "sighup" / "out", signal.SIGHUP),  # passed on as TERM
                (procs["sigint"], root / "sigint" / "out", signal.SIGINT),
                (procs["sigkill"], root / "sigkill" / "out", signal.SIGKILL),
            ]
        )
        results = {name: Ended(p.wait(timeout=180), *p.communicate()) for name, p in procs.items()}
    finally:
        lock.release()
        for p in procs.values():
            if p.poll() is None:
                p.kill()
    # The next night after kill -9: the lock it held does not block.
    assert (root / "sigkill" / "out" / LOCK_NAME).exists()
    rerun = start(root / "sigkill" / "t.yaml")
    results["after_sigkill"] = Ended(rerun.wait(timeout=180), *rerun.communicate())
    results["root"] = Ended(0, str(root), "")
    yield results


@pytest.mark.parametrize(
    ("scenario", "code"),
    [
        ("ok", 0),
        ("bad", 2),
        ("partial", 3),
        ("budget", 4),
        ("locked", 75),
        ("sigterm", 143),
        ("sighup", 143),
        ("sigint", 130),
        ("after_sigkill", 0),
    ],
)
def test_exit_code(ended: dict[str, Ended], scenario: str, code: int) -> None:
    result = ended[scenario]
    assert result.code == code, result.err[-2000:]
    summary = result.summary()  # every exit code has its line, with the run's record
    assert summary["exit_code"] == code
    assert summary["run_id"] and summary["started_at"] <= summary["ended_at"]
    assert isinstance(summary["pid"], int)
    record = validate_record(summary["record"])  # the same shape for every exit code
    assert (record["exit_code"], record["run_id"]) == (code, summary["run_id"])
    if scenario == "bad":  # a first night with bad input creates no run directory
        assert summary["report"] is None and "contestants" in summary["error"]
        assert record["status"] == "bad_input" and record["report"] is None
        return
    if scenario == "locked":  # the holder's directory: a refused run writes nothing there
        assert summary["report"] is None and record["status"] == "locked"
        assert not (Path(summary["output"]) / "last_run.json").exists()
        return
    report = json.loads(Path(summary["report"]).read_text())
    assert report["exit_code"] == code and report["run"]["run_id"] == summary["run_id"]
    assert report["record"] == record
    last = validate_record(json.loads((Path(summary["output"]) / "last_run.json").read_text()))
    assert last == record


def test_a_run_killed_with_sigkill_is_marked_killed_by_the_next_one(
    ended: dict[str, Ended],
) -> None:
    after = ended["after_sigkill"].summary()
    reports = Path(after["report"]).parent
    records = [json.loads(p.read_text())["record"] for p in sorted(reports.glob("*.json"))]
    killed = [r for r in records if r["run_id"] != after["run_id"]]
    assert len(killed) == 1
    record = validate_record(killed[0])
    assert (record["status"], record["exit_code"], record["ended_at"]) == ("killed", 137, None)
    assert after["run_id"] in record["error"]
    markdown = Path(record["report"]).with_suffix(".md").read_text()
    assert markdown.splitlines()[0].endswith("exit 137 (killed)")


def test_wrapper_logs_with_timestamps_and_prints_the_summary(ended: dict[str, Ended]) -> None:
    ok = ended["ok"]
    lines = ok.err.strip().splitlines()
    summary = ok.summary()
    # The wrapper's run id is the one arena records.
    assert lines[0].endswith(f"(time limit 6h, run id {summary['run_id']})")
    assert lines[-1].endswith("exit code 0")
    assert all(STAMP.match(line) for line in lines), ok.err  # arena's progress lines too
    assert any("arena-nightly" not in line for line in lines)
    summary = ok.summary()
    assert (summary["new"], summary["stale"], summary["retried"]) == (42, 0, 0)


def test_interrupted_and_budget_runs_are_resumable(ended: dict[str, Ended]) -> None:
    for name in ("sigterm", "sighup", "sigint"):
        summary = ended[name].summary()
        assert summary["interrupted"] and summary["pending"] > 0
    budget = ended["budget"].summary()
    assert budget["budget_stopped"] and 0 < budget["spent_usd"] <= 0.5
    assert budget["pending"] > 0
    assert "another arena run" in ended["locked"].err
    assert "contestant" in ended["bad"].err
    after = ended["after_sigkill"].summary()
    assert after["skipped"] > 0 and after["pending"] == 0


def test_wrapper_loads_the_env_file_and_keeps_a_timed_out_exit_code(tmp_path: Path) -> None:
    fake = tmp_path / "fake-arena"
    fake.write_text(
        '#!/bin/sh\necho "$*|$OPENAI_API_KEY|$OTHER"\n'
        'if [ -n "$KILL" ]; then echo "$$" >"$KILL"; kill -9 $$; fi\n'
        'if [ -n "$SLEEP" ]; then trap "exit 143" TERM; sleep "$SLEEP" & wait; fi\n'
        'exit "${CODE:-0}"\n'
    )
    fake.chmod(0o755)
    env_file = tmp_path / "env"
    env_file.write_text('OPENAI_API_KEY="sk-1 2"\n\n# c\nexport OTHER=x=y\n')
    env = {**os.environ, "ARENA_BIN": str(fake), "ARENA_ENV_FILE": str(env_file)}

    def wrap(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(WRAPPER), *args], env={**env, **extra}, text=True, capture_output=True, timeout=60
        )

    done = wrap("t.yaml", "--budget", "3", CODE="3")
    assert done.returncode == 3
    echoed, fallback = done.stdout.strip().splitlines()
    assert echoed == "run t.yaml --budget 3 --json|sk-1 2|x=y"
    # No JSON summary from "arena": the wrapper's line stands in for it.
    line = json.loads(fallback)
    assert line["exit_code"] == 3 and line["source"] == "arena-nightly.sh"
    assert line["run_id"] and line["started_at"] <= line["ended_at"] and line["pid"] > 0
    # arena killed outright: the fallback line has arena's own pid.
    killed = wrap("t.yaml", KILL=str(tmp_path / "pid"))
    assert killed.returncode == 137
    line = json.loads(killed.stdout.strip().splitlines()[-1])
    assert line["exit_code"] == 137 and line["pid"] == int((tmp_path / "pid").read_text())
    assert wrap("t.yaml", SLEEP="30", ARENA_TIMEOUT="1").returncode == 143
    assert wrap("t.yaml", ARENA_ENV_FILE=str(tmp_path / "missing")).returncode == 2
    env_file.write_text("not a key line\n")
    assert wrap("t.yaml").returncode == 2
    assert wrap().returncode == 2


def test_nights_through_the_documented_cron_line(tmp_path: Path) -> None:
    """The cron line of docs/nightly.md, pointed at a temporary tree: every night a line."""
    docs = (REPO / "docs" / "nightly.md").read_text()
    cron = next(
        line for line in docs.splitlines() if line.startswith("15 ") and "arena-nightly.sh" in line
    )
    command = cron.split(None, 5)[5]
    home = tmp_path / "tournaments"
    home.mkdir()
    yaml_path = small_tournament(home, models=3, questions=2)
    data = yaml_path.read_text().replace(f"output: {home / 'out'}\n", "")
    assert "output:" not in data  # the default, runs/<name>, relative to the directory
    (home / "nightly.yaml").write_text(data)
    logs = tmp_path / "log"
    logs.mkdir()
    command = (
        command.replace("/opt/arena/tournaments", str(home))
        .replace("/opt/arena/scripts", str(REPO / "scripts"))
        .replace("/opt/arena/.venv/bin/arena", str(_shim(tmp_path)))
        .replace("/var/log/arena", str(logs))
    )
    env = {k: v for k, v in os.environ.items() if k != "ARENA_ENV_FILE"}
    env["HOME"] = str(tmp_path)  # cron starts in the home directory
    for night in range(2):
        if night == 1:  # a typo in the YAML on the second night
            bad = data.replace("contestants:", "contestant:")
            (home / "nightly.yaml").write_text(bad)
        subprocess.run(["sh", "-c", command], cwd=tmp_path, env=env, timeout=120, check=False)
    lines = [json.loads(line) for line in (logs / "nightly.jsonl").read_text().splitlines()]
    assert [line["exit_code"] for line in lines] == [0, 2]
    assert len({line["run_id"] for line in lines}) == 2
    run_dir = home / "runs" / "small"
    assert lines[0]["output"] == "runs/small" and (run_dir / "log").is_dir()
    reports = sorted(p.name for p in (run_dir / "reports").glob("*.json"))
    assert reports == sorted(f"{line['run_id']}.json" for line in lines)
    assert "contestants" in lines[1]["error"]
