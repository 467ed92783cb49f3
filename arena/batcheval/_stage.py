"""BatchEval as a stage of a tournament: what `arena.stages` asks of it."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from arena.batcheval._schema import SCORES_FILE, TABLE
from arena.stage import (
    EXPECTED_SHARE,
    BoardInputs,
    EstimateInputs,
    ModelCalls,
    Stage,
    StageBoard,
    StageCommand,
    StageEstimate,
    StageReport,
    StageRun,
    StageStatus,
    StageTable,
    StatusInputs,
)
from arena.types import estimate_tokens

if TYPE_CHECKING:
    from arena.batcheval._tournament import TournamentBatchEvalPlanner
    from arena.config import BatchEvalConfig, ExamplePool, Tournament
    from arena.pipeline import AllPairsPlanner, AnswerCall

# The stage's modules load in the hook that uses them: the leaderboard asks
# this stage only for a run's scores, `arena status` for its batch states.

__all__ = [
    "BATCHEVAL_STAGE",
    "BatchEvalBoard",
    "BatchEvalCalls",
    "BatchEvalPlanStatus",
    "BatchEvalRun",
    "batch_tokens",
]


class BatchEvalRun(StageRun):
    """In `arena run`: the BatchEval planner when the tournament has a `batcheval:` section."""

    def preflight(self, t: Tournament) -> list[str]:
        from arena.batcheval._tournament import batcheval_preflight

        return batcheval_preflight(t)

    def planner(self, t: Tournament, base: AllPairsPlanner) -> TournamentBatchEvalPlanner | None:
        from arena.batcheval._tournament import batcheval_planner

        return batcheval_planner(t, base)


@dataclass(frozen=True)
class BatchEvalCalls:
    """The batch calls of a plan: rounds x batches per round x criteria x scorers."""

    calls: int
    rounds: int
    batches_per_round: int
    criteria: int
    scorers: int

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def note(self) -> str:
        """The line under `arena plan`."""
        return (
            f"batcheval: {self.rounds} rounds x {self.batches_per_round} batches "
            f"x {self.criteria} criteria x {self.scorers} scorers = "
            f"{self.calls} calls; est_tokens counts each twice (a batch with a missing "
            "score is asked once more)."
        )


class BatchEvalPlanStatus(StageReport):
    """Its batch calls, counted in `arena plan` and `arena status` like answers and reviews
    (column and stage `batcheval`)."""

    plan_key = "batcheval"
    plan_column = "batcheval"

    def estimate(self, inputs: EstimateInputs) -> StageEstimate:
        t, cfg = inputs.t, inputs.t.config.batcheval
        if cfg is None:
            return StageEstimate()
        from arena.batcheval._prompt import load_template
        from arena.batcheval._states import batcheval_states

        template = load_template(cfg, t.path, examples=t.batcheval_examples is not None)
        answers = inputs.plan.answers
        batches = batcheval_states(t, [(a.id, a.question, a.model) for a in answers], inputs.log)
        tokens = batch_tokens(t, cfg, template, answers, t.batcheval_examples)
        calls: list[ModelCalls] = []
        for scorer, criterion, state in batches.select("scorer", "criterion", "state").iter_rows():
            if state in ("done", "invalid"):  # logged with a result: not asked again
                calls.append(ModelCalls(scorer, state))
                continue
            est_in, est_out = tokens[criterion]
            # Expected: asked once (no re-ask), writing a share of max_tokens.
            calls.append(
                ModelCalls(
                    scorer,
                    state,
                    est_in=est_in,
                    est_out=est_out,
                    exp_in=est_in // 2,
                    exp_out=round(cfg.max_tokens * EXPECTED_SHARE),
                )
            )
        block = BatchEvalCalls(
            calls=batches.height,
            rounds=cfg.rounds,
            batches_per_round=batches.filter(pl.col("round") == 1)["batch_index"].n_unique(),
            criteria=len(cfg.criteria),
            scorers=len(cfg.scorers),
        )
        return StageEstimate(block=block, calls=calls, notes=[block.note()])

    def status(self, inputs: StatusInputs) -> StageStatus:
        t, plan = inputs.t, inputs.plan
        if t is None or plan is None or t.config.batcheval is None:
            return StageStatus()  # not planned: its table is one of the other tables
        from arena.batcheval._states import batches_outside, batcheval_states

        answers = [(a.id, a.question, a.model) for a in plan.answers]
        states = batcheval_states(t, answers, inputs.log)
        return StageStatus(
            calls=states.select("provider", "state"), outside=batches_outside(states, inputs.log)
        )


class BatchEvalBoard(StageBoard):
    """On the leaderboard: the run's BatchEval scores, correlated with the BT ratings."""

    key = "batcheval"

    def prepare(self, paths: Sequence[Path], options: Mapping[str, Any]) -> Any:
        """Human BatchEval scores of the run's answers (`--human-scores`), checked early."""
        path = options.get("human_scores")
        if path is None:
            return None
        from arena.batcheval._summary import run_human_scores

        return run_human_scores(list(paths), path)

    def block(self, inputs: BoardInputs) -> dict[str, Any] | None:
        """The run's BatchEval scores of the board's contestants, correlated with BT ratings."""
        if not any((Path(d) / SCORES_FILE).is_file() for d in inputs.directories):
            return None  # no scores (as batcheval_summary finds): the rest stays unloaded
        from arena.batcheval._summary import batcheval_summary

        block = batcheval_summary(
            inputs.directories, inputs.ratings, seed=inputs.seed, human=inputs.prepared
        )
        if block is None:
            return None
        # Models left out of the leaderboard (removed since the scores were made) are left out.
        rank = {name: k for k, name in enumerate(inputs.order)}
        block["rows"] = sorted(
            (r for r in block["rows"] if r["model"] in rank),
            key=lambda r: (rank[r["model"]], r["criterion"]),
        )
        block["against"] = "bt"
        return block if block["rows"] else None


