"""What a run of a tournament will call and cost, before anything is spent (`arena plan`).

`estimate_plan` counts the calls of the plan per provider and model (answers,
reviews, and the calls of the stages that count theirs in the table), how
many are already logged, and their upper-bound and expected tokens and cost;
every stage of `arena.stages` adds its block and notes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from arena.config import Tournament
from arena.pipeline import Plan, ReviewCall, build_plan
from arena.review import render_review_prompt
from arena.rundir import Classifier, plan_chunks
from arena.scheduler import PriceTable, price_table
from arena.stage import EXPECTED_SHARE, EstimateInputs, StageEstimate
from arena.stages import all_parts
from arena.store import RunLog
from arena.types import Usage, estimate_tokens

__all__ = ["EXPECTED_SHARE", "PlanEstimate", "estimate_plan", "plan_columns", "unpriced_warning"]

# State of a call not done -> the plan column that counts it.
_TO_RUN = {"pending": "new", "stale": "stale", "failed": "failed"}


def plan_columns() -> tuple[str, ...]:
    """The columns of a plan row: per provider and model, calls per kind, states, tokens, cost."""
    return (
        "provider",
        "model",
        "answers",
        "reviews",
        *_stage_columns(),
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


def _stage_columns() -> list[str]:
    """The plan table's columns of the parts that count their calls there (BatchEval)."""
    return [p.report.plan_column for p in all_parts() if p.report and p.report.plan_column]


@dataclass
class PlanEstimate:
    """The plan of a tournament against its output directory, and what it will cost."""

    t: Tournament
    rows: list[dict[str, Any]]
    total: dict[str, Any]
    unpriced: list[str]  # models counted at $0 for want of a price
    from_file: list[str]  # contestants whose answers come from a file (no calls)
    stages: dict[str, StageEstimate] = field(default_factory=dict)  # by plan key

    def to_json(self) -> dict[str, Any]:
        """The documented JSON of `arena plan --json`."""
        return {
            "rows": self.rows,
            "total": self.total,
            "unpriced": self.unpriced,
            "from_file": self.from_file,
            **{
                key: None if est.block is None else est.block.to_json()
                for key, est in self.stages.items()
            },
        }

    def columns(self) -> list[str]:
        """The table's columns: a stage's column only when the stage is on."""
        off = {
            p.report.plan_column
            for p in all_parts()
            if p.report is not None
            and p.report.plan_column is not None
            and self.stages[p.report.plan_key].block is None
        }
        return [c for c in plan_columns() if c not in off]

    def notes(self) -> list[str]:
        """The stages' lines under the table, in registry order."""
        return [line for est in self.stages.values() for line in est.notes]


def unpriced_warning(models: list[str]) -> str:
    """The warning of a plan that counts `models` at $0 for want of a price."""
    return f"no price for {', '.join(models)}: counted as $0 (give one in the YAML's `prices:`)"


