"""`arena plan`: what a run will call, before anything is spent."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from arena.cli._common import fail, load_or_exit
from arena.config import ConfigError
from arena.engine import build_plan, load_done
from arena.nightly import call_states
from arena.scheduler import PriceTable, price_table
from arena.store import RunLog
from arena.types import Usage, estimate_tokens

# State of a call not done -> the plan column that counts it.
_TO_RUN = {"pending": "new", "stale": "stale", "failed": "failed"}


@click.command("plan")
@click.argument("file", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Output directory to compare against (default: as `arena run`).")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan_cmd(file: Path, out: Path | None, as_json: bool) -> None:
    """Show the calls FILE needs per provider and model, and how many are already done."""
    t = load_or_exit(file, out)
    try:
        prices = price_table(t)
    except ConfigError as exc:
        fail(str(exc))
    plan = build_plan(t)
    done_answers: dict[str, list[str]] = {}
    done_reviews: set[str] = set()
    states: dict[str, str] = {}  # id -> done / invalid / failed / stale / pending
    if (t.output_dir / "log").is_dir():
        done_answers, done_reviews = load_done(RunLog(t.output_dir))
        states = call_states(t, plan, RunLog(t.output_dir))
    rows: dict[tuple[str, str], Counter[str]] = {}

    def bump(model: str, what: str, n: int = 1) -> None:
        key = (t.provider_of(model), model)
        rows.setdefault(key, Counter())[what] += n

    for a in plan.answers:
        bump(a.model, "answers")
        if a.id in done_answers:
            bump(a.model, "done")
        else:
            bump(a.model, _TO_RUN[states.get(a.id, "pending")])
            est = sum(estimate_tokens(len(turn)) for turn in a.question.turns)
            bump(a.model, "est_tokens", est + t.model(a.model).max_tokens * len(a.question.turns))
            bump(a.model, "est_in", est)
            bump(a.model, "est_out", t.model(a.model).max_tokens * len(a.question.turns))
    template_tokens = estimate_tokens(len(t.review_template))
    for r in plan.reviews:
        bump(r.reviewer, "reviews")
        if r.id in done_reviews:
            bump(r.reviewer, "done")
        else:
            bump(r.reviewer, _TO_RUN[states.get(r.id, "pending")])
            answers_tokens = 2 * t.model(r.model_a).max_tokens
            bump(r.reviewer, "est_tokens",
                 template_tokens + answers_tokens + t.config.review.max_tokens)
            bump(r.reviewer, "est_in", template_tokens + answers_tokens)
            bump(r.reviewer, "est_out", t.config.review.max_tokens)
    out_rows: list[dict[str, Any]] = []
    for (provider, model), c in sorted(rows.items()):
        total = c["answers"] + c["reviews"]
        out_rows.append({
            "provider": provider, "model": model, "answers": c["answers"],
            "reviews": c["reviews"], "calls": total, "done": c["done"],
            "pending": total - c["done"], "new": c["new"], "stale": c["stale"],
            "failed": c["failed"], "est_tokens": c["est_tokens"],
            "est_cost_usd": _cost(prices, t.provider_model_id(model), c,
                                  free=t.config.providers[provider].type == "sim"),
        })
    totals = {k: sum(r[k] for r in out_rows)
              for k in ("answers", "reviews", "calls", "done", "pending", "new", "stale",
                        "failed", "est_tokens")}
    unpriced = [r["model"] for r in out_rows if r["est_cost_usd"] is None]
    totals["est_cost_usd"] = sum(r["est_cost_usd"] or 0.0 for r in out_rows)
    if as_json:
        click.echo(json.dumps({"rows": out_rows, "total": totals, "unpriced": unpriced}))
        return
    table = Table(title=f"Plan for {t.name} ({len(t.questions)} questions) -> {t.output_dir}")
    for col in ("provider", "model", "answers", "reviews", "calls", "done", "pending", "new",
                "stale", "failed", "est_tokens", "est_cost_usd"):
        table.add_column(col, justify="left" if col in ("provider", "model") else "right")
    for row in out_rows:
        table.add_row(*(_cell(v) for v in row.values()))
    table.add_row("total", "", *(_cell(totals[k]) for k in totals), style="bold")
    # Piped or logged output has no width: do not squeeze the columns into 80.
    Console(width=None if sys.stdout.isatty() else 160).print(table)
    click.echo("est_tokens is an upper bound: prompts plus max_tokens for each pending call.")
    click.echo("est_cost_usd prices est_tokens with configs/prices.yaml and the YAML's `prices:`"
               + (f"; no price for: {', '.join(unpriced)} (counted as $0)." if unpriced else "."))
    click.echo("pending = new + stale (re-run: what they depend on changed) + failed (retried).")


def _cost(prices: PriceTable, model_id: str, c: Counter[str], *, free: bool) -> float | None:
    """Upper-bound USD of a row's pending calls (None when a paid model has no price)."""
    if model_id not in prices:
        return 0.0 if free else None
    return prices.cost(model_id, Usage(c["est_in"], c["est_out"]))


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"${value:.4f}"
    return str(value)
