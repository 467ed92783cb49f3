"""Twenty-five simulated nights of one tournament directory, as cron would run them.

Each night is `python -m arena run T.yaml --json` in its own process (or what
the night is about: gc, a rollback, a typo). The tournament mixes sim models
with one model served by the local fake server (its OpenAI API), so an outage
is the fake server's faults (503 and 429). Along the way: a model added and
one retired, questions added, a price change, a budget stop, kill -9, SIGTERM,
a night started while another holds the lock, a full disk (a 2 MiB tmpfs
mounted for the run directory where the platform allows it, else a simulated
ENOSPC, which the output says), `arena gc` with every retention flag, a
rollback of the YAML, a typo, a night longer than `alerts.after_seconds`.

Alerts go to a local webhook and to a command; both are counted.

Printed JSON: nights, exit_codes_as_documented (nights whose exit code is the
one docs/nightly.md gives for what happened), records_valid (the `--json`
line is one line whose record validates against the schema and agrees with
last_run.json, the metrics and the report; a locked night changed nothing),
alerts_expected, alerts_delivered (on both channels), paid_twice (calls
logged ok or invalid more than once), spend_lost (USD in the log that no
night's record, nor a killed night's, accounts for), and the nights
themselves. `--smoke`: 9 nights (CI); `--simulate-full-disk`: no tmpfs. Exits 1 when a
night is not as documented.

    python benchmarks/bench_nights.py [--smoke]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from prometheus_client.parser import text_string_to_metric_families

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from arena.fakeserver import FakeServer, FakeServerConfig  # noqa: E402
from arena.ops import RECORD_SCHEMA_PATH  # noqa: E402
from arena.store import RunLock, RunLog  # noqa: E402

KEY_ENV = "BENCH_FAKE_KEY"
SCHEMA = json.loads(RECORD_SCHEMA_PATH.read_text())


class Inbox:
    """The alert webhook: a local HTTP server keeping every record POSTed to it."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        inbox = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server API
                length = int(self.headers.get("Content-Length", "0"))
                inbox.bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks/T000/B000/secret"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@dataclass
class Night:
    name: str
    expected: int  # the documented exit code (-9: killed, no exit code of its own)
    code: int | None = None
    line: dict[str, Any] | None = None
    valid: bool = False
    overdue_alert: bool = False  # an alert expected while it ran (after_seconds)
    notes: list[str] = field(default_factory=list)


