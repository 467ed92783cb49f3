"""`arena check FILE`: every problem before 02:15, without a paid call; `--ping` against
`arena fake-server` (in process) with its cost first."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.config import DEFAULT_REVIEW_TEMPLATE
from arena.fakeserver import FakeServer, FakeServerConfig
from tests.conftest import small_tournament
from tests.rundir._support import edit_yaml

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)

KEY_ENV = "ARENA_TEST_CHECK_KEY"
KEY = "key-check-4321"


def _check(*args: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(main, ["check", *args, "--json"])
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    config = {"seed": 1, "keys": [KEY], "models": {"alpha": {"skill": 1.0, "answer_words": 5}}}
    with FakeServer(FakeServerConfig.model_validate(config)) as s:
        yield s


def test_a_good_config_passes_and_nothing_is_written(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    code, data = _check(str(yaml_path))
    assert code == 0 and data["ok"] and data["problems"] == []
    assert data["plan"] == {"answers": 6, "reviews": 36}
    assert not (tmp_path / "out").exists()  # no run directory, no call
    text = CliRunner().invoke(main, ["check", str(yaml_path)])
    assert text.exit_code == 0 and "ok (6 answers and 36 reviews planned)" in text.output


def test_every_unknown_key_is_named_with_a_suggestion(tmp_path: Path) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)

    def typos(data: dict[str, Any]) -> None:
        data["contestans"] = data.pop("contestants")
        data["retry"]["max_attemps"] = 2
        data["models"]["m1"]["temprature"] = 0.3
        data["alerts"] = {"webhok": "http://127.0.0.1:1/x"}
        data["zzz"] = 1

    edit_yaml(yaml_path, typos)
    code, data = _check(str(yaml_path))
    assert code == 2 and not data["ok"]
    text = "\n".join(data["problems"])
    assert "contestans: unknown key (did you mean 'contestants'?)" in text
    assert "retry.max_attemps: unknown key (did you mean 'max_attempts'?)" in text
    assert "models.m1.temprature: unknown key (did you mean 'temperature'?)" in text
    assert "alerts.webhok: unknown key (did you mean 'webhook'?)" in text
    assert "zzz: unknown key" in text and all(str(yaml_path) in p for p in data["problems"])


def test_missing_files_placeholders_and_keys_are_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_path = small_tournament(tmp_path, models=3, questions=2)
    (tmp_path / "q.jsonl").unlink()
    code, data = _check(str(yaml_path))
    assert code == 2 and "questions file not found" in data["problems"][0]

    small_tournament(tmp_path, models=3, questions=2)
    template = tmp_path / "review.txt"
    template.write_text(DEFAULT_REVIEW_TEMPLATE.read_text() + "\nSee {refrence}.\n")
    edit_yaml(yaml_path, lambda d: d.update(review={"template": "review.txt"}))
    code, data = _check(str(yaml_path))
    assert code == 2 and "placeholder {refrence} is not filled in" in data["problems"][0]
    template.write_text(DEFAULT_REVIEW_TEMPLATE.read_text().replace("{answer_b}", ""))
    code, data = _check(str(yaml_path))
    assert code == 2 and "lacks the placeholder {answer_b}" in data["problems"][0]
    edit_yaml(yaml_path, lambda d: d.pop("review"))

    monkeypatch.delenv(KEY_ENV, raising=False)

    def real(data: dict[str, Any]) -> None:
        data["providers"]["remote"] = {
            "type": "openai",
            "base_url": "http://127.0.0.1:9/v1",
            "api_key_env": KEY_ENV,
        }
        data["models"]["m2"] = {"provider": "remote", "model": "alpha"}

    edit_yaml(yaml_path, real)
    code, data = _check(str(yaml_path))
    assert code == 2 and any(KEY_ENV in p for p in data["problems"])


def test_ping_shows_its_cost_first_then_one_call_per_model(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    yaml_path = small_tournament(tmp_path, models=3, questions=2)

    def remote(data: dict[str, Any]) -> None:
        data["providers"]["fake"] = {
            "type": "openai",
            "base_url": server.url + "/v1",
            "api_key_env": KEY_ENV,
            "timeout": 5,
        }
        data["models"]["m2"] = {"provider": "fake", "model": "alpha"}
        data["prices"] = {"alpha": {"input": 1.0, "output": 2.0}}

    edit_yaml(yaml_path, remote)
    result = CliRunner().invoke(main, ["check", str(yaml_path), "--ping"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    assert lines[0].startswith("ping: 3 call(s), at most $")  # the cost comes first
    assert any(line.startswith("ping m2 (fake, alpha): ok") for line in lines[1:])
    code, data = _check(str(yaml_path), "--ping")
    assert code == 0 and data["ping"]["max_cost_usd"] > 0
    assert data["ping"]["calls"] == 3 and all(r["ok"] for r in data["ping"]["results"])
    assert 0 < data["ping"]["cost_usd"] <= data["ping"]["max_cost_usd"]
    edit_yaml(yaml_path, lambda d: d["models"]["m2"].update(model="no-such-model"))
    code, data = _check(str(yaml_path), "--ping")
    results = {r["model"]: r for r in data["ping"]["results"]}
    assert code == 3 and not results["m2"]["ok"] and results["m0"]["ok"]
    assert KEY not in json.dumps(data)  # the key never shows
