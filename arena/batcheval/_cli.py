"""`arena batcheval`: score any samples with BatchEval (see docs/batcheval.md)."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from arena.batcheval import (
    TABLE,
    BatchEvalSetup,
    HumanScores,
    Sample,
    StageSummary,
    batch_diagnostics,
    human_agreement,
    human_by_round,
    load_human_scores,
    load_samples,
    load_setup,
    load_template,
    logged_batches,
    preflight,
    run_standalone,
    scores_frame,
)
from arena.batcheval._human import label_copy_agreement
from arena.batcheval._prompt import check_pool
from arena.cli._common import Command, Exit, Interrupts, budget_option, fail, signal_exit
from arena.config import BatchEvalConfig, ConfigError
from arena.engine import log_line
from arena.runner import error_lines
from arena.store import RunLock, RunLog


class _Progress:
    """A timestamped progress line on stderr every few seconds."""

    def __init__(self, every: float = 5.0) -> None:
        self.every = every
        self.last = time.monotonic()

    def __call__(self, stage: str, done: int, total: int) -> None:
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            log_line(f"{stage} {done}/{total}")


async def _run(
    setup: BatchEvalSetup,
    samples: tuple[Sample, ...],
    budget: float | None,
    interrupts: Interrupts,
) -> StageSummary:
    interrupts.install()
    return await run_standalone(
        setup, samples, budget_usd=budget, progress=_Progress(), on_scheduler=interrupts.attach
    )


def _exit_code(summary: StageSummary, signals: list[int], budget_stopped: bool) -> Exit:
    interrupted = signal_exit(signals)
    if interrupted is not None:
        return interrupted
    if budget_stopped:
        return Exit.BUDGET
    if summary.failed or summary.pending:
        return Exit.PARTIAL
    return Exit.OK


def _report(
    setup: BatchEvalSetup,
    samples: tuple[Sample, ...],
    summary: StageSummary,
    code: Exit,
    human: HumanScores | None,
) -> dict[str, Any]:
    cfg = setup.config
    frame = scores_frame(summary.scores)
    agreement = None if human is None else human_agreement(frame, human, seed=setup.seed)
    by_round = None if human is None else human_by_round(frame, human, seed=setup.seed)
    logged = logged_batches(
        RunLog(setup.output_dir).read(TABLE),
        {s.id for s in samples},
        {c.name for c in cfg.criteria},
        set(cfg.scorers),
        cfg.rounds,
    )
    copied = None
    if human is not None and setup.examples is not None:
        refs = {s.id: (s.question_id, s.context, s.text) for s in samples}
        copied = label_copy_agreement(refs, human, setup.examples, seed=setup.seed)
    return {
        "name": setup.name,
        "output": str(setup.output_dir),
        "exit_code": int(code),
        "samples": len(samples),
        "criteria": [c.name for c in cfg.criteria],
        "scorers": list(cfg.scorers),
        "strategy": cfg.strategy,
        "composition": cfg.composition,
        "procedure": cfg.procedure,
        "stages": cfg.stages,
        "scores": cfg.scores,
        "rounds": cfg.rounds,
        "batch_size": cfg.batch_size,
        "calls": {**summary.counts(), "reasked": summary.reasked},
        "unscored": summary.unscored,
        "tokens_in": summary.tokens_in,
        "tokens_out": summary.tokens_out,
        "cost_usd": summary.cost_usd,
        "wall_seconds": summary.wall_seconds,
        "errors": summary.errors,
        "results": [s.to_json() for s in summary.scores],
        "human": agreement,
        "human_rounds": by_round,
        "human_label_copy": copied,
        "diagnostics": batch_diagnostics(logged),
    }


def _table(report: dict[str, Any]) -> Table:
    table = Table(
        title=f"BatchEval {report['name']}: {report['samples']} samples, "
        f"{report['rounds']} rounds, {report['strategy']} batches "
        f"({report['composition']} composition), {report['procedure']}, "
        f"{report['scores']} scores"
    )
    for col in ("id", "criterion", "scorer", "score", "spread", "rounds"):
        table.add_column(col, justify="left" if col in ("id", "criterion", "scorer") else "right")
    for r in report["results"]:
        score = "-" if r["score"] is None else f"{r['score']:.2f}"
        spread = "-" if r["spread"] is None else f"{r['spread']:.2f}"
        total = r["rounds_scored"] + r["rounds_missing"]
        table.add_row(
            r["id"], r["criterion"], r["scorer"], score, spread, f"{r['rounds_scored']}/{total}"
        )
    return table


def _cell(value: float | None, interval: list[float] | None) -> str:
    if value is None:
        return "-"
    if interval is None:
        return f"{value:.3f}"
    return f"{value:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"


def _human_table(rows: list[dict[str, Any]], copied: list[dict[str, Any]] | None) -> Table:
    table = Table(title="Agreement with human scores (per sample; 95% bootstrap intervals)")
    for col in ("criterion", "scorer", "n", "pearson", "spearman"):
        table.add_column(col, justify="left" if col in ("criterion", "scorer") else "right")
    for r in sorted(rows + (copied or []), key=lambda r: r["criterion"]):
        scorer = r["scorer"]
        if "k" in r:  # the label-copy baseline of `examples:`
            scorer = f"{scorer} (k={r['k']}, no LLM)"
        table.add_row(
            r["criterion"],
            scorer,
            str(r["n"]),
            _cell(r["pearson"], r["pearson_ci"]),
            _cell(r["spearman"], r["spearman_ci"]),
        )
    return table


def _rounds_table(rows: list[dict[str, Any]]) -> Table:
    table = Table(
        title="Agreement with human scores by round (mean over scorers; 95% bootstrap intervals)"
    )
    for col in ("criterion", "round", "n", "pearson (round)", "pearson (mean to round)"):
        table.add_column(col, justify="left" if col == "criterion" else "right")
    alone = {(r["criterion"], r["round"]): r for r in rows if r["scores"] == "round"}
    for r in rows:
        if r["scores"] != "mean to round":
            continue
        one = alone[(r["criterion"], r["round"])]
        table.add_row(
            r["criterion"],
            str(r["round"]),
            str(r["n"]),
            _cell(one["pearson"], one["pearson_ci"]),
            _cell(r["pearson"], r["pearson_ci"]),
        )
    return table


def _diagnostics_table(rows: list[dict[str, Any]]) -> Table:
    table = Table(
        title="Batch bias and score entropy by round (mean |batch bias|; its correlation "
        "with the batch's quality; entropy in bits of the round's scores and of the means "
        "to the round)"
    )
    columns = ("criterion", "scorer", "round", "batches", "batch bias", "bias vs quality")
    for col in (*columns, "entropy (round)", "entropy (mean to round)"):
        table.add_column(col, justify="left" if col in ("criterion", "scorer") else "right")
    for r in rows:
        table.add_row(
            r["criterion"],
            r["scorer"],
            str(r["round"]),
            str(r["batches"]),
            f"{r['batch_bias']:.3f}",
            "-" if r["bias_vs_quality"] is None else f"{r['bias_vs_quality']:+.2f}",
            f"{r['entropy_round']:.2f}",
            f"{r['entropy_mean_to_round']:.2f}",
        )
    return table


def _override(
    setup: BatchEvalSetup, stages: str | None, scores: str | None, composition: str | None
) -> BatchEvalSetup:
    """The setup with the command line's --stages / --scores / --composition applied."""
    if stages is None and scores is None and composition is None:
        return setup
    data = setup.config.model_dump()
    if stages is not None:
        data.pop("procedure")
        data["stages"] = int(stages)
    else:
        data.pop("stages")
    if scores is not None:
        data["scores"] = scores
    if composition is not None:
        data["composition"] = composition
    try:
        cfg = BatchEvalConfig.model_validate(data)
    except ValueError as exc:
        fail(f"{setup.path}: batcheval: {exc}")
    if setup.examples is not None:
        try:
            check_pool(setup.examples, cfg)
        except ConfigError as exc:
            fail(str(exc))
    template = load_template(cfg, setup.path, examples=setup.examples is not None)
    return dataclasses.replace(setup, config=cfg, template=template)


