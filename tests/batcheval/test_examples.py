"""`examples:` in BatchEval prompts: human-scored items of a pool shown in each batch."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
import yaml
from click.testing import CliRunner

from arena.batcheval import (
    TABLE,
    BatchEvalConfig,
    Sample,
    batch_tokens,
    load_setup,
    load_template,
    parse_scores,
    render_prompt,
)
from arena.cli import main
from arena.config import load_tournament
from arena.engine import preflight, run_tournament
from arena.examples import choose_batch_examples, fold_of, label_copy, render_batch_examples
from arena.pipeline import build_plan
from arena.store import RunLog
from tests.conftest import small_tournament

SECTION: dict[str, Any] = {
    "scorers": ["judge"],
    "criteria": [
        {"name": "helpfulness", "description": "Does it help?", "scale": {"low": 1, "high": 5}}
    ],
    "batch_size": 3,
    "rounds": 2,
}
CONFIG: dict[str, Any] = {
    "name": "pin",
    "seed": 5,
    "providers": {"sim": {"type": "sim"}},
    "models": {"judge": {"provider": "sim"}},
    "batcheval": SECTION,
}
TOPICS = ["birds", "rivers", "numbers"]


def _samples(tmp: Path, n: int = 6) -> Path:
    path = tmp / "s.jsonl"
    rows = [
        {"id": f"s{i}", "text": f"Reply number {i}.", "context": f"Question {i % 3}?"}
        for i in range(n)
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _pool_rows() -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for i in range(3):  # other replies to the samples' own contexts: never to be shown
        rows.append(
            {
                "id": f"own{i}",
                "context": f"Question {i}?",
                "text": f"Own {i}.",
                "criterion": "helpfulness",
                "score": 5,
            }
        )
    for i in range(9):
        topic = TOPICS[i % 3]
        rows.append(
            {
                "id": f"x{i}",
                "question_id": f"other{i}",
                "context": f"Tell me about {topic}, please ({i}).",
                "text": f"Something on {topic}: Sample{i % 3 + 1}: 5 and Score of Sample1: 4.",
                "criterion": "helpfulness",
                "score": 1 + i % 5,
            }
        )
    return rows


def _write(
    tmp: Path,
    examples: dict[str, Any] | None,
    rows: list[dict[str, Any]] | None = None,
    **section: Any,
) -> tuple[Path, Path]:
    cfg = json.loads(json.dumps(CONFIG))
    cfg["batcheval"].update(section)
    if examples is not None:
        (tmp / "pool.jsonl").write_text(
            "\n".join(json.dumps(r) for r in (rows if rows is not None else _pool_rows())) + "\n"
        )
        cfg["examples"] = {"pool": "pool.jsonl", **examples}
    path = tmp / "be.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return _samples(tmp), path


def _invoke(samples: Path, config: Path, *extra: str) -> Any:
    out = config.parent / "out"
    return CliRunner().invoke(
        main,
        [
            "batcheval",
            str(samples),
            "--config",
            str(config),
            "--out",
            str(out),
            "--format",
            "json",
            *extra,
        ],
    )


def _report(result: Any) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def test_without_examples_batch_ids_and_prompts_are_those_of_earlier_runs(tmp_path: Path) -> None:
    # pinned: the batch ids and prompts of this job before `examples:` existed
    samples, config = _write(tmp_path, None)
    _report(_invoke(samples, config))
    log = RunLog(tmp_path / "out").read(TABLE)
    ids = sorted(set(log["batch_id"].to_list()))
    assert ids[0] == "b-45baf6a926152eb7f7e247e3" and ids[-1] == "b-81cfd2d2be92cf3317c93cad"
    assert log["example_ids"].is_null().all()
    pins = {
        "two-stage": "3459a62aea0e545ddcc27c334dfd48d76628f63ba0a39f5c59a1f04c986a959d",
        "one-stage": "b08a2eb632f647429cb6e759b8bf415f5c194e70b800a6a11c5a88196aca6718",
        "three-stage": "d8cb1a671963430e3395bb480310dcd06fcff9864bc1a982fe103172163d6c2e",
    }
    for procedure, digest in pins.items():
        cfg = BatchEvalConfig.model_validate({**SECTION, "procedure": procedure})
        prompt = render_prompt(
            load_template(cfg, config), cfg.criteria[0], [Sample("a", "x", "q?"), Sample("b", "y")]
        )
        assert hashlib.sha256(prompt.encode()).hexdigest() == digest
        assert "{examples}" not in prompt and "Example" not in prompt


@pytest.mark.parametrize("select", ["seeded", "retrieved"])
def test_every_batch_shows_k_examples_none_of_its_samples_questions(
    tmp_path: Path, select: str
) -> None:
    samples, config = _write(tmp_path, {"k": 2, "select": select})
    _report(_invoke(samples, config))
    log = RunLog(tmp_path / "out").read(TABLE)
    assert log.height == 6 * 2
    for group in log.partition_by("batch_id"):
        shown = group["example_ids"].to_list()
        assert all(ids == shown[0] for ids in shown)  # one set per batch
        assert len(shown[0]) == 2
        contexts = {int(sid[1:]) % 3 for sid in group["sample_id"].to_list()}
        assert not any(i == f"own{c}" for i in shown[0] for c in contexts)


def test_the_prompt_shows_the_examples_before_the_samples_and_no_parser_reads_them(
    tmp_path: Path,
) -> None:
    samples, config = _write(tmp_path, {"k": 3, "select": "retrieved"})
    setup = load_setup(config)
    assert setup.examples is not None
    crit = setup.config.criteria[0]
    batch = [Sample("a", "Reply one.", "Question 0?"), Sample("b", "Reply two.", "Question 1?")]
    shown = choose_batch_examples(
        setup.examples, crit.name, [(None, s.context, s.text) for s in batch]
    )
    block = render_batch_examples(shown, crit.scale.low, crit.scale.high)
    prompt = render_prompt(setup.template, crit, batch, block)
    assert prompt.index("[The start of Example A]") < prompt.index("[The start of Sample1]")
    assert "People's rating of Example C: " in prompt
    # pool texts that say "Sample1: 5" are neutralised, and no line of the block
    # is a score the parser could give a sample
    assert "Sample1: 5" not in block and "Sample no. 1: 5" in block
    assert parse_scores(block, 2, 1, 5) == [None, None]
    assert parse_scores(prompt, 2, 1, 5) == [None, None]
    # a reply that echoes the examples and then scores the batch: only the batch's scores
    reply = block + "\nSample1: fine.\nSample2: weak.\nFloat Scores: [Sample1: 4.5, Sample2: 2]"
    assert parse_scores(reply, 2, 1, 5) == [4.5, 2.0]
    reply = "Float Scores: [Sample1: 4.5, Sample2: 2]\n" + block
    assert parse_scores(reply, 2, 1, 5) == [4.5, 2.0]


def test_retrieval_prefers_similar_contexts_and_fold_exclusion_holds(tmp_path: Path) -> None:
    samples, config = _write(
        tmp_path, {"k": 2, "select": "retrieved", "exclude": "fold", "folds": 7}
    )
    pool = load_setup(config).examples
    assert pool is not None
    ref = [("qa", "Tell me about rivers, please.", "A reply.")]
    shown = choose_batch_examples(pool, "helpfulness", ref)
    assert shown and all("rivers" in e.context for e in shown)
    own = fold_of("qa", 7)
    for e in pool.scored:
        key = e.question_id or e.context.strip()
        if fold_of(key, 7) == own:
            assert e not in shown


def test_changing_k_reruns_the_batches(tmp_path: Path) -> None:
    samples, config = _write(tmp_path, {"k": 2})
    first = _report(_invoke(samples, config))
    assert first["calls"]["completed"] + first["calls"]["invalid"] == 4
    again = _report(_invoke(samples, config))
    assert again["calls"]["skipped"] == 4
    cfg = yaml.safe_load(config.read_text())
    cfg["examples"]["k"] = 1
    config.write_text(yaml.safe_dump(cfg))
    changed = _report(_invoke(samples, config))
    assert changed["calls"]["skipped"] == 0 and changed["calls"]["planned"] == 4
    lengths = RunLog(tmp_path / "out").read(TABLE)["example_ids"].list.len().unique().sort()
    assert lengths.to_list() == [1, 2]


def test_a_user_template_without_the_placeholder_is_a_preflight_error(tmp_path: Path) -> None:
    samples, config = _write(tmp_path, {"k": 2}, template="mine.txt")
    (tmp_path / "mine.txt").write_text("{criterion}\n{samples}\n{score_format}\n")
    result = _invoke(samples, config)
    assert result.exit_code == 2
    assert "mine.txt" in result.output and "batcheval.template" in result.output
    assert "{examples}" in result.output
    assert not (tmp_path / "out" / "log").exists()
    # with the placeholder it runs
    (tmp_path / "mine.txt").write_text("{criterion}\n{examples}\n{samples}\n{score_format}\n")
    _report(_invoke(samples, config))


@pytest.mark.parametrize(
    ("row", "where"),
    [
        (
            {"id": "b", "context": "c", "text": "t", "criterion": "nope", "score": 3},
            r"line 1: criterion.*unknown criterion 'nope'",
        ),
        (
            {"id": "b", "context": "c", "text": "t", "criterion": "helpfulness", "score": 9},
            r"line 1: score.*outside",
        ),
        (
            {"id": "b", "context": "c", "text": "t", "criterion": "helpfulness", "score": "x"},
            r"line 1: score.*not a finite number",
        ),
        (
            {"id": "b", "context": "c", "criterion": "helpfulness", "score": 2},
            r"line 1: text.*missing",
        ),
    ],
)
def test_a_bad_scored_item_names_the_pool_line_and_field(
    tmp_path: Path, row: dict[str, Any], where: str
) -> None:
    samples, config = _write(tmp_path, {"k": 2}, rows=[row])
    result = _invoke(samples, config)
    assert result.exit_code == 2
    assert "pool.jsonl" in result.output
    import re

    assert re.search(where, result.output), result.output
    assert not (tmp_path / "out").exists()


def _tournament(tmp: Path, **examples: Any) -> Path:
    rows = []
    for q in range(4):  # items of the tournament's own questions
        rows.append(
            {
                "id": f"own-q{q}",
                "question_id": f"q{q}",
                "context": f"Question number {q}?",
                "text": "Mine.",
                "criterion": "helpfulness",
                "score": 2,
            }
        )
    for i in range(6):
        rows.append(
            {
                "id": f"x{i}",
                "question_id": f"other{i}",
                "context": f"About {TOPICS[i % 3]}?",
                "text": "Theirs.",
                "criterion": "helpfulness",
                "score": 3,
            }
        )
    (tmp / "pool.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    section = {
        "scorers": ["m0"],
        "criteria": [
            {"name": "helpfulness", "description": "Helps?", "scale": {"low": 1, "high": 3}}
        ],
        "batch_size": 4,
        "rounds": 1,
    }
    return small_tournament(
        tmp,
        models=3,
        questions=4,
        extra={
            "batcheval": section,
            "examples": {"pool": "pool.jsonl", "apply_to": ["batcheval"], **examples},
        },
    )


def test_a_tournament_shows_batches_no_example_of_their_questions(tmp_path: Path) -> None:
    path = _tournament(tmp_path, k=2, select="retrieved")
    t = load_tournament(path)
    assert t.examples is None and t.batcheval_examples is not None  # apply_to: batcheval only
    summary = asyncio.run(run_tournament(t))
    assert summary.failed == 0
    log = RunLog(tmp_path / "out")
    reviews = log.read("reviews")
    assert reviews.height > 0 and reviews["example_ids"].is_null().all()
    rows = log.read(TABLE)
    assert rows.height == 12
    for group in rows.partition_by("batch_id"):
        questions = set(group["question_id"].to_list())
        shown = group["example_ids"][0].to_list()
        assert len(shown) == 2
        assert not any(i == f"own-{q}" for i in shown for q in questions)
    # resumed: nothing re-runs; `arena status` finds every batch done (its replay
    # of the rounds gives the batches the ids, examples included, the stage gave them)
    again = asyncio.run(run_tournament(load_tournament(path)))
    stage = again.by_stage["batcheval"]
    assert (stage["skipped"], stage["completed"], stage["pending"]) == (3, 0, 0)
    status = CliRunner().invoke(main, ["status", str(tmp_path / "out"), "--json"])
    assert status.exit_code == 0, status.output
    block = json.loads(status.stdout)["batcheval"]
    assert (block["planned"], block["done"], block["pending"], block["stale"]) == (3, 3, 0, 0)


def test_a_tournament_with_a_bad_batcheval_template_stops_before_any_call(tmp_path: Path) -> None:
    path = _tournament(tmp_path, k=2)
    cfg = yaml.safe_load(path.read_text())
    (tmp_path / "mine.txt").write_text("{samples}\n{score_format}\n")
    cfg["batcheval"]["template"] = "mine.txt"
    path.write_text(yaml.safe_dump(cfg))
    problems = preflight(load_tournament(path))
    assert any("batcheval.template" in p and "{examples}" in p for p in problems)
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2
    assert not (tmp_path / "out" / "log").exists()


def test_apply_to_batcheval_needs_a_batcheval_section(tmp_path: Path) -> None:
    path = _tournament(tmp_path, k=2)
    cfg = yaml.safe_load(path.read_text())
    del cfg["batcheval"]
    path.write_text(yaml.safe_dump(cfg))
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2
    assert "examples.apply_to" in result.output


def test_label_copy_is_the_mean_of_the_nearest_items(tmp_path: Path) -> None:
    samples, config = _write(tmp_path, {"k": 3, "select": "seeded"})
    pool = load_setup(config).examples
    assert pool is not None
    birds = [e for e in pool.scored if "birds" in e.context]
    value = label_copy(pool, "helpfulness", (None, "Tell me about birds, please.", "x"))
    assert value == pytest.approx(sum(e.score for e in birds) / len(birds))
    assert pl.Series([value]).is_not_null().all()


def test_the_plan_counts_the_examples_tokens(tmp_path: Path) -> None:
    t = load_tournament(_tournament(tmp_path, k=2))
    cfg = t.config.batcheval
    assert cfg is not None and t.batcheval_examples is not None
    answers = build_plan(t).answers
    plain = batch_tokens(t, cfg, load_template(cfg, t.path), answers)
    shown = batch_tokens(
        t, cfg, load_template(cfg, t.path, examples=True), answers, t.batcheval_examples
    )
    longest = sorted(t.batcheval_examples.scored, key=lambda e: -len(e.context))[:2]
    block = render_batch_examples(longest, 1, 3)
    assert shown["helpfulness"][0] >= plain["helpfulness"][0] + 2 * (len(block) // 4 - 2)


def _leaky(tmp: Path, n: int = 12) -> tuple[Path, Path, Path]:
    """Samples whose pool holds near copies scored like them (leakage label copy finds)."""
    words = [
        "apples",
        "bridges",
        "comets",
        "deserts",
        "engines",
        "forests",
        "glaciers",
        "harbours",
        "islands",
        "jungles",
        "kettles",
        "lanterns",
    ]
    human = [1 + (i * 7) % 5 for i in range(n)]
    rows = [
        {"id": f"s{i}", "text": f"Reply {i}.", "context": f"What about {words[i]} today?"}
        for i in range(n)
    ]
    pool = [
        {
            "id": f"p{i}-{j}",
            "context": f"Something about {words[i]} ({j})",
            "text": f"Another reply {j}.",
            "criterion": "helpfulness",
            "score": human[i],
        }
        for i in range(n)
        for j in range(2)
    ]
    (tmp / "h.jsonl").write_text(
        "\n".join(json.dumps({"id": f"s{i}", "score": human[i]}) for i in range(n)) + "\n"
    )
    _, config = _write(tmp, {"k": 2, "select": "retrieved"}, rows=pool)
    (tmp / "s.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return tmp / "s.jsonl", config, tmp / "h.jsonl"


def test_human_reports_the_label_copy_baseline_next_to_the_scorer(tmp_path: Path) -> None:
    samples, config, human = _leaky(tmp_path)
    report = _report(_invoke(samples, config, "--human", str(human)))
    [copied] = report["human_label_copy"]
    assert copied["criterion"] == "helpfulness" and copied["scorer"] == "label copy"
    assert copied["k"] == 2 and copied["n"] == 12
    # the pool holds near copies scored like the samples: copying labels is perfect
    assert copied["pearson"] == pytest.approx(1.0) and copied["spearman"] == pytest.approx(1.0)
    assert copied["pearson_ci"] is not None
    [llm] = report["human"]
    assert llm["scorer"] == "all scorers" and llm["n"] == 12
    table = CliRunner().invoke(
        main,
        [
            "batcheval",
            str(samples),
            "--config",
            str(config),
            "--out",
            str(tmp_path / "out"),
            "--human",
            str(human),
        ],
        env={"COLUMNS": "200"},
    )
    assert table.exit_code == 0, table.output
    assert "label copy (k=2, no LLM)" in table.stdout


def test_without_examples_there_is_no_label_copy(tmp_path: Path) -> None:
    samples, config, human = _leaky(tmp_path)
    cfg = yaml.safe_load(config.read_text())
    del cfg["examples"]
    config.write_text(yaml.safe_dump(cfg))
    report = _report(_invoke(samples, config, "--human", str(human)))
    assert report["human_label_copy"] is None and report["human"]


def test_one_pool_for_both_and_each_kind_re_runs_only_its_calls(tmp_path: Path) -> None:
    path = _tournament(tmp_path, k=1)
    cfg = yaml.safe_load(path.read_text())
    cfg["examples"]["apply_to"] = ["reviews", "batcheval"]
    path.write_text(yaml.safe_dump(cfg))
    pool = tmp_path / "pool.jsonl"
    review = {"question": "Elsewhere?", "answer_a": "a", "answer_b": "b", "verdict": "A"}
    with pool.open("a") as f:
        f.write(json.dumps({"id": "r1", "question_id": "z1", **review}) + "\n")
    t = load_tournament(path)
    assert t.examples is t.batcheval_examples and t.examples is not None
    first = asyncio.run(run_tournament(t))
    assert first.failed == 0
    log = RunLog(tmp_path / "out")
    assert log.read("reviews")["example_ids"].to_list()[0] == ["r1"]

    def rerun() -> tuple[dict[str, int], dict[str, int]]:
        s = asyncio.run(run_tournament(load_tournament(path)))
        return s.by_stage["reviews"], s.by_stage["batcheval"]

    with pool.open("a") as f:  # a new scored item: the batches re-run, the reviews do not
        scored = {"context": "Far?", "text": "New.", "criterion": "helpfulness", "score": 1}
        f.write(json.dumps({"id": "x9", **scored}) + "\n")
    reviews, batches = rerun()
    assert set(reviews) == {"skipped"}
    assert batches["completed"] + batches["invalid"] == 3 and batches["skipped"] == 0
    with pool.open("a") as f:  # a new review item: the reviews re-run, the batches do not
        f.write(json.dumps({"id": "r2", "question_id": "z2", **review}) + "\n")
    reviews, batches = rerun()
    assert "skipped" not in reviews and reviews["completed"] == 4 * 6 * 3
    assert (batches["skipped"], batches["completed"]) == (3, 0)


def test_fixed_shows_the_listed_items_of_the_batch_criterion(tmp_path: Path) -> None:
    # own1 is a reply to the context "Question 1?": batches holding a sample of it leave it out
    samples, config = _write(tmp_path, {"select": "fixed", "ids": ["x5", "own1", "x0"]})
    _report(_invoke(samples, config))
    log = RunLog(tmp_path / "out").read(TABLE)
    for group in log.partition_by("batch_id"):
        shown = group["example_ids"].to_list()[0]
        contexts = {int(sid[1:]) % 3 for sid in group["sample_id"].to_list()}
        expected = ["x5", "x0"] if 1 in contexts else ["x5", "own1", "x0"]
        assert list(shown) == expected


def test_fixed_needs_a_scored_item_when_it_applies_to_batcheval(tmp_path: Path) -> None:
    rows = [
        *_pool_rows(),
        {
            "id": "r1",
            "question_id": "qq",
            "question": "?",
            "answer_a": "a",
            "answer_b": "b",
            "verdict": "A",
        },
    ]
    samples, config = _write(tmp_path, {"select": "fixed", "ids": ["r1"]}, rows=rows)
    result = _invoke(samples, config)
    assert result.exit_code == 2
    assert "examples.ids" in result.output and "lists no scored item" in result.output
