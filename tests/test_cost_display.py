"""Cache and reasoning tokens in `arena status`, `arena report` and batch prices in `arena plan`."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from arena.store import RunLog, token_totals, usage_columns
from arena.types import Usage
from tests.conftest import small_tournament

PRICES = {
    "m0": {"input": 1.0, "output": 10.0, "batch": {"input": 0.5, "output": 5.0}},
    "m1": {"input": 1.0, "output": 10.0, "cache_read": 0.1},
}


def _log_cached_call(out: Path) -> None:
    row = {
        "id": "a-cached",
        "status": "ok",
        "provider": "sim",
        "cost_usd": 0.001,
        "question_id": "q0",
        "model": "m1",
        "answer_turns": ["text"],
        "run_id": "r",
        "started_at": 1.0,
        "finished_at": 2.0,
        **usage_columns([Usage(1000, 50, cache_read_tokens=800, reasoning_tokens=20)]),
    }

    async def write() -> None:
        async with RunLog(out).writer() as w:
            await w.write("answers", row)

    asyncio.run(write())


def test_status_and_report_show_cache_and_reasoning_tokens(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=2, questions=2, extra={"prices": PRICES})
    assert CliRunner().invoke(main, ["run", str(path)]).exit_code == 0
    out = tmp_path / "out"
    before = token_totals(RunLog(out))
    # The simulator reports no cache or reasoning tokens.
    assert before["tokens_cache_read"] is None and before["tokens_reasoning"] is None
    status = CliRunner().invoke(main, ["status", str(out)])
    assert "(cache read" not in status.output and "tokens: in " in status.output
    _log_cached_call(out)
    data = json.loads(CliRunner().invoke(main, ["status", str(out), "--json"]).stdout)
    assert data["tokens"]["tokens_cache_read"] == 800
    assert data["tokens"]["tokens_reasoning"] == 20
    assert data["tokens"]["tokens_in"] == before["tokens_in"] + 1000
    text = CliRunner().invoke(main, ["status", str(out)]).output
    assert "(cache read 800)" in text and "(reasoning 20)" in text
    report = tmp_path / "r.html"
    result = CliRunner().invoke(main, ["report", str(out), "-o", str(report)])
    assert result.exit_code == 0, result.output
    page = report.read_text()
    assert "of which cache read" in page and ">800</td>" in page


def test_plan_gives_the_expected_cost_at_batch_prices(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=2, questions=2, extra={"prices": PRICES})
    result = CliRunner().invoke(main, ["plan", str(path), "--json"])
    assert result.exit_code == 0, result.output
    plan = json.loads(result.stdout)
    rows = {r["model"]: r for r in plan["rows"]}
    assert rows["m0"]["exp_batch_cost_usd"] < rows["m0"]["exp_cost_usd"]
    assert rows["m1"]["exp_batch_cost_usd"] == rows["m1"]["exp_cost_usd"]  # no batch price
    assert plan["total"]["exp_batch_cost_usd"] < plan["total"]["exp_cost_usd"]
    text = CliRunner().invoke(main, ["plan", str(path)]).output
    assert "at batch API prices" in text
