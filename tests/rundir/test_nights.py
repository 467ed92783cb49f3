"""Night after night through the CLI: each night's record, report file and diff text."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from arena.config import DEFAULT_REVIEW_TEMPLATE
from arena.rundir import read_history, recorded_config, snapshot_ids
from arena.store import RunLock
from tests.conftest import small_tournament
from tests.rundir._support import board_cli, cli, edit_yaml

RECORD_KEYS = {"run_id", "command", "started_at", "ended_at", "pid", "exit_code", "report"}


def _night(yaml_path: Path, *extra: str, command: str = "run") -> dict[str, Any]:
    """One night: the JSON line (checked against the exit code) and its report files."""
    args = [command, str(yaml_path), "--json", *extra]
    result = cli(*args)
    line: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert line["exit_code"] == result.exit_code
    assert RECORD_KEYS <= set(line), line
    assert line["pid"] == os.getpid() and line["started_at"] <= line["ended_at"]
    if line["exit_code"] == 75:  # refused by the lock: a line, and nothing in DIR
        assert line["report"] is None and line["record"]["status"] == "locked"
        return line
    report_path = Path(line["report"])
    report = json.loads(report_path.read_text())
    assert report["run"]["run_id"] == line["run_id"] and report["exit_code"] == line["exit_code"]
    markdown = report_path.with_suffix(".md").read_text()
    assert f"exit {line['exit_code']}" in markdown.splitlines()[0]
    line["_report"] = report
    line["_markdown"] = markdown
    return line


def _diff(out: Path, *spec: str) -> dict[str, Any]:
    result = board_cli(str(out), "--diff", *spec, "--format", "json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def _snapshots(out: Path) -> int:
    return len(snapshot_ids(read_history(out)))


def _questions(folder: Path, texts: dict[str, str]) -> None:
    lines = [json.dumps({"id": qid, "text": text}) for qid, text in texts.items()]
    (folder / "q.jsonl").write_text("\n".join(lines) + "\n")


def test_thirteen_nights_record_report_and_explain_every_change(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    out = tmp_path / "out"
    questions = {"q0": "Question number 0?", "q1": "Question number 1?"}

    # Night 1: everything is new; one snapshot, the report has the leaderboard.
    n1 = _night(yaml_path, "--tag", "baseline")
    assert n1["exit_code"] == 0 and n1["new"] == 42
    assert n1["_report"]["snapshot_added"] and n1["_report"]["diff"] is None
    assert [m["model"] for m in n1["_report"]["leaderboard"]["models"]] == ["m0", "m1", "m2"]
    assert "## Leaderboard" in n1["_markdown"]

    # Night 2: nothing changed: no calls, no snapshot; the report shows the last one.
    n2 = _night(yaml_path)
    assert n2["skipped"] == 42 and n2["completed"] == 0
    assert not n2["_report"]["snapshot_added"] and _snapshots(out) == 1

    # Night 3: q1 edited, q2 and q3 added.
    _questions(tmp_path, {**questions, "q1": "Question one, reworded?", "q2": "Two?", "q3": "3?"})
    n3 = _night(yaml_path)
    assert n3["stale"] == 3 + 18 and n3["new"] == 2 * 21
    diff = _diff(out)
    assert diff["changes"] == [
        "question q1 edited, questions q2 and q3 added",
        "re-run as stale: 3 answers, 18 reviews",
    ]
    assert "question q1 edited, questions q2 and q3 added" in n3["_markdown"]

    # Night 4: a new model version behind m1.
    edit_yaml(yaml_path, lambda d: d["models"]["m1"].update(model="m1-v2"))
    n4 = _night(yaml_path)
    assert n4["stale"] == 4 + 4 * 4 * 3 + 4 * 2 * 1  # answers; battles it plays; reviews by it
    assert _diff(out)["changes"][0] == "m1: model id m1 -> m1-v2"

    # Night 5: the review template changed: every review is made again.
    template = tmp_path / "review.txt"
    template.write_text("Judge carefully.\n" + DEFAULT_REVIEW_TEMPLATE.read_text())
    edit_yaml(yaml_path, lambda d: d.update(review={"template": "review.txt"}))
    n5 = _night(yaml_path)
    assert n5["stale"] == 4 * 6 * 3 == 72
    assert _diff(out)["changes"] == ["review template changed: 72 reviews re-run"]
    assert "review template changed: 72 reviews re-run" in n5["_report"]["diff"]["changes"]

    # Night 6: a typo in the YAML: exit 2, still a JSON line and a report.
    good = yaml_path.read_text()
    yaml_path.write_text(good.replace("contestants:", "contestant:"))
    n6 = _night(yaml_path)
    assert n6["exit_code"] == 2 and "contestants" in n6["error"]
    assert n6["_report"]["exit_meaning"].startswith("bad input")
    assert "contestants" in n6["_markdown"]
    yaml_path.write_text(good)

    # Night 7: the previous night is still running: exit 75, a line and no change in DIR.
    lock = RunLock(out)
    lock.acquire()
    try:
        n7 = _night(yaml_path)
    finally:
        lock.release()
    assert n7["exit_code"] == 75 and "another arena run" in n7["error"]

    # Night 8: m2 leaves; night 9: it comes back, shown as returning; no calls for it.
    with_m2 = yaml_path.read_text()
    edit_yaml(yaml_path, lambda d: d.update(contestants=["m0", "m1"]))
    _night(yaml_path)
    assert {m["model"]: m["status"] for m in _diff(out)["models"]}["m2"] == "dropped"
    yaml_path.write_text(with_m2)
    n9 = _night(yaml_path)
    assert n9["new"] == n9["stale"] == 0
    back = _diff(out)
    assert {m["model"]: m["status"] for m in back["models"]}["m2"] == "returning"
    assert back["changes"] == ["contestants added: m2", "reviewers added: m2"]
    text = board_cli(str(out), "--diff").stdout
    assert "returning" in text and "contestants added: m2" in text

    # Night 10: `revision:` forces new answers of m0 (and the reviews of its battles).
    edit_yaml(yaml_path, lambda d: d["models"]["m0"].update(revision="2026-06"))
    n10 = _night(yaml_path)
    assert n10["stale"] == 4 + 4 * 4 * 3 + 4 * 2 * 1
    assert _diff(out)["changes"][0] == "m0: revision unset -> 2026-06"

    # Night 11: base_url, the retry policy, sim latency and failure rate: nothing re-runs,
    # the tournament did not change (no snapshot).
    snapshots = _snapshots(out)

    def operational(d: dict[str, Any]) -> None:
        d["providers"]["sim"]["base_url"] = "http://127.0.0.1:9/v1"
        d["retry"]["max_attempts"] = 9
        d["models"]["m1"]["sim"].update(latency_sd=0.0001, failure_rate=0.01)

    edit_yaml(yaml_path, operational)
    n11 = _night(yaml_path)
    assert n11["new"] == n11["stale"] == 0 and n11["skipped"] == n11["planned"]
    assert _snapshots(out) == snapshots

    # Any two nights: by number, date and tag; the tag is night 1.
    first_to_last = _diff(out, "baseline..")
    assert first_to_last["before"]["number"] == 1 and first_to_last["before"]["tag"] == "baseline"
    assert first_to_last["after"]["number"] == snapshots
    assert _diff(out, f"1..{snapshots}")["models"] == first_to_last["models"]
    today = time.strftime("%Y-%m-%d")
    assert _diff(out, f"1..{today}")["after"]["number"] == snapshots
    assert _diff(out, "1..2")["changes"] == [
        "question q1 edited, questions q2 and q3 added",
        "re-run as stale: 3 answers, 18 reviews",
    ]
    bad = board_cli(str(out), "--diff", "nosuchtag..")
    assert bad.exit_code == 2 and "baseline" in bad.output  # the tags there are

    # Piped, nothing is cut to a terminal's width.
    history = board_cli(str(out), "--history").stdout
    assert "question q1 edited, questions q2 and q3 added" in history and "…" not in history

    # Every night left its own report file.
    reports = [json.loads(p.read_text()) for p in (out / "reports").glob("*.json")]
    codes = Counter(r["exit_code"] for r in reports)
    assert codes == Counter({0: 9, 2: 1})  # the locked night wrote nothing


def test_a_model_made_much_worse_falls_significantly(tmp_path: Path) -> None:
    """A model made much worse falls for real, and so the others rise for real."""
    yaml_path = small_tournament(tmp_path, models=3, questions=6)
    out = tmp_path / "out"
    edit_yaml(yaml_path, lambda d: d["models"]["m2"]["sim"].update(skill=0.0))
    cli("run", str(yaml_path), "--json")
    edit_yaml(yaml_path, lambda d: d["models"]["m0"]["sim"].update(skill=-8.0))
    cli("run", str(yaml_path), "--json")
    moves = {m["model"]: m for m in _diff(out)["models"]}
    assert moves["m0"]["rank_move"] == -2
    assert moves["m0"]["rank_significant"] is True and moves["m0"]["bt_change"] < -500
    # An interval open on one side (a model that lost every battle) cannot say; else sure.
    assert moves["m0"]["rating_significant"] is not False
    # m1 and m2 moved up one place only because m0 fell below them.
    assert moves["m1"]["rank_move"] == 1 and moves["m1"]["rank_significant"] is True


def test_retry_failed_keeps_the_recorded_yaml_and_is_no_config_change(tmp_path: Path) -> None:
    flaky = {"retry": {"max_attempts": 1, "backoff_base": 0.0, "backoff_max": 0.0}}
    yaml_path = small_tournament(
        tmp_path, models=3, questions=2, sim={"failure_rate": 0.3}, extra=flaky
    )
    out = tmp_path / "out"
    first = _night(yaml_path)
    assert first["exit_code"] == 3 and first["failed"] > 0
    failures = first["_report"]["failures"]
    assert sum(f["count"] for f in failures) == first["failed"]
    assert {(f["provider"], f["reason"]) for f in failures} == {("sim", "transient (HTTP 503)")}
    assert {f["table"] for f in failures} <= {"answers", "reviews"}
    assert "## Failures by reason" in first["_markdown"]
    # Another YAML with a different retry policy and no failures: same tournament.
    other = tmp_path / "retry.yaml"
    data = yaml.safe_load(yaml_path.read_text())
    data["retry"]["max_attempts"] = 20
    for model in data["models"].values():
        model["sim"]["failure_rate"] = 0.0
    other.write_text(yaml.safe_dump(data, sort_keys=False))
    result = cli("retry-failed", str(out), "--config", str(other), "--json")
    line = json.loads(result.stdout.strip().splitlines()[-1])
    assert line["exit_code"] == result.exit_code == 0 and line["run_id"] and line["report"]
    assert recorded_config(out) == yaml_path.resolve()
    history = read_history(out)
    assert history["config_hash"].n_unique() == 1


def test_gc_merges_parts_archives_or_drops_stale_rows_and_keeps_history(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    out = tmp_path / "out"
    cli("run", str(yaml_path))
    edit_yaml(yaml_path, lambda d: d["models"]["m0"]["sim"].update(skill=0.5))
    cli("run", str(yaml_path))
    before = board_cli(str(out), "--format", "json").stdout
    history = read_history(out).height
    result = cli("gc", str(out), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    tables = {t["table"]: t for t in data["tables"]}
    # m0's answers; the battles it plays (4 ordered pairs x 3 reviewers) and its reviews
    # of the battle it does not play (2 orders), per question.
    assert tables["answers"]["rows_stale"] == 2 and tables["reviews"]["rows_stale"] == 2 * 14
    assert all(t["parts_after"] == 1 for t in tables.values())
    assert tables["history"]["rows_stale"] == 0 and read_history(out).height == history
    for table in ("answers", "reviews"):
        assert len(list((out / "log" / table).glob("*.parquet"))) == 1
        assert len(list((out / "archive" / table).glob("*.parquet"))) == 1
    status = json.loads(cli("status", str(out), "--json").stdout)
    assert status["outside_plan"]["reviews"]["stale"] == 0 and status["total"]["done"] == 42
    assert board_cli(str(out), "--format", "json").stdout == before
    again = json.loads(cli("gc", str(out), "--drop", "--json").stdout)
    assert again["total"]["rows_stale"] == 0 and again["stale_rows"] == "dropped"
    lock = RunLock(out)
    lock.acquire()
    try:
        assert cli("gc", str(out)).exit_code == 75
    finally:
        lock.release()
    assert cli("gc", str(tmp_path / "nothing")).exit_code == 2


def test_example_systemd_units_verify(tmp_path: Path) -> None:
    """`systemd-analyze verify` accepts the example units, OnFailure= in [Unit] included."""
    repo = Path(__file__).resolve().parents[2]
    units = repo / "scripts" / "systemd"
    service = (units / "arena-nightly.service").read_text()
    section = service.split("\n[Service]\n")[0]
    assert "OnFailure=arena-nightly-failure@%n.service" in section
    assert (units / "arena-nightly-failure@.service").is_file()
    analyze = subprocess.run(["which", "systemd-analyze"], capture_output=True, text=True)
    if analyze.returncode != 0:
        pytest.skip("systemd-analyze is not installed: the example units were not verified")
    root = tmp_path / "opt"
    (root / "scripts").mkdir(parents=True)
    (root / "scripts" / "arena-nightly.sh").symlink_to(repo / "scripts" / "arena-nightly.sh")
    for unit in units.iterdir():
        (tmp_path / unit.name).write_text(unit.read_text().replace("/opt/arena", str(root)))
    names = sorted(u.name for u in units.iterdir())
    done = subprocess.run(
        ["systemd-analyze", "verify", "--man=no", *names],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stderr.strip() == "" and done.stdout.strip() == "", (
        done.stderr
    )


def test_the_yaml_commit_is_part_of_the_snapshot(tmp_path: Path) -> None:
    if subprocess.run(["git", "--version"], capture_output=True).returncode != 0:
        pytest.skip("git is not installed")
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    out = tmp_path / "out"

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@e", *args],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    git("init", "-q")
    git("add", "t.yaml", "q.jsonl")
    git("commit", "-qm", "night 1")
    first = git("rev-parse", "HEAD")
    cli("run", str(yaml_path))
    edit_yaml(yaml_path, lambda d: d["models"]["m2"].update(temperature=0.2))
    git("commit", "-qam", "m2 cooler")
    second = git("rev-parse", "HEAD")
    cli("run", str(yaml_path))
    history = board_cli(str(out), "--history", "--format", "json")
    contexts = [
        json.loads(h)
        for h in read_history(out).unique("snapshot", keep="first").sort("at")["context"]
    ]
    assert [c["git"] for c in contexts] == [
        {"commit": first, "dirty": False},
        {"commit": second, "dirty": False},
    ]
    assert history.exit_code == 0
    assert _diff(out)["changes"] == [
        "m2: temperature 0.7 -> 0.2",
        f"re-run as stale: 2 answers, {2 * (4 * 3 + 2)} reviews",
        f"YAML commit {first[:10]} -> {second[:10]}",
    ]


def test_the_snapshot_keeps_the_leaderboards_rank_intervals(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    out = tmp_path / "out"
    cli("run", str(yaml_path))
    board = json.loads(board_cli(str(out), "--format", "json").stdout)
    stored = {r["model"]: r for r in read_history(out).iter_rows(named=True)}
    for entry in board["models"]:
        row = stored[entry["model"]]
        assert (row["rank_low"], row["rank_high"]) == (
            entry.get("rank_low"),
            entry.get("rank_high"),
        )
        assert row["bt"] == pytest.approx(entry["bt"])
