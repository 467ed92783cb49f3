"""`arena batcheval` through click's runner: JSON and table output, bad input, the lock."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from scipy import stats

from arena.batcheval import SCORES_FILE, TABLE, read_scores
from arena.cli import main
from arena.providers.sim import signature
from arena.store import RunLock, RunLog

CONFIG: dict[str, Any] = {
    "name": "cli",
    "seed": 5,
    "providers": {"sim": {"type": "sim"}},
    "models": {"judge": {"provider": "sim", "sim": {"malformed_rate": 0.1}}},
    "batcheval": {
        "scorers": ["judge"],
        "criteria": [
            {
                "name": "helpfulness",
                "description": "Does it help?",
                "scale": {"low": 1, "high": 3},
                "anchors": {1: "no", 2: "partly", 3: "fully"},
            }
        ],
        "batch_size": 4,
        "rounds": 2,
    },
}


def write_inputs(
    tmp: Path, n: int = 9, config: dict[str, Any] | None = None, lines: list[str] | None = None
) -> tuple[Path, Path]:
    samples = tmp / "samples.jsonl"
    if lines is None:
        lines = [
            json.dumps(
                {
                    "id": f"a{i}",
                    "text": f"Reply {i} {signature('w', i / 3 - 1)}",
                    **({"context": "What?"} if i % 2 else {}),
                }
            )
            for i in range(n)
        ]
    samples.write_text("\n".join(lines) + "\n")
    cfg = tmp / "be.yaml"
    cfg.write_text(yaml.safe_dump(config if config is not None else CONFIG))
    return samples, cfg


def invoke(*args: str) -> Any:
    return CliRunner().invoke(main, ["batcheval", *args])


def test_json_output(tmp_path: Path) -> None:
    samples, cfg = write_inputs(tmp_path)
    out = tmp_path / "out"
    result = invoke(str(samples), "--config", str(cfg), "--out", str(out), "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["exit_code"] == 0 and report["output"] == str(out)
    assert report["samples"] == 9 and report["criteria"] == ["helpfulness"]
    assert report["calls"]["planned"] == 2 * 3 and report["calls"]["pending"] == 0
    results = report["results"]
    assert [r["id"] for r in results] == [f"a{i}" for i in range(9)]
    for r in results:
        assert set(r) >= {
            "id",
            "criterion",
            "scorer",
            "score",
            "spread",
            "rounds_scored",
            "rounds_missing",
            "round_scores",
        }
        assert r["rounds_scored"] + r["rounds_missing"] == 2
        known = [s for s in r["round_scores"] if s is not None]
        if known:
            assert r["score"] == pytest.approx(sum(known) / len(known))
            assert 1 <= r["score"] <= 3
    scored = [r for r in results if r["score"] is not None]
    assert scored[-1]["score"] > scored[0]["score"]  # a8 is better than a0
    assert RunLog(out).read(TABLE).height == 9 * 2
    frame = read_scores(out / SCORES_FILE)
    assert frame is not None and frame["sample_id"].to_list() == [r["id"] for r in results]


def test_rerun_resumes_and_table_output(tmp_path: Path) -> None:
    samples, cfg = write_inputs(tmp_path)
    out = tmp_path / "out"
    first = invoke(str(samples), "--config", str(cfg), "--out", str(out), "--format", "json")
    second = invoke(str(samples), "--config", str(cfg), "--out", str(out))
    assert second.exit_code == 0, second.output
    assert "helpfulness" in second.stdout and "a8" in second.stdout
    assert "skipped 6" in second.stderr
    a = json.loads(first.stdout.strip().splitlines()[-1])["results"]
    third = invoke(str(samples), "--config", str(cfg), "--out", str(out), "--format", "json")
    assert json.loads(third.stdout.strip().splitlines()[-1])["results"] == a


def test_tournament_yaml_as_config(tmp_path: Path) -> None:
    (tmp_path / "q.jsonl").write_text('{"id": "q1", "text": "Q?"}\n')
    tournament = {
        "name": "tt",
        "questions": "q.jsonl",
        "providers": CONFIG["providers"],
        "models": {**CONFIG["models"], "other": {"provider": "sim"}},
        "contestants": ["judge", "other"],
        "batcheval": CONFIG["batcheval"],
    }
    samples, cfg = write_inputs(tmp_path, n=3, config=tournament)
    result = invoke(
        str(samples), "--config", str(cfg), "--out", str(tmp_path / "o"), "--format", "json"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout.strip().splitlines()[-1])["name"] == "tt"


def _bad_config(**section: Any) -> dict[str, Any]:
    return {**CONFIG, "batcheval": {**CONFIG["batcheval"], **section}}


def _crit(**kw: Any) -> dict[str, Any]:
    return _bad_config(criteria=[{**CONFIG["batcheval"]["criteria"][0], **kw}])


@pytest.mark.parametrize(
    ("lines", "config", "reason"),
    [
        ([], None, "no samples in file"),
        (["", "  "], None, "no samples in file"),
        (
            [json.dumps({"id": 1, "text": "a"}), json.dumps({"id": "1", "text": "b"})],
            None,
            "line 2: id: duplicate sample id '1'",
        ),
        ([json.dumps({"id": "x"})], None, "line 1: text: missing 'text'"),
        ([json.dumps({"text": "x"})], None, "line 1: id: missing 'id'"),
        (["{not json"], None, "line 1, column 2: invalid JSON"),
        (None, _bad_config(batch_size=0), "batcheval.batch_size: Input should be greater than"),
        (None, _bad_config(rounds=0), "batcheval.rounds: Input should be greater than"),
        (None, _crit(scale={"low": 3, "high": 1}), "scale: Value error, low must be below high"),
        (None, _crit(scale={"low": 2, "high": 2}), "low must be below high"),
        (None, _crit(description=""), "description: Value error, a criterion needs a description"),
        (
            None,
            {**CONFIG, "batcheval": {**CONFIG["batcheval"], "criteria": [{"name": "x"}]}},
            "batcheval.criteria[0].description: required key is missing",
        ),
        (None, _bad_config(scorers=["ghost"]), "batcheval.scorers[0]: undefined model 'ghost'"),
        (
            None,
            {k: v for k, v in CONFIG.items() if k != "batcheval"},
            "batcheval: required key is missing",
        ),
        (None, _bad_config(template="missing.txt"), "batcheval.template: template file not found"),
        (None, _bad_config(composition="balanced"), "batcheval.composition: Input should be"),
    ],
)
def test_bad_input_exits_2_with_the_reason(
    tmp_path: Path, lines: list[str] | None, config: dict[str, Any] | None, reason: str
) -> None:
    samples, cfg = write_inputs(tmp_path, config=config, lines=lines)
    out = tmp_path / "out"
    result = invoke(str(samples), "--config", str(cfg), "--out", str(out))
    assert result.exit_code == 2, result.output
    assert reason in result.stderr
    assert not (out / "log").exists()  # nothing was started


def test_missing_files_and_options_exit_2(tmp_path: Path) -> None:
    samples, cfg = write_inputs(tmp_path)
    assert invoke(str(samples)).exit_code == 2  # --config is required
    missing = invoke(str(tmp_path / "none.jsonl"), "--config", str(cfg))
    assert missing.exit_code == 2 and "samples file not found" in missing.stderr
    no_cfg = invoke(str(samples), "--config", str(tmp_path / "none.yaml"))
    assert no_cfg.exit_code == 2 and "file not found" in no_cfg.stderr


def test_locked_output_exits_75(tmp_path: Path) -> None:
    samples, cfg = write_inputs(tmp_path)
    out = tmp_path / "out"
    with RunLock(out):
        result = invoke(str(samples), "--config", str(cfg), "--out", str(out))
    assert result.exit_code == 75


def _human_file(tmp: Path, rows: list[dict[str, Any]], name: str = "human.jsonl") -> Path:
    path = tmp / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_human_scores_pearson_and_spearman_with_intervals(tmp_path: Path) -> None:
    samples, cfg = write_inputs(tmp_path, n=12)
    # two annotators per sample, averaged; they follow the samples' true quality
    rows = [
        {"id": f"a{i}", "criterion": "helpfulness", "score": 1 + i / 6 + d}
        for i in range(12)
        for d in (-0.2, 0.2)
    ]
    human = _human_file(tmp_path, rows)
    out = tmp_path / "out"
    args = [str(samples), "--config", str(cfg), "--out", str(out), "--human", str(human)]
    result = invoke(*args, "--format", "json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout.strip().splitlines()[-1])
    (row,) = report["human"]
    assert (row["criterion"], row["scorer"]) == ("helpfulness", "all scorers")
    scored = {r["id"]: r["score"] for r in report["results"] if r["score"] is not None}
    ids = sorted(scored)
    truth = [1 + int(i[1:]) / 6 for i in ids]
    assert row["n"] == len(ids) >= 10
    assert row["pearson"] == pytest.approx(stats.pearsonr([scored[i] for i in ids], truth)[0])
    assert row["spearman"] == pytest.approx(stats.spearmanr([scored[i] for i in ids], truth)[0])
    assert row["pearson"] > 0.8
    for name in ("pearson", "spearman"):
        lo, hi = row[f"{name}_ci"]
        assert -1 <= lo <= row[name] <= hi <= 1 and lo < hi
    table = invoke(*args)
    assert table.exit_code == 0
    assert "Agreement with human scores" in table.stdout and "helpfulness" in table.stdout


def test_human_scores_as_csv_without_the_criterion(tmp_path: Path) -> None:
    samples, cfg = write_inputs(tmp_path, n=9)
    human = tmp_path / "human.csv"
    human.write_text("id,score\n" + "".join(f"a{i},{i}\n" for i in range(9)))
    out = tmp_path / "out"
    result = invoke(
        str(samples),
        "--config",
        str(cfg),
        "--out",
        str(out),
        "--human",
        str(human),
        "--format",
        "json",
    )
    assert result.exit_code == 0, result.output
    (row,) = json.loads(result.stdout.strip().splitlines()[-1])["human"]
    assert row["criterion"] == "helpfulness" and row["n"] >= 7


@pytest.mark.parametrize(
    ("rows", "reason"),
    [
        (
            [{"id": "a1", "criterion": "speed", "score": 1}],
            "line 1: criterion: unknown criterion 'speed'",
        ),
        ([{"id": "a1", "score": "high"}], "line 1: score: not a number: 'high'"),
        ([{"criterion": "helpfulness", "score": 1}], "line 1: id: missing 'id'"),
        ([{"id": "zz", "score": 1}], "no sample of the samples file is scored on 'helpfulness'"),
        ([], "no human scores in file"),
    ],
)
def test_bad_human_scores_exit_2_before_any_call(
    tmp_path: Path, rows: list[dict[str, Any]], reason: str
) -> None:
    samples, cfg = write_inputs(tmp_path)
    out = tmp_path / "out"
    human = _human_file(tmp_path, rows)
    result = invoke(str(samples), "--config", str(cfg), "--out", str(out), "--human", str(human))
    assert result.exit_code == 2, result.output
    assert reason in result.stderr and str(human) in result.stderr
    assert not (out / "log").exists()
