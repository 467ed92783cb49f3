"""BatchEval's variants through `arena batcheval`: stages 1|2|3, integer scores,
the renamed compositions and their aliases, per-round agreement with humans."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from scipy import stats

from arena.batcheval import (
    DEFAULT_TEMPLATES,
    TABLE,
    compose_round,
    load_template,
    ordering_scores,
    parse_scores,
    render_prompt,
)
from arena.batcheval import Sample as BatchSample
from arena.config import BatchEvalConfig
from arena.store import RunLog
from tests.batcheval.test_cli import CONFIG, invoke, write_inputs


def _config(**batcheval: Any) -> dict[str, Any]:
    cfg = copy.deepcopy(CONFIG)
    cfg["models"]["judge"]["sim"] = {"malformed_rate": 0.0}
    cfg["batcheval"].update(batcheval)
    return cfg


def _run(tmp: Path, *extra: str, **batcheval: Any) -> dict[str, Any]:
    tmp.mkdir(parents=True, exist_ok=True)
    samples, cfg = write_inputs(tmp, n=12, config=_config(**batcheval))
    out = tmp / "out"
    result = invoke(
        str(samples), "--config", str(cfg), "--out", str(out), "--format", "json", *extra
    )
    assert result.exit_code == 0, result.output
    report: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return report


def _replies(tmp: Path) -> list[str]:
    frame = RunLog(tmp / "out").read(TABLE, columns=["text"])
    return [t for t in frame["text"].unique().to_list() if t is not None]


def test_three_stages_rank_then_score(tmp_path: Path) -> None:
    report = _run(tmp_path, stages=3)
    assert (report["stages"], report["procedure"]) == (3, "three-stage")
    assert report["unscored"] == 0
    replies = _replies(tmp_path)
    assert replies and all("Ranking: Sample" in r for r in replies)
    # the ranking line holds no score: the parser reads the scores line after it
    for reply in replies:
        n = reply.count("Ranking:") and reply.split("Ranking:")[1].split("\n")[0].count("Sample")
        scores = parse_scores(reply, n, 1, 3)
        assert None not in scores


def test_stages_one_two_three_use_their_templates() -> None:
    section = dict(CONFIG["batcheval"])
    for stages, procedure in ((1, "one-stage"), (2, "two-stage"), (3, "three-stage")):
        cfg = BatchEvalConfig.model_validate({**section, "stages": stages})
        assert cfg.procedure == procedure
        assert load_template(cfg, Path("x.yaml")) == DEFAULT_TEMPLATES[procedure].read_text()
        old = BatchEvalConfig.model_validate({**section, "procedure": procedure})
        assert old.stages == stages  # the earlier spelling names the same choice


def test_integer_scores_are_whole_numbers(tmp_path: Path) -> None:
    report = _run(tmp_path, scores="integer")
    assert report["scores"] == "integer"
    rounds = [s for r in report["results"] for s in r["round_scores"]]
    assert rounds and all(s is not None and float(s).is_integer() for s in rounds)
    # the final score is a mean over rounds, so it may fall between the points
    assert any("Integer Scores:" in r for r in _replies(tmp_path))


def test_integer_prompt_wording_and_decimal_prompt_unchanged() -> None:
    section = dict(CONFIG["batcheval"])
    crit = BatchEvalConfig.model_validate(section).criteria[0]
    samples = [BatchSample("s1", "one"), BatchSample("s2", "two")]
    for stages in (1, 2, 3):
        decimal = BatchEvalConfig.model_validate({**section, "stages": stages})
        integer = BatchEvalConfig.model_validate({**section, "stages": stages, "scores": "integer"})
        d = render_prompt(load_template(decimal, Path("x.yaml")), crit, samples)
        i = render_prompt(load_template(integer, Path("x.yaml")), crit, samples)
        assert "decimal" in d and "decimal" not in i and "whole number" in i
        if stages != 1:
            assert "Float Scores: [Sample1: <score>, Sample2: <score>]" in d
            assert "Integer Scores: [Sample1: <score>, Sample2: <score>]" in i


def test_stages_and_scores_from_the_command_line(tmp_path: Path) -> None:
    report = _run(tmp_path, "--stages", "1", "--scores", "integer")
    assert (report["stages"], report["procedure"], report["scores"]) == (1, "one-stage", "integer")
    replies = _replies(tmp_path)
    assert replies and all("Score of Sample1:" in r for r in replies)
    rounds = [s for r in report["results"] for s in r["round_scores"]]
    assert all(s is not None and float(s).is_integer() for s in rounds)


def test_bad_override_exits_2(tmp_path: Path) -> None:
    samples, cfg = write_inputs(
        tmp_path,
        config=_config(
            criteria=[{"name": "c", "description": "d", "scale": {"low": 0.5, "high": 3}}]
        ),
    )
    result = invoke(
        str(samples), "--config", str(cfg), "--out", str(tmp_path / "o"), "--scores", "integer"
    )
    assert result.exit_code == 2
    assert "whole-number scale ends" in result.output and str(cfg) in result.output


@pytest.mark.parametrize(
    ("alias", "name"), [("paper", "previous-round"), ("arena", "running-mean")]
)
def test_composition_aliases_run_the_same_batches(tmp_path: Path, alias: str, name: str) -> None:
    old = _run(tmp_path / "old", composition=alias)
    new = _run(tmp_path / "new", composition=name)
    assert old["composition"] == new["composition"] == name
    assert old["results"] == new["results"]
    ids = [
        sorted(RunLog(tmp_path / d / "out").read(TABLE, columns=["batch_id"])["batch_id"].unique())
        for d in ("old", "new")
    ]
    assert ids[0] == ids[1]


def test_compositions_order_by_what_their_names_say() -> None:
    history = {"a": [1.0, 3.0], "b": [3.0, 1.5], "c": [2.0, 2.0]}
    assert ordering_scores(history, "previous-round") == {"a": 3.0, "b": 1.5, "c": 2.0}
    assert ordering_scores(history, "running-mean") == {"a": 2.0, "b": 2.25, "c": 2.0}
    assert ordering_scores(history, "paper") == ordering_scores(history, "previous-round")
    assert ordering_scores(history, "arena") == ordering_scores(history, "running-mean")
    ids = [f"s{i}" for i in range(25)]
    means = {s: float(i) for i, s in enumerate(ids)}
    kw: dict[str, Any] = {"batch_size": 10, "strategy": "heterogeneous", "means": means, "seed": 1}
    prev = compose_round(ids, 2, composition="previous-round", **kw)
    assert [len(b) for b in prev] == [10, 10, 5]  # full batches plus a short one
    even = compose_round(ids, 2, composition="running-mean", **kw)
    assert sorted(len(b) for b in even) == [8, 8, 9]
    assert compose_round(ids, 2, composition="paper", **kw) == prev
    with pytest.raises(ValueError, match="aliases: paper, arena"):
        compose_round(ids, 2, composition="mine", **kw)


def test_human_agreement_round_by_round(tmp_path: Path) -> None:
    rows = [{"id": f"a{i}", "criterion": "helpfulness", "score": 1 + i / 6} for i in range(12)]
    human = tmp_path / "human.jsonl"
    human.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = _run(tmp_path, "--human", str(human), rounds=3)
    by_round = report["human_rounds"]
    assert [(r["round"], r["scores"]) for r in by_round] == [
        (r, kind) for r in (1, 2, 3) for kind in ("round", "mean to round")
    ]
    truth = {f"a{i}": 1 + i / 6 for i in range(12)}
    ids = sorted(truth)
    results = {r["id"]: r for r in report["results"]}
    for row in by_round:
        r = row["round"]
        if row["scores"] == "round":
            model = [results[i]["round_scores"][r - 1] for i in ids]
        else:
            model = [sum(results[i]["round_scores"][:r]) / r for i in ids]
        assert row["n"] == 12
        assert row["pearson"] == pytest.approx(stats.pearsonr(model, [truth[i] for i in ids])[0])
        assert row["spearman"] == pytest.approx(stats.spearmanr(model, [truth[i] for i in ids])[0])
        lo, hi = row["pearson_ci"]
        assert lo <= row["pearson"] <= hi
    # after the last round, "mean to round" is the final score's agreement
    (final,) = report["human"]
    last = by_round[-1]
    assert last["pearson"] == pytest.approx(final["pearson"])
    samples, cfg = write_inputs(tmp_path, n=12, config=_config(rounds=3))
    table = invoke(
        str(samples), "--config", str(cfg), "--out", str(tmp_path / "out"), "--human", str(human)
    )
    assert table.exit_code == 0 and "by round" in table.stdout
