"""`arena plan`: what a run will call, before anything is spent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from arena.cli._common import fail, load_or_exit
from arena.cli._table import box_table
from arena.config import ConfigError
from arena.estimate import EXPECTED_SHARE, estimate_plan, unpriced_warning


@click.command("plan")
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--out",
    type=click.Path(path_type=Path),
    default=None,
    help="Output directory to compare against (default: as `arena run`).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan_cmd(file: Path, out: Path | None, as_json: bool) -> None:
    """Show the calls FILE needs per provider and model, and how many are already done."""
    t = load_or_exit(file, out)
    try:
        estimate = estimate_plan(t)
    except ConfigError as exc:
        fail(str(exc))
    totals, unpriced, from_file = estimate.total, estimate.unpriced, estimate.from_file
    if unpriced:
        click.echo(f"arena: warning: {unpriced_warning(unpriced)}", err=True)
    if as_json:
        click.echo(json.dumps(estimate.to_json()))
        return
    columns = estimate.columns()
    cells = [[_cell(row[c]) for c in columns] for row in estimate.rows]
    cells.append(["total", "", *(_cell(totals[k]) for k in columns[2:])])
    title = f"Plan for {t.name} ({len(t.questions)} questions) -> {t.output_dir}"
    click.echo(box_table(title, columns, cells, left=("provider", "model")))
    click.echo("est_tokens is an upper bound: prompts plus max_tokens for each pending call.")
    click.echo(
        "est_cost_usd prices est_tokens (the worst case) with the YAML's `prices:`, "
        "configs/prices.yaml and genai-prices"
        + (f"; no price for: {', '.join(unpriced)} (counted as $0)." if unpriced else ".")
    )
    click.echo(
        "exp_cost_usd is the expected cost: each call writing the mean output of that model's "
        f"logged calls of its kind (none logged: {EXPECTED_SHARE:.0%} of max_tokens)."
    )
    click.echo(
        f"at batch API prices (where the provider has them) the expected cost is "
        f"${totals['exp_batch_cost_usd']:.4f}; cached input tokens cost less again "
        "(docs/cost.md)."
    )
    if from_file:
        click.echo(f"answers from a file (no calls): {', '.join(from_file)}.")
    click.echo("pending = new + stale (re-run: what they depend on changed) + failed (retried).")
    for line in estimate.notes():
        click.echo(line)


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"${value:.4f}"
    return str(value)