def estimate_plan(t: Tournament) -> PlanEstimate:
    """Count and price the plan of `t` against its output directory.

    Raises ConfigError for a section that cannot be used (a template, prices).
    """
    prices = price_table(t)
    plan = build_plan(t)
    done_answers: set[str] = set()
    reviews = plan.reviews
    done = np.zeros(len(reviews), dtype=np.bool_)  # reviews logged with a result
    states: dict[str, str] = {}  # id -> invalid / failed / stale / pending (not done)
    log = RunLog(t.output_dir) if (t.output_dir / "log").is_dir() else None
    if log is not None:
        done_answers, done, states = _logged_states(t, plan, log)
    rows: dict[tuple[str, str], Counter[str]] = {}
    expect = _Expected(t, log)
    by_model: dict[str, Counter[str]] = {}  # rows[(provider, model)], found by model

    def counts(model: str) -> Counter[str]:
        found = by_model.get(model)
        if found is None:
            found = by_model[model] = rows.setdefault((t.provider_of(model), model), Counter())
        return found

    def bump(model: str, what: str, n: int = 1) -> None:
        counts(model)[what] += n

    for a in plan.answers:
        if t.from_file(a.model):
            continue  # answers from a file: no call
        c = counts(a.model)
        c["answers"] += 1
        if a.id in done_answers:
            c["done"] += 1
        else:
            c[_TO_RUN[states.get(a.id, "pending")]] += 1
            est = sum(estimate_tokens(len(turn)) for turn in a.question.turns)
            turns = len(a.question.turns)
            c["est_tokens"] += est + t.model(a.model).max_tokens * turns
            c["est_in"] += est
            c["est_out"] += t.model(a.model).max_tokens * turns
            c["exp_in"] += est
            c["exp_out"] += round(expect.answer_turn(a.model) * turns)
    prompts = _PromptTokens(t)
    # The reviews counted per reviewer from the plan's columns; only those still to
    # run are built as calls (a nightly run's plan is mostly done).
    who = reviews.codes[:, 3]
    judges = len(reviews.reviewers)
    planned = np.bincount(who, minlength=judges)
    per_reviewer = zip(planned, np.bincount(who[done], minlength=judges), strict=True)
    for code, (total, logged) in enumerate(per_reviewer):
        if total:
            c = counts(reviews.reviewers[code])
            c["reviews"] += int(total)
            c["done"] += int(logged)
    for index in np.flatnonzero(~done).tolist():
        r = reviews[index]
        c = counts(r.reviewer)
        c[_TO_RUN[states.get(r.id, "pending")]] += 1
        review_in, review_max = _review_bound(t, r, expect, prompts)
        c["est_tokens"] += review_in + review_max
        c["est_in"] += review_in
        c["est_out"] += review_max
        turns = len(r.question.turns)
        expected_answers = expect.answer(r.model_a, r.question.id, turns) + expect.answer(
            r.model_b, r.question.id, turns
        )
        c["exp_in"] += prompts[r.question.id] + round(expected_answers)
        c["exp_out"] += round(expect.review(r.reviewer))

    def pending_review_costs() -> list[float | None]:
        return [
            _cost(
                prices,
                t.provider_model_id(r.reviewer),
                Counter(est_in=review_in, est_out=review_max),
                free=t.config.providers[t.provider_of(r.reviewer)].type == "sim",
            )
            for r, (review_in, review_max) in _pending_reviews(t, plan, done, expect, prompts)
        ]

    inputs = EstimateInputs(t, plan, log, prices, pending_review_costs)
    estimates: dict[str, StageEstimate] = {}
    for stage in all_parts():
        if stage.report is None:
            continue
        part = stage.report.estimate(inputs)
        estimates[stage.report.plan_key] = part
        column = stage.report.plan_column
        for calls in part.calls:
            assert column is not None, f"stage {stage.name} counts calls in no column"
            bump(calls.model, column, calls.count)
            if calls.state in ("done", "invalid"):  # logged with a result: not asked again
                bump(calls.model, "done", calls.count)
                continue
            bump(calls.model, _TO_RUN[calls.state], calls.count)
            bump(calls.model, "est_tokens", calls.est_in + calls.est_out)
            bump(calls.model, "est_in", calls.est_in)
            bump(calls.model, "est_out", calls.est_out)
            bump(calls.model, "exp_in", calls.exp_in)
            bump(calls.model, "exp_out", calls.exp_out)
    kinds = ["answers", "reviews", *_stage_columns()]
    out_rows: list[dict[str, Any]] = []
    for (provider, model), c in sorted(rows.items()):
        total = sum(c[k] for k in kinds)
        free = t.config.providers[provider].type == "sim"
        model_id = t.provider_model_id(model)
        out_rows.append(
            {
                "provider": provider,
                "model": model,
                **{k: c[k] for k in kinds},
                "calls": total,
                "done": c["done"],
                "pending": total - c["done"],
                "new": c["new"],
                "stale": c["stale"],
                "failed": c["failed"],
                "est_tokens": c["est_tokens"],
                "est_cost_usd": _cost(prices, model_id, c, free=free),
                "exp_cost_usd": _cost(prices, model_id, c, free=free, expected=True),
                # The expected cost at the provider's batch API prices (docs/cost.md).
                "exp_batch_cost_usd": _cost(
                    prices, model_id, c, free=free, expected=True, batch=True
                ),
            }
        )
    # Counts and tokens add up; the costs (None when unpriced) are summed below.
    counted = [k for k in plan_columns()[2:] if not k.endswith("_cost_usd")]
    totals: dict[str, Any] = {k: sum(r[k] for r in out_rows) for k in counted}
    unpriced = [r["model"] for r in out_rows if r["est_cost_usd"] is None]
    totals["est_cost_usd"] = sum(r["est_cost_usd"] or 0.0 for r in out_rows)
    totals["exp_cost_usd"] = sum(r["exp_cost_usd"] or 0.0 for r in out_rows)
    totals["exp_batch_cost_usd"] = sum(r["exp_batch_cost_usd"] or 0.0 for r in out_rows)
    from_file = [n for n in t.contestants if t.from_file(n)]
    return PlanEstimate(t, out_rows, totals, unpriced, from_file, estimates)


