"""The BatchEval stage: rounds of batch prompts through the scheduler into the log.

Each (criterion, scorer) pair runs its rounds in order; the batches of a round
run concurrently. A round's composition depends only on the seed and on the
scores logged for earlier rounds, and a batch's id on its round, its samples in
prompt order and everything its prompt depends on, so a resumed run rebuilds
the same batches and skips those already logged. A batch whose rows are not
all logged (killed mid-write) is asked again. Failed batches are retried by
the next run; when that changes a later round's composition, that round gets
new batch ids and the rows of the old ones are ignored.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from arena.batcheval._aggregate import mean_and_spread, running_means
from arena.batcheval._compose import compose_round
from arena.batcheval._parse import parse_scores
from arena.batcheval._prompt import render_prompt
from arena.batcheval._samples import Sample
from arena.batcheval._schema import TABLE
from arena.config import BatchEvalConfig, CriterionConfig
from arena.scheduler import CallOutcome, Scheduler
from arena.store import LogWriter
from arena.types import CallStatus, GenerateRequest, Message, stable_id

__all__ = ["Batch", "BatchEvalStage", "SampleScore", "Scorer", "StageSummary"]

ProgressFn = Callable[[str, int, int], None]
_DONE = (CallStatus.OK.value, CallStatus.INVALID.value)


@dataclass(frozen=True)
class Scorer:
    """A model that scores: its config name, provider entry, provider-side id, fingerprint."""

    name: str
    provider: str
    model_id: str
    fingerprint: Mapping[str, Any]


@dataclass(frozen=True)
class Batch:
    """One prompt: some samples scored together on one criterion by one scorer."""

    id: str
    round: int
    index: int
    criterion: CriterionConfig
    scorer: Scorer
    samples: tuple[Sample, ...]

    def row_id(self, sample: Sample) -> str:
        """The log row id of one sample's score in this batch."""
        return stable_id("batcheval", {"batch": self.id, "sample": sample.id})


@dataclass(frozen=True)
class SampleScore:
    """A sample's final score on one criterion from one scorer: mean over the rounds."""

    sample_id: str
    criterion: str
    scorer: str
    score: float | None
    spread: float | None  # sample standard deviation over the rounds (0 with one score)
    rounds_scored: int
    rounds_missing: int
    round_scores: tuple[float | None, ...]
    model: str | None = None
    question_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """A plain dict for JSON output."""
        return {
            "id": self.sample_id,
            "criterion": self.criterion,
            "scorer": self.scorer,
            "score": self.score,
            "spread": self.spread,
            "rounds_scored": self.rounds_scored,
            "rounds_missing": self.rounds_missing,
            "round_scores": list(self.round_scores),
            "model": self.model,
            "question_id": self.question_id,
        }


@dataclass
class StageSummary:
    """What one run of the stage did, counted in batch calls."""

    planned: int = 0
    skipped: int = 0
    completed: int = 0  # every sample of the batch got a score
    invalid: int = 0  # the call succeeded but some scores could not be read
    failed: int = 0
    pending: int = 0
    deferred: int = 0
    reasked: int = 0
    unscored: int = 0  # (sample, criterion, scorer, round) scores missing in logged batches
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    wall_seconds: float = 0.0
    errors: list[str] = field(default_factory=list)
    scores: list[SampleScore] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """The call counts a run summary adds up across stages."""
        return {
            k: getattr(self, k)
            for k in ("planned", "skipped", "completed", "failed", "invalid", "pending", "deferred")
        }


def batch_id(
    round_index: int,
    criterion: CriterionConfig,
    scorer: Scorer,
    samples: Sequence[Sample],
    template: str,
    cfg: BatchEvalConfig,
) -> str:
    """Id of a batch call: changes when anything its prompt or its answer depends on does."""
    return stable_id(
        "batch",
        {
            "round": round_index,
            "criterion": criterion.model_dump(),
            "scorer": dict(scorer.fingerprint),
            "samples": [[s.id, s.fingerprint()] for s in samples],
            "template": template,
            "temperature": cfg.temperature,
            "max_tokens": cfg.max_tokens,
        },
    )


def _split(total: int, n: int) -> list[int]:
    """`total` split in `n` integer shares that sum to it exactly."""
    q, r = divmod(total, n)
    return [q + (1 if i < r else 0) for i in range(n)]