class Bench:
    def __init__(self, root: Path, smoke: bool, simulate: bool = False) -> None:
        self.root = root
        self.smoke = smoke
        self.simulate = simulate
        self.inbox = Inbox()
        self.normal = FakeServer(FakeServerConfig.model_validate({"seed": 1})).start()
        outage = {"seed": 1, "faults": {"error_503": 0.5, "rate_limit": 0.5, "retry_after": 0}}
        self.outage = FakeServer(FakeServerConfig.model_validate(outage)).start()
        self.tmpfs: Path | None = None
        self.out = self._run_directory()
        self.yaml = root / "t.yaml"
        self.nights: list[Night] = []
        self.killed_spend = 0.0
        self.env = {**os.environ, KEY_ENV: "sk-bench", "PYTHONPATH": str(REPO)}
        self.env.pop("ARENA_RUN_ID", None)
        self.alert_file = root / "alerts.jsonl"
        script = root / "notify.py"
        script.write_text(
            "import json, sys\n"
            f"with open({str(self.alert_file)!r}, 'a') as f:\n"
            "    f.write(json.dumps(json.load(sys.stdin)) + '\\n')\n"
        )
        self.questions = 3
        self.config: dict[str, Any] = {
            "name": "nights",
            "seed": 5,
            "questions": "q.jsonl",
            "output": str(self.out),
            "providers": {
                "sim": {"type": "sim", "limits": {"max_concurrency": 8}},
                "fake": {
                    "type": "openai",
                    "base_url": self.normal.url + "/v1",
                    "api_key_env": KEY_ENV,
                    "limits": {"max_concurrency": 4},
                    "timeout": 5,
                },
            },
            "models": {
                "m0": {"provider": "sim", "sim": {"skill": 2.0}},
                "m1": {"provider": "sim", "sim": {"skill": 1.0}},
                "f0": {"provider": "fake", "model": "fake-model-1", "max_tokens": 64},
            },
            "contestants": ["m0", "m1", "f0"],
            "prices": {
                m: {"input": 5.0, "output": 15.0} for m in ("m0", "m1", "m2", "fake-model-1")
            },
            "retry": {"max_attempts": 2, "backoff_base": 0.01, "backoff_max": 0.05},
            "alerts": {
                "webhook": self.inbox.url,
                "command": f"{sys.executable} {script}",
                "after_partial_nights": 1,
                "timeout": 5,
            },
            "metrics_file": str(root / "arena.prom"),
        }
        self._questions(self.questions)
        self._write()

    # ---- the directory, the YAML

    def _run_directory(self) -> Path:
        """DIR on a small tmpfs of its own where mounting is allowed (root on Linux)."""
        mount = self.root / "disk"
        mount.mkdir()
        if not self.simulate and sys.platform.startswith("linux") and shutil.which("mount"):
            done = subprocess.run(
                ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)],
                capture_output=True,
                check=False,
            )
            if done.returncode == 0:
                self.tmpfs = mount
        return mount / "out"

    def close(self) -> None:
        self.normal.stop()
        self.outage.stop()
        self.inbox.server.shutdown()
        if self.tmpfs is not None:
            subprocess.run(["umount", str(self.tmpfs)], check=False)

    def _questions(self, n: int) -> None:
        lines = [json.dumps({"id": f"q{i}", "text": f"Night question {i}?"}) for i in range(n)]
        (self.root / "q.jsonl").write_text("\n".join(lines) + "\n")

    def _write(self) -> None:
        self.yaml.write_text(yaml.safe_dump(self.config, sort_keys=False))

    # ---- one night

    def _popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "arena", *args],
            cwd=self.root,
            env=self.env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def night(
        self,
        name: str,
        expected: int,
        *args: str,
        signal_after: tuple[int, int] | None = None,
    ) -> Night:
        """Run one night; `signal_after` (rows, signal): send it once that many rows are
        in the log's journals."""
        night = Night(name, expected)
        proc = self._popen("run", str(self.yaml), "--json", *args)
        if signal_after is not None:
            rows, sig = signal_after
            deadline = time.monotonic() + 120
            while self._journal_rows() < rows and proc.poll() is None:
                if time.monotonic() > deadline:
                    break
                time.sleep(0.01)
            if proc.poll() is None:
                proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=600)
        night.code = proc.returncode
        lines = stdout.strip().splitlines()
        if night.code == -signal.SIGKILL:
            night.valid = not lines  # killed: no line; its record is the next night's to fix
        else:
            night.valid = len(lines) == 1
            if lines:
                night.line = json.loads(lines[-1])
                night.valid = night.valid and self._check(night)
        if not night.valid:
            night.notes.append(stderr[-600:])
        self.nights.append(night)
        return night

    def _journal_rows(self) -> int:
        log = self.out / "log"
        if not log.is_dir():
            return 0
        return sum(f.read_bytes().count(b"\n") for f in log.glob("*.journal*.jsonl"))

    def _check(self, night: Night) -> bool:
        """The line's record validates and agrees with last_run.json, metrics, report."""
        line = night.line or {}
        record = line.get("record")
        try:
            jsonschema.Draft202012Validator(SCHEMA).validate(record)
        except jsonschema.ValidationError as exc:
            night.notes.append(f"record invalid: {exc.message}")
            return False
        assert isinstance(record, dict)
        ok = record["exit_code"] == night.code == line.get("exit_code")
        if night.code == 75:  # nothing of DIR changed: checked by the caller
            return ok and line.get("report") is None
        last = json.loads((self.out / "last_run.json").read_text())
        ok = (
            ok and last.get("run_id") == record["run_id"] and last.get("status") == record["status"]
        )
        metrics = {
            s.name: s.value
            for f in text_string_to_metric_families((self.root / "arena.prom").read_text())
            for s in f.samples
        }
        ok = ok and metrics.get("arena_last_run_exit_code") == night.code
        ok = ok and metrics.get("arena_run_in_progress") == 0
        if record.get("report"):
            report = json.loads(Path(record["report"]).read_text())
            ok = ok and report.get("exit_code") == night.code
        elif night.code != 74:  # only a full disk may leave no report
            ok = False
        if record.get("killed_runs"):
            self.killed_spend += sum(k["spent_usd"] for k in record["killed_runs"])
        if not ok:
            night.notes.append(f"record disagrees: {record['status']} {last.get('status')}")
        return ok

    def state_files(self) -> dict[str, bytes]:
        files = [
            p
            for p in self.out.rglob("*")
            if p.is_file() and "log" not in p.relative_to(self.out).parts
        ]
        files.append(self.root / "arena.prom")
        return {str(p): p.read_bytes() for p in files if p.name != ".arena.lock.json"}

    # ---- the nights

    def edit(self, change: Callable[[dict[str, Any]], None]) -> None:
        change(self.config)
        self._write()

    def fill_disk(self) -> Callable[[], None]:
        """Leave about 8 KiB free on DIR's file system; the undo."""
        filler = self.out.parent / "filler"
        if self.tmpfs is None:
            return lambda: None
        stat = os.statvfs(self.tmpfs)
        free = stat.f_bavail * stat.f_frsize
        with open(filler, "wb") as f:
            f.write(b"\0" * max(0, free - 8192))
        return lambda: filler.unlink()

    def run_all(self) -> None:
        add_question = self._add_question
        self.night("first night", 0)
        if not self.smoke:
            self.edit(
                lambda c: (
                    c["models"].update(m2={"provider": "sim", "sim": {"skill": 1.5}}),
                    c["contestants"].append("m2"),
                )
            )
            self.night("model added", 0)
            add_question()
            self.night("question added", 0)
            self.edit(lambda c: c["prices"]["m0"].update(input=6.0))
            self.night("price changed (no call changes)", 0)
        # An outage of the fake server's provider: 503 and 429 on every other request.
        add_question()
        self.edit(lambda c: c["providers"]["fake"].update(base_url=self.outage.url + "/v1"))
        self.night("provider outage (503, 429)", 3)
        self.edit(lambda c: c["providers"]["fake"].update(base_url=self.normal.url + "/v1"))
        self.night("outage over: failed calls made again", 0)
        if not self.smoke:
            add_question()
            self.night("budget reached", 4, "--budget", "0.0005")
            self.night("after the budget stop", 0)
        add_question()
        self.night("kill -9", -signal.SIGKILL, signal_after=(6, signal.SIGKILL))
        self.night("after kill -9 (records the killed run)", 0)
        if not self.smoke:
            add_question()
            self.night("SIGTERM", 143, signal_after=(6, signal.SIGTERM))
            self.night("after SIGTERM", 0)
        before = self.state_files()
        lock = RunLock(self.out)
        lock.acquire()
        try:
            locked = self.night("another run holds the lock", 75)
        finally:
            lock.release()
        if self.state_files() != before:
            locked.valid = False
            locked.notes.append("a locked night changed the directory")
        self._full_disk()
        if not self.smoke:
            self.edit(lambda c: c["contestants"].remove("m1"))
            self.night("model retired", 0)
            self._gc()
            self.night("after gc", 0)
            good = self.yaml.read_text()
            self.yaml.write_text(good.replace("contestants:", "contestant:"))
            self.night("typo in the YAML", 2)
            self.yaml.write_text(good)
            self.night("typo fixed", 0)
            rollback = self.config["contestants"]
            self.edit(lambda c: c.update(contestants=[*rollback, "m1"]))
            self.night("rollback: m1 back (its calls from the archive)", 0)
            self._slow_night()
            for n in range(3):
                self.night(f"quiet night {n + 1}", 0)
            self.night("tagged night", 0, "--tag", "release")
        else:
            good = self.yaml.read_text()
            self.yaml.write_text(good.replace("contestants:", "contestant:"))
            self.night("typo in the YAML", 2)
            self.yaml.write_text(good)

    def _add_question(self) -> None:
        self.questions += 1
        self._questions(self.questions)

    def _full_disk(self) -> None:
        self._add_question()
        if self.tmpfs is not None:
            undo = self.fill_disk()
            try:
                night = self.night("full disk (tmpfs, about 8 KiB free)", 74)
            finally:
                undo()
        else:  # no file system of our own: the plan file's write fails with ENOSPC
            night = self._simulated_full_disk()
        night.notes.append("tmpfs" if self.tmpfs is not None else "simulated ENOSPC")
        self.night("disk freed", 0)

    def _simulated_full_disk(self) -> Night:
        shim = self.root / "enospc.py"
        shim.write_text(
            "import errno, os, runpy, sys\n"
            "import arena.engine as engine\n"
            "def full(*a, **k):\n"
            "    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))\n"
            "engine.start_run = full\n"
            "sys.argv = ['arena', *sys.argv[1:]]\n"
            "runpy.run_module('arena', run_name='__main__')\n"
        )
        night = Night("full disk (simulated ENOSPC)", 74)
        done = subprocess.run(
            [sys.executable, str(shim), "run", str(self.yaml), "--json"],
            cwd=self.root,
            env=self.env,
            text=True,
            capture_output=True,
            check=False,
        )
        night.code = done.returncode
        lines = done.stdout.strip().splitlines()
        night.line = json.loads(lines[-1]) if lines else None
        night.valid = len(lines) == 1 and self._check(night)
        self.nights.append(night)
        return night

    def _gc(self) -> None:
        spent = RunLog(self.out).spent_usd()
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "arena",
                "gc",
                str(self.out),
                "--keep-reports",
                "30",
                "--keep-history",
                "20",
                "--keep-archive",
                "1",
            ],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        self.gc_ok = done.returncode == 0 and abs(RunLog(self.out).spent_usd() - spent) < 1e-9
        if not self.gc_ok:
            print(done.stderr[-800:], file=sys.stderr)

    def _slow_night(self) -> None:
        self._add_question()
        self.edit(
            lambda c: (
                c["alerts"].update(after_seconds=0.5),
                c["models"]["m0"]["sim"].update(latency_mean=0.3),
                c["providers"]["sim"]["limits"].update(max_concurrency=2),
            )
        )
        night = self.night("longer than alerts.after_seconds", 0)
        night.overdue_alert = True
        self.edit(
            lambda c: (
                c["alerts"].pop("after_seconds"),
                c["models"]["m0"]["sim"].pop("latency_mean"),
                c["providers"]["sim"]["limits"].update(max_concurrency=8),
            )
        )

    # ---- the figures

    def figures(self) -> dict[str, Any]:
        expected: list[tuple[str, str]] = []
        for night in self.nights:
            record = (night.line or {}).get("record") or {}
            if record.get("alert"):
                expected.append((record["run_id"], record["alert"]["reason"]))
            if night.overdue_alert:
                expected.append((record.get("run_id", ""), "after_seconds"))
        time.sleep(0.5)  # the last webhook handler thread
        commands = (
            [json.loads(x) for x in self.alert_file.read_text().splitlines()]
            if self.alert_file.exists()
            else []
        )

        def got(bodies: list[dict[str, Any]], run_id: str, reason: str) -> bool:
            return any(
                b.get("run_id") == run_id
                and (
                    (b.get("alert") or {}).get("reason") == reason
                    or (reason == "after_seconds" and b.get("exit_code") is None)
                )
                for b in bodies
            )

        delivered = sum(
            got(self.inbox.bodies, r, why) and got(commands, r, why) for r, why in expected
        )
        log = RunLog(self.out)
        paid_twice = 0
        for table in ("answers", "reviews"):
            rows = log.read_all(table, ["status"])
            done = rows.filter(rows["status"].is_in(["ok", "invalid"]))
            paid_twice += done.height - done["id"].n_unique()
        nightly = sum(float((n.line or {}).get("spent_usd") or 0.0) for n in self.nights)
        total = log.spent_usd()
        spend_lost = total - nightly - self.killed_spend
        as_documented = sum(n.code == n.expected for n in self.nights)
        return {
            "nights": len(self.nights),
            "exit_codes_as_documented": as_documented,
            "records_valid": sum(n.valid for n in self.nights),
            "alerts_expected": len(expected),
            "alerts_delivered": delivered,
            "paid_twice": paid_twice,
            "spend_lost": round(abs(spend_lost), 9),
            "spent_total_usd": round(total, 6),
            "killed_runs_spent_usd": round(self.killed_spend, 6),
            "spend_same_after_gc": getattr(self, "gc_ok", None),
            "full_disk": "tmpfs" if self.tmpfs is not None else "simulated ENOSPC",
            "by_night": [
                {"night": n.name, "expected": n.expected, "exit": n.code, "valid": n.valid}
                | ({"notes": n.notes} if not n.valid or n.code != n.expected else {})
                for n in self.nights
            ],
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="9 nights (CI)")
    parser.add_argument(
        "--simulate-full-disk",
        action="store_true",
        help="simulate ENOSPC instead of mounting a small tmpfs",
    )
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-nights-"))
    bench = Bench(root, args.smoke, args.simulate_full_disk)
    try:
        bench.run_all()
        figures = bench.figures()
        print(json.dumps(figures, indent=1))
    finally:
        bench.close()
        shutil.rmtree(root, ignore_errors=True)
    nights = figures["nights"]
    ok = figures["exit_codes_as_documented"] == figures["records_valid"] == nights
    ok = ok and figures["alerts_delivered"] == figures["alerts_expected"]
    ok = ok and figures["paid_twice"] == 0 and figures["spend_lost"] < 1e-9
    sys.exit(0 if ok else 1)  # CI (make bench-smoke) sees a night that went wrong


if __name__ == "__main__":
    main()