def batch_tokens(
    t: Tournament,
    cfg: BatchEvalConfig,
    template: str,
    answers: Sequence[AnswerCall],
    pool: ExamplePool | None = None,
) -> dict[str, tuple[int, int]]:
    """Upper-bound (input, output) tokens of one batch call per criterion, its re-ask included.

    A batch holds at most ceil(n / batches) samples, each at most the largest
    answer: its question and the contestant's max_tokens per turn; with
    `examples:`, the k longest items of the criterion.
    """
    from arena.batcheval._prompt import render_prompt
    from arena.batcheval._tournament import tournament_samples
    from arena.examples import render_batch_examples

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
    k = 0 if pool is None else pool.config.k
    out: dict[str, tuple[int, int]] = {}
    for c in cfg.criteria:
        items = [] if pool is None else [e for e in pool.scored if e.criterion == c.name]
        longest = sorted(items, key=lambda e: -(len(e.text) + len(e.context)))[:k]
        examples = len(render_batch_examples(longest, c.scale.low, c.scale.high))
        prompt = estimate_tokens(len(render_prompt(template, c, [])) + examples)
        out[c.name] = (2 * (prompt + size * sample), 2 * cfg.max_tokens)
    return out


BATCHEVAL_STAGE = Stage(
    name="batcheval",
    tables=(
        StageTable(
            TABLE, "arena.batcheval._schema:TABLE_SCHEMA", model_column="scorer", on_answers=True
        ),
    ),
    run=BatchEvalRun(),
    report=BatchEvalPlanStatus(),
    board=BatchEvalBoard(),
    command=StageCommand(
        "batcheval",
        "arena.batcheval._cli:batcheval_cmd",
        "Score every sample in SAMPLES.jsonl (`id`, `text`, optional `context`) with BatchEval.",
    ),
)