class BatchEvalStage:
    """Runs every pending batch of a BatchEval configuration through the scheduler."""

    def __init__(
        self,
        cfg: BatchEvalConfig,
        template: str,
        samples: Sequence[Sample],
        scorers: Sequence[Scorer],
        scheduler: Scheduler,
        writer: LogWriter,
        logged: pl.DataFrame,
        *,
        seed: object,
        run_id: str,
        progress: ProgressFn | None = None,
    ) -> None:
        self.cfg = cfg
        self.template = template
        self.samples = {s.id: s for s in samples}
        self.order = [s.id for s in samples]
        self.scorers = list(scorers)
        self.scheduler = scheduler
        self.writer = writer
        self.seed = seed
        self.run_id = run_id
        self.progress = progress
        done = logged.filter(pl.col("status").is_in(_DONE)) if logged.height else logged
        self.logged: dict[str, float | None] = (
            dict(zip(done["id"].to_list(), done["score"].to_list(), strict=True))
            if done.height
            else {}
        )
        self.summary = StageSummary()
        self.counts: Counter[str] = Counter()
        self.history: dict[tuple[str, str], dict[str, list[float | None]]] = {}

    def batches_per_round(self) -> int:
        """How many batches one round of one (criterion, scorer) pair has."""
        return math.ceil(len(self.samples) / self.cfg.batch_size)

    async def run(self) -> StageSummary:
        """Run every round of every (criterion, scorer) pair; return what was done."""
        start = time.monotonic()
        pairs = [(c, s) for c in self.cfg.criteria for s in self.scorers]
        self.summary.planned = self.cfg.rounds * self.batches_per_round() * len(pairs)
        await asyncio.gather(*(self._pair(c, s) for c, s in pairs))
        s = self.summary
        for key in ("skipped", "completed", "invalid", "failed", "deferred", "reasked"):
            setattr(s, key, self.counts[key])
        s.pending = s.planned - s.skipped - s.completed - s.invalid - s.failed
        s.scores = self._final_scores()
        s.unscored = sum(x.rounds_missing for x in s.scores)
        s.wall_seconds = time.monotonic() - start
        return s

    def _final_scores(self) -> list[SampleScore]:
        out: list[SampleScore] = []
        for sid in self.order:
            sample = self.samples[sid]
            for c in self.cfg.criteria:
                for scorer in self.scorers:
                    rounds = tuple(self.history.get((c.name, scorer.name), {}).get(sid, []))
                    mean, spread = mean_and_spread(rounds)
                    scored = sum(1 for r in rounds if r is not None)
                    out.append(
                        SampleScore(
                            sample_id=sid,
                            criterion=c.name,
                            scorer=scorer.name,
                            score=mean,
                            spread=spread,
                            rounds_scored=scored,
                            rounds_missing=len(rounds) - scored,
                            round_scores=rounds,
                            model=sample.model,
                            question_id=sample.question_id,
                        )
                    )
        return out

    def _count(self, what: str) -> None:
        self.counts[what] += 1
        if self.progress is not None:
            done = sum(v for k, v in self.counts.items() if k not in ("deferred", "reasked"))
            self.progress("batcheval", done, self.summary.planned)

    async def _pair(self, criterion: CriterionConfig, scorer: Scorer) -> None:
        history: dict[str, list[float | None]] = {sid: [] for sid in self.order}
        self.history[(criterion.name, scorer.name)] = history
        for r in range(1, self.cfg.rounds + 1):
            composition = compose_round(
                self.order,
                r,
                batch_size=self.cfg.batch_size,
                strategy=self.cfg.strategy,
                means=running_means(history),
                seed=(self.seed, criterion.name, scorer.name),
            )
            batches = []
            for i, ids in enumerate(composition):
                samples = tuple(self.samples[sid] for sid in ids)
                bid = batch_id(r, criterion, scorer, samples, self.template, self.cfg)
                batches.append(Batch(bid, r, i, criterion, scorer, samples))
            results = await asyncio.gather(*(self._batch(b) for b in batches))
            if any(res is None for res in results):
                return  # pending: later rounds are built from this one's scores
            for batch, res in zip(batches, results, strict=True):
                assert res is not None
                for sample, score in zip(batch.samples, res, strict=True):
                    history[sample.id].append(score)

    async def _batch(self, batch: Batch) -> list[float | None] | None:
        row_ids = [batch.row_id(s) for s in batch.samples]
        if all(rid in self.logged for rid in row_ids):
            self._count("skipped")
            return [self.logged[rid] for rid in row_ids]
        crit = batch.criterion
        prompt = render_prompt(self.template, crit, batch.samples)
        request = GenerateRequest(
            model=batch.scorer.model_id,
            messages=(Message("user", prompt),),
            temperature=self.cfg.temperature,
            max_tokens=self.cfg.max_tokens,
        )
        n = len(batch.samples)
        first = await self.scheduler.call(batch.scorer.provider, request)
        if not first.final:
            self._unlogged(first)
            return None
        outcomes = [first]
        if not first.ok or first.result is None:
            await self._write(batch, outcomes, [None] * n, CallStatus.FAILED, first.error)
            self._count("failed")
            return [None] * n
        scores = parse_scores(first.result.text, n, crit.scale.low, crit.scale.high)
        error: str | None = None
        if any(s is None for s in scores):
            # Asked once more; what is still missing stays unscored for this round.
            again = await self.scheduler.call(batch.scorer.provider, request)
            if not again.final:
                self._unlogged(again)
                return None
            outcomes.append(again)
            self._count("reasked")
            if again.ok and again.result is not None:
                retry = parse_scores(again.result.text, n, crit.scale.low, crit.scale.high)
                scores = [a if a is not None else b for a, b in zip(scores, retry, strict=True)]
            else:
                error = f"re-ask failed: {again.error}"
        status = CallStatus.OK if all(s is not None for s in scores) else CallStatus.INVALID
        await self._write(batch, outcomes, scores, status, error)
        self._count("completed" if status is CallStatus.OK else "invalid")
        return scores

    def _unlogged(self, outcome: CallOutcome) -> None:
        # stopped / deferred / budget: nothing is logged, the batch stays pending.
        if outcome.status == "deferred":
            self.counts["deferred"] += 1
            if outcome.error and outcome.error not in self.summary.errors:
                self.summary.errors.append(outcome.error)

    async def _write(
        self,
        batch: Batch,
        outcomes: list[CallOutcome],
        scores: list[float | None],
        status: CallStatus,
        error: str | None,
    ) -> None:
        n = len(batch.samples)
        usage = [o.result.usage for o in outcomes if o.result is not None]
        tokens_in = sum(u.input_tokens for u in usage)
        tokens_out = sum(u.output_tokens for u in usage)
        cost = sum(o.cost_usd for o in outcomes)
        self.summary.tokens_in += tokens_in
        self.summary.tokens_out += tokens_out
        self.summary.cost_usd += cost
        first, last = outcomes[0], outcomes[-1]
        texts = [o.result.text if o.result is not None else None for o in outcomes]
        rows = []
        for k, (sample, score, t_in, t_out) in enumerate(
            zip(batch.samples, scores, _split(tokens_in, n), _split(tokens_out, n), strict=True),
            1,
        ):
            if status is CallStatus.FAILED:
                row_status, row_error = CallStatus.FAILED, first.error
            elif score is None:
                row_status = CallStatus.INVALID
                row_error = error or f"no valid score for Sample{k}"
            else:
                row_status, row_error = CallStatus.OK, None
            rows.append(
                {
                    "id": batch.row_id(sample),
                    "status": row_status.value,
                    "error": row_error,
                    "provider": batch.scorer.provider,
                    "tokens_in": t_in,
                    "tokens_out": t_out,
                    "cost_usd": cost / n,
                    "latency_s": sum(o.latency_s for o in outcomes),
                    "attempts": sum(o.attempts for o in outcomes),
                    "started_at": first.started_at,
                    "finished_at": last.finished_at,
                    "run_id": self.run_id,
                    "round": batch.round,
                    "batch_id": batch.id,
                    "batch_index": batch.index,
                    "position": k,
                    "sample_id": sample.id,
                    "criterion": batch.criterion.name,
                    "scorer": batch.scorer.name,
                    "score": score,
                    "scale_low": batch.criterion.scale.low,
                    "scale_high": batch.criterion.scale.high,
                    "text": texts[0],
                    "reask_text": texts[1] if len(texts) > 1 else None,
                    "reasked": len(outcomes) > 1,
                    "model": sample.model,
                    "question_id": sample.question_id,
                }
            )
        await asyncio.gather(*(self.writer.write(TABLE, row) for row in rows))