def _check_human(human: HumanScores, samples: tuple[Sample, ...]) -> None:
    """Human scores must name the samples by id, and name some of them."""
    if human.by != "id":
        fail(f"{human.path}: id: name the samples by 'id' (the samples file's ids)")
    ids = {s.id for s in samples}
    for criterion, by_key in human.scores.items():
        if not ids & by_key.keys():
            fail(f"{human.path}: id: no sample of the samples file is scored on '{criterion}'")


@click.command("batcheval", cls=Command)
@click.argument("samples_file", metavar="SAMPLES.jsonl", type=click.Path(path_type=Path))
@click.option(
    "--config",
    "config_file",
    required=True,
    type=click.Path(path_type=Path),
    help="BatchEval config YAML (or a tournament YAML with a batcheval: section).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Output directory (default: the config's `output`, else runs/<name>).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="How to print the final scores on stdout.",
)
@click.option(
    "--human",
    "human_file",
    type=click.Path(path_type=Path),
    default=None,
    help="Human scores (JSONL or CSV rows: id, criterion, score): report the per-sample "
    "Pearson and Spearman correlation of the BatchEval scores with them, per criterion, "
    "with bootstrap intervals, and round by round (each round alone, and the mean "
    "up to it). With `examples:` applying to BatchEval, also the label-copy baseline (each "
    "sample scored by the mean human score of its k nearest pool items, no LLM).",
)
@click.option(
    "--stages",
    type=click.Choice(["1", "2", "3"]),
    default=None,
    help="Override the config's `stages`: 1 analyse and score each sample in turn, 2 analyse "
    "all then score all (the paper's best), 3 analyse, rank, then score.",
)
@click.option(
    "--scores",
    "score_kind",
    type=click.Choice(["decimal", "integer"]),
    default=None,
    help="Override the config's `scores`: decimal (the paper's best) or integer scores.",
)
@click.option(
    "--composition",
    type=click.Choice(["previous-round", "running-mean", "paper", "arena"]),
    default=None,
    help="Override the config's `composition`: what orders later rounds' batches "
    "(`paper` and `arena` are the earlier names of previous-round and running-mean).",
)
@budget_option
def batcheval_cmd(
    samples_file: Path,
    config_file: Path,
    out: Path | None,
    fmt: str,
    human_file: Path | None,
    stages: str | None,
    score_kind: str | None,
    composition: str | None,
    budget: float | None,
) -> None:
    """Score every sample in SAMPLES.jsonl (`id`, `text`, optional `context`) with BatchEval.

    Samples are scored in batches on each criterion by each scorer over several
    rounds; a sample's score is its mean over the rounds. With --human FILE the
    scores are compared with human scores of the same samples (the paper's
    evaluation): Pearson and Spearman per criterion, with bootstrap intervals. Calls are logged to
    the crash-safe log in the output directory (table `batcheval`) and a rerun
    resumes; final scores go to batcheval_scores.parquet there. Exit codes: 0
    complete, 2 bad input, 3 partial, 4 budget reached, 75 locked, 130/143
    interrupted.
    """
    human: HumanScores | None = None
    try:
        setup = _override(load_setup(config_file, out), stages, score_kind, composition)
        samples = load_samples(samples_file)
        if human_file is not None:
            human = load_human_scores(human_file, [c.name for c in setup.config.criteria])
    except ConfigError as exc:
        fail(str(exc))
    if human is not None:
        _check_human(human, samples)
    problems = preflight(setup)
    if problems:
        fail("\n  ".join([f"{config_file}: cannot start:"] + problems))
    signals: list[int] = []
    interrupts = Interrupts(signals)
    with RunLock(setup.output_dir):
        summary = asyncio.run(_run(setup, samples, budget, interrupts))
    budget_stopped = interrupts.scheduler is not None and interrupts.scheduler.budget_exhausted
    code = _exit_code(summary, signals, budget_stopped)
    report = _report(setup, samples, summary, code, human)
    if fmt == "json":
        click.echo(json.dumps(report))
    else:
        Console().print(_table(report))
        if report["human"] is not None:
            Console().print(_human_table(report["human"], report["human_label_copy"]))
        if report["human_rounds"]:
            Console().print(_rounds_table(report["human_rounds"]))
        if report["diagnostics"]:
            Console().print(_diagnostics_table(report["diagnostics"]))
    click.echo(
        f"{setup.name}: {len(samples)} samples; batch calls planned {summary.planned}, "
        f"skipped {summary.skipped}, completed {summary.completed}, invalid {summary.invalid}, "
        f"failed {summary.failed}, pending {summary.pending}, re-asked {summary.reasked}; "
        f"unscored {summary.unscored} ({summary.wall_seconds:.1f}s) -> {setup.output_dir}",
        err=True,
    )
    for line in error_lines(summary.errors):
        click.echo(f"arena: {line}", err=True)
    sys.exit(int(code))
