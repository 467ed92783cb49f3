"""`arena status` on the log read coded and the plan a slice at a time: the same counts
as classifying the whole plan frame against the log's texts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from arena.config import load_tournament
from arena.pipeline import build_plan
from arena.rundir import Classifier, plan_chunks, plan_frame, status_report
from arena.rundir._status import _rows_of
from arena.store import RunLog
from tests.conftest import small_tournament
from tests.rundir._support import add_model, edit_yaml, run

STATE_OF = {"ok": "done", "invalid": "invalid", "failed": "failed", "partial": "pending"}
KEYS = {
    "answers": ["question_id", "model"],
    "reviews": ["question_id", "model_a", "model_b", "reviewer"],
}


def _by_text(plan: pl.DataFrame, log: RunLog) -> tuple[dict[str, str], dict[str, Any]]:
    """Each call's state and the rows outside the plan, from the texts (the reference)."""
    states: dict[str, str] = {}
    outside: dict[str, Any] = {}
    for table, keys in KEYS.items():
        logged = log.read(table, columns=["status", *keys])
        status = dict(zip(logged["id"].to_list(), logged["status"].to_list(), strict=True))
        seen = set(logged.select(keys).iter_rows())
        calls = plan.filter(pl.col("stage") == table)
        for cid, *key in calls.select("id", *keys).iter_rows():
            if cid in status:
                states[cid] = STATE_OF.get(status[cid], "done")
            else:
                states[cid] = "stale" if tuple(key) in seen else "pending"
        planned_ids = set(calls["id"].to_list())
        planned_keys = set(calls.select(keys).iter_rows())
        out = logged.filter(~pl.col("id").is_in(list(planned_ids)))
        stale = sum(1 for key in out.select(keys).iter_rows() if key in planned_keys)
        outside[table] = {"stale": stale, "unused": out.height - stale}
    return states, outside


def test_slices_of_the_plan_classify_as_the_whole_plan_by_text(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=3, questions=4, sim={"failure_rate": 0.6})
    run(path)
    # A new contestant (pending calls), m2's answers changed (stale), a question gone
    # (its logged calls unused), and calls still failed from the first night.
    edit_yaml(path, add_model("m3", 0.4))
    edit_yaml(path, lambda d: d["models"]["m2"].update(max_tokens=99))
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(questions.read_text().splitlines(keepends=True)[1:]))
    t = load_tournament(path)
    plan = build_plan(t)
    frame = plan_frame(t, plan)
    log = RunLog(t.output_dir)
    want, outside = _by_text(frame, log)
    assert {"done", "failed", "stale", "pending"} <= set(want.values())
    assert outside["reviews"]["stale"] and outside["reviews"]["unused"]

    classifier = Classifier(log)
    got: dict[str, str] = {}
    for chunk in plan_chunks(t, plan, rows=7):
        states = classifier(chunk)
        assert states.select(chunk.columns).equals(chunk)  # the slice as it came
        got.update(zip(states["id"].to_list(), states["state"].to_list(), strict=True))
    assert got == want
    assert {table: classifier.outside(table) for table in KEYS} == outside
    assert classifier.logged("reviews").schema["id"] == pl.Int128  # read coded

    whole = status_report(frame, log)
    sliced = status_report(plan_chunks(t, plan, rows=5), log)
    assert sliced.to_json() == whole.to_json()
    assert whole.outside_plan == outside
    assert whole.total["planned"] == frame.height
    counted = {s: sum(v == s for v in want.values()) for s in ("done", "stale", "pending")}
    assert {s: whole.total[s] for s in counted} == counted


def test_rows_are_found_in_sorted_columns_of_numbers_texts_and_structs() -> None:
    numbers = pl.Series([3, 8, 20], dtype=pl.Int128)
    wanted = pl.Series([8, 9, None, 3, 21, 0], dtype=pl.Int128)
    assert _rows_of(numbers, wanted).to_list() == [1, None, None, 0, None, None]
    texts = pl.Series(["a-1", "r-2", "r-9"])
    assert _rows_of(texts, pl.Series(["r-9", "r-3", None])).to_list() == [2, None, None]
    keys = pl.DataFrame({"q": [1, 1, 2], "m": [0, 5, 0]}).to_struct("_key")
    asked = pl.DataFrame({"q": [2, 1, 3], "m": [0, 5, 0]}).to_struct("_key")
    assert _rows_of(keys, asked).to_list() == [2, 1, None]
    assert _rows_of(numbers.head(0), wanted).to_list() == [None] * 6


@pytest.mark.parametrize("odd", ["r-not-a-digest", "R-" + "0" * 24])
def test_a_log_with_ids_of_another_form_is_classified_by_their_texts(
    tmp_path: Path, odd: str
) -> None:
    """A review logged under an id the plan does not make: the log is read as texts
    (`RunLog.read_coded` falls back), the plan's calls are still found by id or key."""
    from tests.store.test_store_log import review, write_rows

    path = small_tournament(tmp_path, models=2, questions=2)
    run(path)
    t = load_tournament(path)
    plan = build_plan(t)
    frame = plan_frame(t, plan)
    write_rows(t.output_dir, [("reviews", review(1, id=odd, question_id="q0"))])
    log = RunLog(t.output_dir)
    want, outside = _by_text(frame, log)
    classifier = Classifier(log)
    got = classifier(frame)
    assert dict(zip(got["id"].to_list(), got["state"].to_list(), strict=True)) == want
    assert classifier.logged("reviews").schema["id"] == pl.String
    assert status_report(frame, log).outside_plan == outside
