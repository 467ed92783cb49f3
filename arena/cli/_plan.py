"""`arena plan`: what a run will call, before anything is spent."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from arena.cli._common import load_or_exit
from arena.engine import build_plan, load_done
from arena.store import RunLog
from arena.types import estimate_tokens


@click.command("plan")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Output directory to compare against (default: as `arena run`).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan_cmd(file: Path, out: Path | None, as_json: bool) -> None:
    """Show the calls FILE needs per provider and model, and how many are already done."""
    t = load_or_exit(file, out)
    plan = build_plan(t)
    done_answers: dict[str, list[str]] = {}
    done_reviews: set[str] = set()
    if (t.output_dir / "log").is_dir():
        done_answers, done_reviews = load_done(RunLog(t.output_dir))
    rows: dict[tuple[str, str], Counter[str]] = {}

    def bump(model: str, what: str, n: int = 1) -> None:
        key = (t.provider_of(model), model)
        rows.setdefault(key, Counter())[what] += n

    for a in plan.answers:
        bump(a.model, "answers")
        if a.id in done_answers:
            bump(a.model, "done")
        else:
            est = sum(estimate_tokens(len(turn)) for turn in a.question.turns)
            bump(a.model, "est_tokens", est + t.model(a.model).max_tokens * len(a.question.turns))
    template_tokens = estimate_tokens(len(t.review_template))
    for r in plan.reviews:
        bump(r.reviewer, "reviews")
        if r.id in done_reviews:
            bump(r.reviewer, "done")
        else:
            answers_tokens = 2 * t.model(r.model_a).max_tokens
            bump(r.reviewer, "est_tokens",
                 template_tokens + answers_tokens + t.config.review.max_tokens)
    out_rows: list[dict[str, Any]] = []
    for (provider, model), c in sorted(rows.items()):
        total = c["answers"] + c["reviews"]
        out_rows.append({
            "provider": provider, "model": model, "answers": c["answers"],
            "reviews": c["reviews"], "calls": total, "done": c["done"],
            "pending": total - c["done"], "est_tokens": c["est_tokens"],
        })
    totals = {k: sum(r[k] for r in out_rows)
              for k in ("answers", "reviews", "calls", "done", "pending", "est_tokens")}
    if as_json:
        click.echo(json.dumps({"rows": out_rows, "total": totals}))
        return
    table = Table(title=f"Plan for {t.name} ({len(t.questions)} questions) -> {t.output_dir}")
    for col in ("provider", "model", "answers", "reviews", "calls", "done", "pending",
                "est_tokens"):
        table.add_column(col, justify="left" if col in ("provider", "model") else "right")
    for row in out_rows:
        table.add_row(*(str(v) for v in row.values()))
    table.add_row("total", "", *(str(totals[k]) for k in totals), style="bold")
    Console().print(table)
    click.echo("est_tokens is an upper bound: prompts plus max_tokens for each pending call.")
