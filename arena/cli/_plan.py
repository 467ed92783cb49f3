"""`arena plan`: what a run will call, before anything is spent."""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click
import polars as pl
from rich.console import Console
from rich.table import Table

from arena.batcheval import load_template, render_prompt, tournament_samples
from arena.cli._common import fail, load_or_exit
from arena.config import BatchEvalConfig, ConfigError, DiscussionConfig, Tournament
from arena.discuss import discussion_context, load_templates
from arena.nightly import batcheval_states, call_states, discussion_counts
from arena.pipeline import AnswerCall, build_plan, load_done
from arena.review import render_review_prompt
from arena.sampling import design_status
from arena.scheduler import PriceTable, price_table
from arena.store import RunLog
from arena.types import Usage, estimate_tokens

# State of a call not done -> the plan column that counts it.
_TO_RUN = {"pending": "new", "stale": "stale", "failed": "failed"}
_COLUMNS = (
    "provider",
    "model",
    "answers",
    "reviews",
    "batcheval",
    "calls",
    "done",
    "pending",
    "new",
    "stale",
    "failed",
    "est_tokens",
    "est_cost_usd",
    "exp_cost_usd",
)
# With nothing logged yet, a call is expected to write this share of its max_tokens.
EXPECTED_SHARE = 0.5


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
    batcheval_template = context = None
    try:
        prices = price_table(t)
        if t.config.batcheval is not None:
            batcheval_template = load_template(t.config.batcheval, t.path)
        if t.config.discussion is not None:
            templates = load_templates(t.config.discussion, t.path)
            context = discussion_context(t, t.config.discussion, templates)
    except ConfigError as exc:
        fail(str(exc))
    plan = build_plan(t)
    done_answers: dict[str, list[str]] = {}
    done_reviews: set[str] = set()
    states: dict[str, str] = {}  # id -> done / invalid / failed / stale / pending
    log = RunLog(t.output_dir) if (t.output_dir / "log").is_dir() else None
    if log is not None:
        done_answers, done_reviews = load_done(log)
        states = call_states(t, plan, log)
    rows: dict[tuple[str, str], Counter[str]] = {}
    expect = _Expected(t, log)

    def bump(model: str, what: str, n: int = 1) -> None:
        key = (t.provider_of(model), model)
        rows.setdefault(key, Counter())[what] += n

    for a in plan.answers:
        if t.from_file(a.model):
            continue  # answers from a file: no call
        bump(a.model, "answers")
        if a.id in done_answers:
            bump(a.model, "done")
        else:
            bump(a.model, _TO_RUN[states.get(a.id, "pending")])
            est = sum(estimate_tokens(len(turn)) for turn in a.question.turns)
            turns = len(a.question.turns)
            bump(a.model, "est_tokens", est + t.model(a.model).max_tokens * turns)
            bump(a.model, "est_in", est)
            bump(a.model, "est_out", t.model(a.model).max_tokens * turns)
            bump(a.model, "exp_in", est)
            bump(a.model, "exp_out", round(expect.answer_turn(a.model) * turns))
    # The review prompt with empty answers (template, question, turn labels), per question.
    prompt_tokens = {
        q.id: estimate_tokens(
            len(
                render_review_prompt(t.review_template, q, [""] * len(q.turns), [""] * len(q.turns))
            )
        )
        for q in t.questions
    }
    sampled = design_status(t, plan, log)
    review_costs: list[float | None] = []  # per pending review (sampled designs)
    for r in plan.reviews:
        bump(r.reviewer, "reviews")
        if r.id in done_reviews:
            bump(r.reviewer, "done")
        else:
            bump(r.reviewer, _TO_RUN[states.get(r.id, "pending")])
            # Both answers, each at most its contestant's max_tokens per turn.
            turns = len(r.question.turns)
            answers_tokens = expect.answer_bound(r.model_a, r.question.id, turns)
            answers_tokens += expect.answer_bound(r.model_b, r.question.id, turns)
            review_in = prompt_tokens[r.question.id] + answers_tokens
            review_max = t.review_settings(r.reviewer)[1]
            bump(r.reviewer, "est_tokens", review_in + review_max)
            bump(r.reviewer, "est_in", review_in)
            bump(r.reviewer, "est_out", review_max)
            expected_answers = expect.answer(r.model_a, r.question.id, turns) + expect.answer(
                r.model_b, r.question.id, turns
            )
            bump(r.reviewer, "exp_in", prompt_tokens[r.question.id] + round(expected_answers))
            bump(r.reviewer, "exp_out", round(expect.review(r.reviewer)))
            if sampled is not None:
                review_costs.append(
                    _cost(
                        prices,
                        t.provider_model_id(r.reviewer),
                        Counter(est_in=review_in, est_out=review_max),
                        free=t.config.providers[t.provider_of(r.reviewer)].type == "sim",
                    )
                )
    batcheval = None
    if t.config.batcheval is not None and batcheval_template is not None:
        cfg = t.config.batcheval
        batches = batcheval_states(t, [(a.id, a.question, a.model) for a in plan.answers], log)
        tokens = _batch_tokens(t, cfg, batcheval_template, plan.answers)
        for scorer, criterion, state in batches.select("scorer", "criterion", "state").iter_rows():
            bump(scorer, "batcheval")
            if state in ("done", "invalid"):  # logged with a result: not asked again
                bump(scorer, "done")
            else:
                bump(scorer, _TO_RUN[state])
                bump(scorer, "est_tokens", sum(tokens[criterion]))
                bump(scorer, "est_in", tokens[criterion][0])
                bump(scorer, "est_out", tokens[criterion][1])
                # Expected: asked once (no re-ask), writing a share of max_tokens.
                bump(scorer, "exp_in", tokens[criterion][0] // 2)
                bump(scorer, "exp_out", round(cfg.max_tokens * EXPECTED_SHARE))
        batcheval = {
            "calls": batches.height,
            "rounds": cfg.rounds,
            "batches_per_round": batches.filter(pl.col("round") == 1)["batch_index"].n_unique(),
            "criteria": len(cfg.criteria),
            "scorers": len(cfg.scorers),
        }
    discussion = None
    if t.config.discussion is not None:
        logged = None if log is None else discussion_counts(log, context)
        discussion = _discussion_bound(t, t.config.discussion, logged)
    if sampled is not None:
        # The most the sampled run may spend on reviews: its dearest remaining calls.
        if any(c is None for c in review_costs):
            sampled["max_review_cost_usd"] = None
        else:
            dearest = sorted((c for c in review_costs if c is not None), reverse=True)
            sampled["max_review_cost_usd"] = sum(dearest[: sampled["remaining_review_calls"]])
    out_rows: list[dict[str, Any]] = []
    for (provider, model), c in sorted(rows.items()):
        total = c["answers"] + c["reviews"] + c["batcheval"]
        out_rows.append(
            {
                "provider": provider,
                "model": model,
                "answers": c["answers"],
                "reviews": c["reviews"],
                "batcheval": c["batcheval"],
                "calls": total,
                "done": c["done"],
                "pending": total - c["done"],
                "new": c["new"],
                "stale": c["stale"],
                "failed": c["failed"],
                "est_tokens": c["est_tokens"],
                "est_cost_usd": _cost(
                    prices,
                    t.provider_model_id(model),
                    c,
                    free=t.config.providers[provider].type == "sim",
                ),
                "exp_cost_usd": _cost(
                    prices,
                    t.provider_model_id(model),
                    c,
                    free=t.config.providers[provider].type == "sim",
                    expected=True,
                ),
                # The expected cost at the provider's batch API prices (docs/cost.md).
                "exp_batch_cost_usd": _cost(
                    prices,
                    t.provider_model_id(model),
                    c,
                    free=t.config.providers[provider].type == "sim",
                    expected=True,
                    batch=True,
                ),
            }
        )
    # Counts and tokens add up; the costs (None when unpriced) are summed below.
    counted = [k for k in _COLUMNS[2:] if not k.endswith("_cost_usd")]
    totals = {k: sum(r[k] for r in out_rows) for k in counted}
    unpriced = [r["model"] for r in out_rows if r["est_cost_usd"] is None]
    totals["est_cost_usd"] = sum(r["est_cost_usd"] or 0.0 for r in out_rows)
    totals["exp_cost_usd"] = sum(r["exp_cost_usd"] or 0.0 for r in out_rows)
    totals["exp_batch_cost_usd"] = sum(r["exp_batch_cost_usd"] or 0.0 for r in out_rows)
    if unpriced:
        click.echo(
            f"arena: warning: no price for {', '.join(unpriced)}: counted as $0 "
            "(give one in the YAML's `prices:`)",
            err=True,
        )
    from_file = [n for n in t.contestants if t.from_file(n)]
    if as_json:
        click.echo(
            json.dumps(
                {
                    "rows": out_rows,
                    "total": totals,
                    "unpriced": unpriced,
                    "from_file": from_file,
                    "batcheval": batcheval,
                    "discussion": discussion,
                    "sampling": sampled,
                }
            )
        )
        return
    table = Table(title=f"Plan for {t.name} ({len(t.questions)} questions) -> {t.output_dir}")
    columns = [c for c in _COLUMNS if c != "batcheval" or batcheval is not None]
    for col in columns:
        table.add_column(col, justify="left" if col in ("provider", "model") else "right")
    for row in out_rows:
        table.add_row(*(_cell(row[c]) for c in columns))
    table.add_row("total", "", *(_cell(totals[k]) for k in columns[2:]), style="bold")
    # Piped or logged output has no width: do not squeeze the columns into 80.
    Console(width=None if sys.stdout.isatty() else 160).print(table)
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
    if batcheval is not None:
        click.echo(
            f"batcheval: {batcheval['rounds']} rounds x {batcheval['batches_per_round']} batches "
            f"x {batcheval['criteria']} criteria x {batcheval['scorers']} scorers = "
            f"{batcheval['calls']} calls; est_tokens counts each twice (a batch with a missing "
            "score is asked once more)."
        )
    if sampled is not None:
        click.echo(
            f"sampling: {sampled['strategy']}, budget {sampled['budget_review_calls']} of "
            f"{sampled['full_review_calls']} review calls; {sampled['judged_review_calls']} "
            f"judged, at most {sampled['remaining_review_calls']} more, costing at most "
            + (
                "an unknown amount (unpriced reviewers)"
                if sampled["max_review_cost_usd"] is None
                else f"${sampled['max_review_cost_usd']:.4f}"
            )
            + ". The table counts the full plan's reviews."
        )
    if discussion is not None:
        logged = discussion["logged"]
        click.echo(
            f"discussion: depends on triggers; at most {discussion['battles']} battles x "
            f"{discussion['pairs']} pair(s) x 2 x ({discussion['max_turns']} turns + 2 initial "
            f"reviews) = {discussion['max_calls']} calls, not in the table or the estimates"
            + (
                "."
                if not logged
                else f"; logged: {logged['logged']} discussions "
                f"({logged['agreed']} agreed, {logged['unresolved']} unresolved)."
            )
        )


def _batch_tokens(
    t: Tournament, cfg: BatchEvalConfig, template: str, answers: Sequence[AnswerCall]
) -> dict[str, tuple[int, int]]:
    """Upper-bound (input, output) tokens of one batch call per criterion, its re-ask included.

    A batch holds at most ceil(n / batches) samples, each at most the largest
    answer: its question and the contestant's max_tokens per turn.
    """
    if not answers:
        return {c.name: (0, 0) for c in cfg.criteria}
    size = math.ceil(len(answers) / math.ceil(len(answers) / cfg.batch_size))
    first = cfg.criteria[0]
    empty = len(render_prompt(template, first, []))
    sample = 0
    for a in answers:
        turns = len(a.question.turns)
        shown = tournament_samples([(a.id, a.question, a.model)], {a.id: [""] * turns})
        chars = len(render_prompt(template, first, shown)) - empty
        sample = max(sample, estimate_tokens(chars) + t.model(a.model).max_tokens * turns)
    return {
        c.name: (
            2 * (estimate_tokens(len(render_prompt(template, c, []))) + size * sample),
            2 * cfg.max_tokens,
        )
        for c in cfg.criteria
    }


def _discussion_bound(
    t: Tournament, d: DiscussionConfig, logged: dict[str, int] | None
) -> dict[str, Any]:
    """The most calls discussions can make: every battle selected, every step asked twice.

    Each ordered battle of the plan may be selected, and is discussed by each
    pair of discussants; a discussion asks each discussant's initial review
    and at most max_turns turns, and re-asks any of them once when its
    preference cannot be read.
    """
    n = len(t.contestants)
    pairs = math.comb(len(d.named_discussants()), 2) if isinstance(d.discussants, dict) else 1
    battles = len(t.questions) * n * (n - 1)
    return {
        "battles": battles,
        "pairs": pairs,
        "max_turns": d.max_turns,
        "max_calls": battles * pairs * 2 * (d.max_turns + 2),
        "logged": logged,
    }


def _cost(
    prices: PriceTable,
    model_id: str,
    c: Counter[str],
    *,
    free: bool,
    expected: bool = False,
    batch: bool | None = None,
) -> float | None:
    """USD of a row's pending calls, upper bound or expected (None: a paid model has no price);
    `batch`: at the batch API's prices."""
    if model_id not in prices:
        return 0.0 if free else None
    if expected:
        return prices.cost(model_id, Usage(c["exp_in"], c["exp_out"]), batch=batch)
    return prices.cost(model_id, Usage(c["est_in"], c["est_out"]), batch=batch)


class _Expected:
    """Expected output tokens: the mean of the model's logged calls of a kind, else a share
    of max_tokens; answers from a file: their own length."""

    def __init__(self, t: Tournament, log: RunLog | None) -> None:
        self.t = t
        self._answer_turn: dict[str, float] = {}
        self._review: dict[str, float] = {}
        if log is None:
            return
        answers = log.read("answers")
        if answers.height:
            ok = answers.filter(pl.col("status") == "ok")
            per_model = ok.group_by("model").agg(
                pl.col("tokens_out").sum().alias("tokens"),
                pl.col("answer_turns").list.len().sum().alias("turns"),
            )
            for model, tokens, turns in per_model.iter_rows():
                if turns:
                    self._answer_turn[model] = tokens / turns
        reviews = log.read("reviews")
        if reviews.height:
            done = reviews.filter(pl.col("status") != "failed")
            for reviewer, mean in (
                done.group_by("reviewer").agg(pl.col("tokens_out").mean()).iter_rows()
            ):
                if mean is not None:
                    self._review[reviewer] = float(mean)

    def _file_answer(self, model: str, question_id: str) -> float | None:
        found = self.t.answer_files.get(model)
        turns = found.answers.get(question_id) if found is not None else None
        return None if turns is None else float(sum(estimate_tokens(len(x)) for x in turns))

    def answer_turn(self, model: str) -> float:
        """Expected output tokens of one answer turn of a model that makes calls."""
        mean = self._answer_turn.get(model)
        return mean if mean is not None else self.t.model(model).max_tokens * EXPECTED_SHARE

    def answer(self, model: str, question_id: str, turns: int) -> float:
        """Expected tokens of a contestant's whole answer to a question."""
        known = self._file_answer(model, question_id)
        return known if known is not None else self.answer_turn(model) * turns

    def answer_bound(self, model: str, question_id: str, turns: int) -> int:
        """The most tokens a contestant's answer can have (max_tokens per turn)."""
        known = self._file_answer(model, question_id)
        return round(known) if known is not None else self.t.model(model).max_tokens * turns

    def review(self, reviewer: str) -> float:
        """Expected output tokens of one review."""
        mean = self._review.get(reviewer)
        return mean if mean is not None else self.t.review_settings(reviewer)[1] * EXPECTED_SHARE


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"${value:.4f}"
    return str(value)
