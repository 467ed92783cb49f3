"""BatchEval's diagnostics (batch bias, score entropy by round): known answers, BatchEval's
released outputs' shape read through arena's parser, and `arena batcheval`'s report."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

from arena.batcheval import TABLE, batch_diagnostics, logged_batches, parse_scores, score_entropy
from arena.store import RunLog
from tests.batcheval.test_cli import invoke, write_inputs


def test_score_entropy() -> None:
    assert score_entropy([]) is None
    assert score_entropy([2.0, 2.0, 2.0]) == 0.0
    assert score_entropy([1.0, 2.0, 3.0, 1.004]) == pytest.approx(1.5)  # 1.0 twice at 2 decimals


def _rows(scores: dict[int, dict[str, list[tuple[str, float]]]]) -> pl.DataFrame:
    data = [
        ("c", "judge", r, bid, sid, score)
        for r, batches in scores.items()
        for bid, members in batches.items()
        for sid, score in members
    ]
    columns = ["criterion", "scorer", "round", "batch_id", "sample_id", "score"]
    return pl.DataFrame(data, schema=columns, orient="row")


def test_batch_bias_known_answer() -> None:
    # Round 1 puts the two weak samples together (scored up by 0.5) and the two strong
    # ones together (scored down by 0.5); round 2 mixes them and scores them as they are.
    rows = _rows(
        {
            1: {"b1": [("w1", 1.5), ("w2", 1.7)], "b2": [("s1", 2.5), ("s2", 2.3)]},
            2: {"b3": [("w1", 1.0), ("s1", 3.0)], "b4": [("w2", 1.2), ("s2", 2.8)]},
        }
    )
    one, two = batch_diagnostics(rows)
    # usual levels: w1 1.25, w2 1.45, s1 2.75, s2 2.55; round 1 biases +0.25 and -0.25
    assert one["batch_bias"] == pytest.approx(0.25) and two["batch_bias"] == pytest.approx(0.0)
    assert one["batches"] == 2 and one["samples"] == 4
    assert one["bias_vs_quality"] is None  # fewer than 3 batches
    assert one["entropy_round"] == pytest.approx(2.0)  # four distinct scores
    # means to round 2: 1.25, 1.45, 2.75, 2.55: still four distinct values
    assert two["entropy_mean_to_round"] == pytest.approx(2.0)


def test_contrast_effect_shows_as_a_negative_correlation() -> None:
    # Three batches of one quality level each, each scored toward the middle.
    levels = {"lo": 1.0, "mid": 2.0, "hi": 3.0}
    first = {
        name: [(f"{name}{k}", level + (2.0 - level) * 0.3) for k in range(3)]
        for name, level in levels.items()
    }
    mixed = {f"m{k}": [(f"{name}{k}", level) for name, level in levels.items()] for k in range(3)}
    rows = _rows({1: first, 2: mixed})
    one, two = batch_diagnostics(rows)
    assert one["bias_vs_quality"] == pytest.approx(-1.0)
    assert one["batch_bias"] > two["batch_bias"]


# --- BatchEval's released outputs, in their shape -------------------------------------
# Provided_Result/API_Completion/<dataset>/<round>.json/<Aspect>_10_0.2_1_batch_gpt4/
# raw_data/<batch>.json holds {"raw_data": [{"context", "prompt"}, ...], "response": [reply]};
# eval_data_new/<dataset>/<round>.json holds "context", "annotations" and "maps" (sample
# j of the dataset sits at position maps[j] of that round; position p in batch p // 10).


def _reply(scores: list[float]) -> str:
    analysis = "\n\n".join(f"Sample{k}: The system keeps the topic." for k in range(1, 11))
    listed = ", ".join(f"Sample{k}:{s:g}" for k, s in enumerate(scores, 1))
    return f"Analysis:\n\n{analysis}\n\nFloat Scores: [{listed}]"


def _write_released(root: Path) -> dict[int, dict[int, float]]:
    """Two rounds of 20 samples in two batches each; returns round -> sample -> score."""
    truth: dict[int, dict[int, float]] = {}
    for rnd in range(2):
        order = list(range(20)) if rnd == 0 else [j for k in range(10) for j in (k, 19 - k)]
        maps = {str(j): p for p, j in enumerate(order)}
        meta = root / "eval_data_new" / "generate_fed_dialog_heterogeneous_coh" / f"{rnd}.json"
        meta.parent.mkdir(parents=True, exist_ok=True)
        meta.write_text(
            json.dumps(
                {
                    "context": [f"User: hi {j}\nSystem: hello" for j in order],
                    "annotations": [{"Coherent": 1 + j / 10} for j in order],
                    "maps": maps,
                }
            )
        )
        truth[rnd + 1] = {}
        for b in range(2):
            members = order[b * 10 : (b + 1) * 10]
            # round 1: batch 0 holds the weaker half, scored up; batch 1 the stronger, down
            shift = (0.3 if b == 0 else -0.3) if rnd == 0 else 0.0
            scores = [round(1 + j / 10 + shift, 1) for j in members]
            truth[rnd + 1].update(dict(zip(members, scores, strict=True)))
            folder = (
                root
                / "API_Completion"
                / "generate_fed_dialog_heterogeneous_coh"
                / f"{rnd}.json"
                / "Coherent_10_0.2_1_batch_gpt4"
                / "raw_data"
            )
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{b}.json").write_text(
                json.dumps(
                    {
                        "raw_data": [
                            {"context": f"User: hi {j}", "prompt": "Coherent within [1,3]"}
                            for j in members
                        ],
                        "response": [_reply(scores)],
                    }
                )
            )
    return truth


def _read_released(root: Path) -> pl.DataFrame:
    """The released layout as batch_diagnostics rows, each reply read by arena's parser."""
    rows = []
    for meta in sorted((root / "eval_data_new").glob("*/*.json")):
        dataset, rnd = meta.parent.name, int(meta.stem)
        at = {p: j for j, p in json.loads(meta.read_text())["maps"].items()}
        for batch in (root / "API_Completion" / dataset / f"{rnd}.json").glob("*/raw_data/*.json"):
            data = json.loads(batch.read_text())
            n = len(data["raw_data"])
            for k, score in enumerate(parse_scores(data["response"][0], n, 1, 3)):
                p = int(batch.stem) * 10 + k
                rows.append((dataset, "gpt4", rnd + 1, f"{rnd}/{batch.stem}", at[p], score))
    columns = ["criterion", "scorer", "round", "batch_id", "sample_id", "score"]
    return pl.DataFrame(rows, schema=columns, orient="row")


