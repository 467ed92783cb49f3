"""The operator's five nights: a contestant behind `arena fake-server` is down one night
and back the next; every night leaves a valid JSON record; gc keeps the spend."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.fakeserver import FakeServer, FakeServerConfig
from tests.conftest import small_tournament
from tests.rundir._support import cli, edit_yaml, priced, validate_record

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)

KEY_ENV = "ARENA_TEST_FAKE_KEY"
KEY = "key-five-nights-0123"
SERVER = {"seed": 4, "keys": [KEY], "models": {"delta": {"skill": 1.5, "answer_words": 20}}}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _night(yaml_path: Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["run", str(yaml_path), "--json"])
    line: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert line["exit_code"] == result.exit_code, result.output
    record = validate_record(line["record"])
    out = Path(line["output"])
    assert validate_record(json.loads((out / "last_run.json").read_text())) == record
    report = json.loads(Path(line["report"]).read_text())
    assert validate_record(report["record"]) == record
    return line


def test_five_nights_exit_0_3_0_0_0_and_gc_keeps_the_spend(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    port = _free_port()  # the fake server's port: nothing listens there on night 2
    yaml_path = small_tournament(
        tmp_path,
        models=3,
        questions=2,
        extra={
            "retry": {"max_attempts": 2, "backoff_base": 0.001, "backoff_max": 0.01},
            "prices": {**priced()["prices"], "delta": {"input": 100.0, "output": 100.0}},
        },
    )
    out = tmp_path / "out"
    nights = [_night(yaml_path)]

    def add_delta(data: dict[str, Any]) -> None:
        data["providers"]["fake"] = {
            "type": "openai",
            "base_url": f"http://127.0.0.1:{port}/v1",
            "api_key_env": KEY_ENV,
            "timeout": 5,
        }
        data["models"]["delta"] = {"provider": "fake", "max_tokens": 200}
        data["contestants"].append("delta")

    edit_yaml(yaml_path, add_delta)
    nights.append(_night(yaml_path))  # the server is down
    down = nights[-1]
    assert down["failed"] > 0 and down["record"]["calls"]["open"] > 0
    failures = json.loads(Path(down["report"]).read_text())["failures"]
    assert {f["provider"] for f in failures} == {"fake"}
    with FakeServer(FakeServerConfig.model_validate(SERVER), port=port) as server:
        nights.append(_night(yaml_path))  # the server is up: its calls run
        assert server.stats()  # it was called
        nights.append(_night(yaml_path))  # unchanged
        texts = (tmp_path / "q.jsonl").read_text().replace("Question number 1?", "Q1, reworded?")
        (tmp_path / "q.jsonl").write_text(texts)
        nights.append(_night(yaml_path))
    assert [n["exit_code"] for n in nights] == [0, 3, 0, 0, 0]
    assert nights[2]["completed"] > 0 and nights[3]["completed"] == 0
    assert nights[4]["stale"] == 4 + 4 * 3 * 4  # q1's answers and all-pairs reviews
    report = json.loads(Path(nights[4]["report"]).read_text())
    assert report["diff"]["changes"][0] == "question q1 edited"
    moves = {
        m["model"]: m["status"]
        for m in json.loads(Path(nights[2]["report"]).read_text())["diff"]["models"]
    }
    assert moves["delta"] == "new"
    assert [n["record"]["status"] for n in nights] == [
        "complete",
        "partial",
        "complete",
        "complete",
        "complete",
    ]

    before = json.loads(cli("status", str(out), "--json").stdout)["total"]["spent_usd"]
    assert before > 0
    assert before == pytest.approx(sum(n["spent_usd"] for n in nights))
    gc = json.loads(cli("gc", str(out), "--json").stdout)
    assert gc["total"]["rows_stale"] > 0
    after = json.loads(cli("status", str(out), "--json").stdout)["total"]["spent_usd"]
    assert after == pytest.approx(before)