def _logged_states(
    t: Tournament, plan: Plan, log: RunLog
) -> tuple[set[str], NDArray[np.bool_], dict[str, str]]:
    """The plan against the log, a slice at a time (`plan_chunks`): the answers logged
    ok, which reviews are logged with a result (ok or invalid, in the plan's order),
    and the state of every call not done. No set of a million logged ids is made."""
    by_state = Classifier(log)
    answers: set[str] = set()
    done = np.zeros(len(plan.reviews), dtype=np.bool_)
    states: dict[str, str] = {}
    at = 0
    for chunk in plan_chunks(t, plan):
        found = by_state(chunk)
        state = found["state"]
        if chunk.height and chunk["stage"][0] == "reviews":  # the reviews' next slice
            done[at : at + chunk.height] = state.is_in(["done", "invalid"]).to_numpy()
            at += chunk.height
        else:  # the answers
            answers.update(found.filter(state == "done")["id"].to_list())
        rest = found.filter(state != "done")
        states.update(zip(rest["id"].to_list(), rest["state"].to_list(), strict=True))
    return answers, done, states


class _PromptTokens(dict[str, int]):
    """The review prompt with empty answers (template, question, turn labels), per question."""

    def __init__(self, t: Tournament) -> None:
        super().__init__(
            (
                q.id,
                estimate_tokens(
                    len(
                        render_review_prompt(
                            t.review_template, q, [""] * len(q.turns), [""] * len(q.turns)
                        )
                    )
                ),
            )
            for q in t.questions
        )


def _review_bound(
    t: Tournament, r: ReviewCall, expect: _Expected, prompts: _PromptTokens
) -> tuple[int, int]:
    """Upper-bound input and output tokens of a review: both answers at most max_tokens a turn."""
    turns = len(r.question.turns)
    answers_tokens = expect.answer_bound(r.model_a, r.question.id, turns)
    answers_tokens += expect.answer_bound(r.model_b, r.question.id, turns)
    return prompts[r.question.id] + answers_tokens, t.review_settings(r.reviewer)[1]


def _pending_reviews(
    t: Tournament,
    plan: Plan,
    done: NDArray[np.bool_],
    expect: _Expected,
    prompts: _PromptTokens,
) -> Iterator[tuple[ReviewCall, tuple[int, int]]]:
    for index in np.flatnonzero(~done).tolist():
        r = plan.reviews[index]
        yield r, _review_bound(t, r, expect, prompts)


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
        answers = log.read("answers", columns=["status", "model", "tokens_out", "answer_turns"])
        if answers.height:
            ok = answers.filter(pl.col("status") == "ok")
            per_model = ok.group_by("model").agg(
                pl.col("tokens_out").sum().alias("tokens"),
                pl.col("answer_turns").list.len().sum().alias("turns"),
            )
            for model, tokens, turns in per_model.iter_rows():
                if turns:
                    self._answer_turn[model] = tokens / turns
        reviews = log.read("reviews", columns=["status", "reviewer", "tokens_out"])
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
