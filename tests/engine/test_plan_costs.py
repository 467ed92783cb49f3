"""`arena plan`: worst case and expected cost; models without a price are warned about."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from arena.cli import main
from tests.conftest import small_tournament

PRICES = {"m0": {"input": 1.0, "output": 10.0}, "m1": {"input": 1.0, "output": 10.0}}


def _plan(path: Path, *extra: str) -> tuple[dict[str, Any], str]:
    result = CliRunner().invoke(main, ["plan", str(path), "--json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def test_expected_cost_is_below_the_worst_case_and_learns_from_the_log(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=2, questions=4, extra={"prices": PRICES})
    fresh, _ = _plan(path)
    total = fresh["total"]
    assert 0 < total["exp_cost_usd"] < total["est_cost_usd"]
    assert fresh["unpriced"] == [] and fresh["from_file"] == []
    assert CliRunner().invoke(main, ["run", str(path)]).exit_code == 0
    # Two more questions: their calls are expected to write what the logged ones wrote
    # (sim answers of ~60 words), far less than half of max_tokens.
    qfile = tmp_path / "q.jsonl"
    qfile.write_text(
        qfile.read_text()
        + "".join(
            json.dumps({"id": f"n{i}", "text": f"New question {i}?"}) + "\n" for i in range(2)
        )
    )
    after, _ = _plan(path)
    assert after["total"]["pending"] == 2 * 2 + 2 * 2 * 2  # 4 answers, 8 reviews
    per_call_fresh = total["exp_cost_usd"] / total["calls"]
    per_call_after = after["total"]["exp_cost_usd"] / after["total"]["pending"]
    assert per_call_after < per_call_fresh / 2
    assert after["total"]["exp_cost_usd"] < after["total"]["est_cost_usd"]


def test_unpriced_models_are_warned_about(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=2)
    data = yaml.safe_load(path.read_text())
    data["providers"]["local"] = {"type": "openai", "base_url": "http://127.0.0.1:9/v1"}
    data["models"]["llama"] = {"provider": "local", "model": "llama3.1"}
    data["contestants"] = ["m0", "m1", "llama"]
    path.write_text(yaml.safe_dump(data))
    plan, stderr = _plan(path)
    assert plan["unpriced"] == ["llama"]
    assert "warning: no price for llama" in stderr
    row = next(r for r in plan["rows"] if r["model"] == "llama")
    assert row["est_cost_usd"] is None and row["exp_cost_usd"] is None
    text = CliRunner().invoke(main, ["plan", str(path)])
    assert "exp_cost_usd" in text.stdout and "no price for: llama" in text.stdout


def test_counts_per_model_follow_each_call_state(tmp_path: Path) -> None:
    """On a log with failed, stale and missing calls, each model's row counts its calls by
    their state as the plan and the log say (done, failed, stale, new), a review at a time."""
    from arena.config import load_tournament
    from arena.pipeline import build_plan, load_done
    from arena.rundir import call_states
    from arena.store import RunLog

    path = small_tournament(tmp_path, models=3, questions=5, sim={"failure_rate": 0.3})
    runner = CliRunner()
    runner.invoke(main, ["run", str(path)])
    data = yaml.safe_load(path.read_text())
    data["models"]["m2"]["max_tokens"] = 77  # m2's answers and reviews go stale
    data["contestants"].append("m3")  # and a new contestant's calls are new
    data["models"]["m3"] = {"provider": "sim", "sim": {"skill": 0.5}}
    path.write_text(yaml.safe_dump(data))
    plan, _ = _plan(path)

    t = load_tournament(path)
    calls = build_plan(t)
    log = RunLog(t.output_dir)
    done_answers, done_reviews = load_done(log)
    states = call_states(t, calls, log)
    want: dict[str, dict[str, int]] = {}
    for who, cid, done in [
        *((a.model, a.id, a.id in done_answers) for a in calls.answers),
        *((r.reviewer, r.id, r.id in done_reviews) for r in calls.reviews),
    ]:
        row = want.setdefault(who, {"done": 0, "new": 0, "stale": 0, "failed": 0})
        state = "done" if done else states.get(cid, "pending")
        row[{"pending": "new", "invalid": "done"}.get(state, state)] += 1
    got = {r["model"]: {k: r[k] for k in ("done", "new", "stale", "failed")} for r in plan["rows"]}
    assert got == want
    assert all(want[m]["failed"] for m in ("m0", "m1"))  # the fake failures are counted
    assert want["m2"]["stale"] and want["m3"]["new"] and not want["m3"]["done"]