def test_released_outputs_shape(tmp_path: Path) -> None:
    truth = _write_released(tmp_path)
    rows = _read_released(tmp_path)
    assert rows.height == 40 and rows["score"].null_count() == 0
    got = {(r, int(s)): v for _, _, r, _, s, v in rows.iter_rows()}
    assert got == {(r, j): v for r, scores in truth.items() for j, v in scores.items()}
    one, two = batch_diagnostics(rows)
    # a sample's usual level is its level plus half its round-1 shift, so round 1's
    # batches are off by +0.15 and -0.15; round 2's each hold both halves: 0
    assert one["batch_bias"] == pytest.approx(0.15, abs=1e-9)
    assert two["batch_bias"] == pytest.approx(0.0, abs=1e-9)
    # round 1: 14 distinct scores among 20 (6 of them twice); round 2: 20 distinct;
    # the means to round 2: 17 distinct (3 of them twice)
    assert one["entropy_round"] == pytest.approx(0.4 * math.log2(20) + 0.6 * math.log2(10))
    assert two["entropy_round"] == pytest.approx(math.log2(20))
    assert two["entropy_mean_to_round"] == pytest.approx(0.7 * math.log2(20) + 0.3 * math.log2(10))


def test_arena_batcheval_reports_the_diagnostics(tmp_path: Path) -> None:
    samples, cfg = write_inputs(tmp_path, n=12)
    out = tmp_path / "out"
    result = invoke(str(samples), "--config", str(cfg), "--out", str(out), "--format", "json")
    assert result.exit_code in (0, 3), result.output
    report = json.loads(result.stdout)
    rows = report["diagnostics"]
    assert [r["round"] for r in rows] == [1, 2]
    assert all(r["criterion"] == "helpfulness" and r["scorer"] == "judge" for r in rows)
    # the same figures from the log, through the public functions
    table = RunLog(out).read(TABLE)
    ids = {json.loads(line)["id"] for line in samples.read_text().splitlines()}
    again = batch_diagnostics(logged_batches(table, ids, {"helpfulness"}, {"judge"}, 2))
    assert again == rows
    assert rows[0]["batches"] == 3 and rows[0]["batch_bias"] >= 0
    shown = invoke(str(samples), "--config", str(cfg), "--out", str(out))
    assert "Batch bias and score entropy by round" in " ".join(shown.output.split())
