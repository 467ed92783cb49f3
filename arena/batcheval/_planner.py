"""The BatchEval stage: a planner of rounds of batch prompts.

Each (criterion, scorer) pair runs its rounds in order; the batches of a round
are handed to the runner together and run concurrently, and the pair's next
round is composed once every batch of the round has a result. A round's
composition depends only on the seed and on the scores logged for earlier
rounds, and a batch's id on its round, its samples in prompt order and
everything its prompt depends on, so a resumed run rebuilds the same batches
and skips those already logged. A batch whose rows are not all logged (killed
mid-write) is asked again. Failed batches are retried by the next run; when
that changes a later round's composition, that round gets new batch ids and
the rows of the old ones are ignored. A batch stopped before its re-ask ran
logs its first reply (rows with status `partial`); the next run asks only the
re-ask.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from arena.batcheval._aggregate import mean_and_spread
from arena.batcheval._compose import compose_round, ordering_scores
from arena.batcheval._parse import one_generation, parse_scores
from arena.batcheval._prompt import render_prompt
from arena.batcheval._samples import Sample
from arena.batcheval._schema import TABLE
from arena.config import BatchEvalConfig, CriterionConfig, ExamplePool, ScoredExample
from arena.examples import choose_batch_examples, render_batch_examples
from arena.runner import (
    Call,
    CallResult,
    Finished,
    Idle,
    Planner,
    Priority,
    RunContext,
    StageStats,
)
from arena.scheduler import CallOutcome
from arena.types import CallStatus, GenerateRequest, Message, stable_id

__all__ = [
    "Batch",
    "BatchEvalPlanner",
    "SampleScore",
    "Scorer",
    "StageSummary",
    "make_batch",
]

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
    # The `examples:` items its prompt shows (none without the section).
    examples: tuple[ScoredExample, ...] = ()

    def prompt(self, template: str) -> str:
        """The batch's prompt."""
        scale = self.criterion.scale
        shown = render_batch_examples(self.examples, scale.low, scale.high)
        return render_prompt(template, self.criterion, self.samples, shown)

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
    errors: list[dict[str, Any]] = field(default_factory=list)  # see RunStats.errors
    scores: list[SampleScore] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        """The call counts a run summary adds up across stages."""
        return {
            "planned": self.planned,
            "skipped": self.skipped,
            "completed": self.completed,
            "failed": self.failed,
            "invalid": self.invalid,
            "pending": self.pending,
            "deferred": self.deferred,
        }


def batch_id(
    round_index: int,
    criterion: CriterionConfig,
    scorer: Scorer,
    samples: Sequence[Sample],
    template: str,
    cfg: BatchEvalConfig,
    examples: tuple[Sequence[str], str] | None = None,
) -> str:
    """Id of a batch call: changes when anything its prompt or its answer depends on does.

    `examples`: the ids of the `examples:` items the prompt shows and the hash
    of the pool's scored items (absent without the section: ids of earlier runs).
    """
    parts: dict[str, Any] = {
        "round": round_index,
        "criterion": criterion.model_dump(),
        "scorer": dict(scorer.fingerprint),
        "samples": [[s.id, s.fingerprint()] for s in samples],
        "template": template,
        "temperature": cfg.temperature,
        "max_tokens": cfg.max_tokens,
    }
    if examples is not None:
        parts["examples"] = [list(examples[0]), examples[1]]
    return stable_id("batch", parts)


def make_batch(
    round_index: int,
    index: int,
    criterion: CriterionConfig,
    scorer: Scorer,
    samples: tuple[Sample, ...],
    template: str,
    cfg: BatchEvalConfig,
    pool: ExamplePool | None = None,
) -> Batch:
    """One batch of a round, with the examples its prompt shows and its id."""
    shown: tuple[ScoredExample, ...] = ()
    examples: tuple[Sequence[str], str] | None = None
    if pool is not None:
        refs = [(s.question_id, s.context, s.text) for s in samples]
        shown = choose_batch_examples(pool, criterion.name, refs)
        examples = ([e.id for e in shown], pool.scored_digest)
    bid = batch_id(round_index, criterion, scorer, samples, template, cfg, examples)
    return Batch(bid, round_index, index, criterion, scorer, samples, shown)


def _split(total: int, n: int) -> list[int]:
    """`total` split in `n` integer shares that sum to it exactly."""
    q, r = divmod(total, n)
    return [q + (1 if i < r else 0) for i in range(n)]


@dataclass(eq=False)
class _Pair:
    """One (criterion, scorer) pair: its score history and the round under way."""

    criterion: CriterionConfig
    scorer: Scorer
    history: dict[str, list[float | None]]
    round: int = 0
    batches: list[Batch] = field(default_factory=list)
    results: dict[str, list[float | None]] = field(default_factory=dict)
    open: set[str] = field(default_factory=set)  # ids of batches without a result yet
    stalled: bool = False  # a batch of the round stayed pending
    ended: bool = False


class BatchEvalPlanner(Planner):
    """Plans every batch of a BatchEval configuration, round after round.

    The samples are given at construction or later with `begin` (the
    tournament stage begins once every answer has ended); until then the
    planner waits.
    """

    name = "batcheval"

    def __init__(
        self,
        cfg: BatchEvalConfig,
        template: str,
        scorers: Sequence[Scorer],
        *,
        seed: object,
        samples: Sequence[Sample] | None = None,
        logged: pl.DataFrame | None = None,
        examples: ExamplePool | None = None,
    ) -> None:
        self.cfg = cfg
        self.examples = examples
        self.template = template
        self.scorers = list(scorers)
        self.seed = seed
        self.samples: dict[str, Sample] = {}
        self.order: list[str] = []
        self._initial = samples
        self._logged_frame = logged
        self.logged: dict[str, float | None] = {}
        # Rows of batches stopped before their re-ask: row id -> (score, first reply).
        self.partial: dict[str, tuple[float | None, str | None]] = {}
        self.pairs: list[_Pair] = []
        self.begun = False
        self.reasked = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.cost_usd = 0.0
        self._calls: deque[Call] = deque()
        self._mine: dict[str, tuple[_Pair, Batch]] = {}
        self._ctx: RunContext | None = None

    def batches_per_round(self) -> int:
        """How many batches one round of one (criterion, scorer) pair has."""
        return math.ceil(len(self.samples) / self.cfg.batch_size)

    # -- planner hooks -----------------------------------------------------------

    def start(self, ctx: RunContext) -> None:
        self._ctx = ctx
        ctx.stats.full_report.add(self.name)
        ctx.stats.stage(self.name)
        frame = self._logged_frame
        if frame is None:
            frame = ctx.log.read(TABLE, columns=["status", "score"])
        if frame.height:
            done = frame.filter(pl.col("status").is_in(_DONE))
            self.logged = dict(zip(done["id"].to_list(), done["score"].to_list(), strict=True))
            if frame.filter(pl.col("status") == CallStatus.PARTIAL.value).height:
                texts = ctx.log.read(TABLE, columns=["status", "score", "text"])
                part = texts.filter(pl.col("status") == CallStatus.PARTIAL.value)
                self.partial = {
                    rid: (score, text)
                    for rid, score, text in part.select("id", "score", "text").iter_rows()
                }
        self._logged_frame = None
        if self._initial is not None:
            self.begin(self._initial)

    def begin(self, samples: Sequence[Sample]) -> None:
        """Start round 1 of every (criterion, scorer) pair on these samples."""
        assert self._ctx is not None, "begin after start"
        self.begun = True
        self.samples = {s.id: s for s in samples}
        self.order = [s.id for s in samples]
        self.pairs = [
            _Pair(c, s, {sid: [] for sid in self.order})
            for c in self.cfg.criteria
            for s in self.scorers
        ]
        self._ctx.stats.plan(
            self.name, self.cfg.rounds * self.batches_per_round() * len(self.pairs)
        )
        for pair in self.pairs:
            self._next_round(pair)

    def next_call(self) -> Call | Idle:
        if self._calls:
            return self._calls.popleft()
        if not self.begun or any(not p.ended for p in self.pairs):
            return Idle.LATER
        return Idle.DONE

    def on_result(self, result: CallResult) -> None:
        mine = self._mine.pop(result.call.id, None)
        if mine is None:
            return
        pair, batch = mine
        if result.status == "pending":
            pair.stalled = True
        else:
            pair.results[batch.id] = [row["score"] for row in result.rows]
        pair.open.discard(batch.id)
        if not pair.open:
            self._round_done(pair)

    def summary(self) -> StageSummary:
        """What this run did, with the final scores of every sample."""
        assert self._ctx is not None
        counts: StageStats = self._ctx.stats.stage(self.name)
        scores = self._final_scores()
        return StageSummary(
            planned=counts.planned,
            skipped=counts.skipped,
            completed=counts.completed,
            invalid=counts.invalid,
            failed=counts.failed,
            pending=counts.pending,
            deferred=counts.deferred,
            reasked=self.reasked,
            unscored=sum(x.rounds_missing for x in scores),
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            cost_usd=self.cost_usd,
            errors=self._ctx.stats.errors,
            scores=scores,
        )

    # -- rounds ------------------------------------------------------------------

    def _round_done(self, pair: _Pair) -> None:
        if pair.stalled:
            pair.ended = True  # pending: later rounds are built from this one's scores
            return
        self._record_round(pair)
        self._next_round(pair)

    def _next_round(self, pair: _Pair) -> None:
        """Compose the pair's next round; queue its batches not yet logged."""
        assert self._ctx is not None
        while True:
            pair.round += 1
            if pair.round > self.cfg.rounds:
                pair.ended = True
                return
            composition = compose_round(
                self.order,
                pair.round,
                batch_size=self.cfg.batch_size,
                strategy=self.cfg.strategy,
                means=ordering_scores(pair.history, self.cfg.composition),
                composition=self.cfg.composition,
                seed=(self.seed, pair.criterion.name, pair.scorer.name),
            )
            pair.batches, pair.results = [], {}
            for i, ids in enumerate(composition):
                samples = tuple(self.samples[sid] for sid in ids)
                batch = make_batch(
                    pair.round,
                    i,
                    pair.criterion,
                    pair.scorer,
                    samples,
                    self.template,
                    self.cfg,
                    self.examples,
                )
                bid = batch.id
                pair.batches.append(batch)
                row_ids = [batch.row_id(s) for s in samples]
                if all(rid in self.logged for rid in row_ids):
                    self._ctx.stats.skip(self.name)
                    pair.results[bid] = [self.logged[rid] for rid in row_ids]
                else:
                    pair.open.add(bid)
                    self._mine[bid] = (pair, batch)
                    first = [self.partial.get(rid) for rid in row_ids]
                    if all(f is not None for f in first):  # stopped before its re-ask
                        self._calls.append(self._reask_call(batch, [f for f in first if f]))
                    else:
                        self._calls.append(self._batch_call(batch))
            if pair.open:
                return
            self._record_round(pair)

    def _record_round(self, pair: _Pair) -> None:
        for batch in pair.batches:
            for sample, score in zip(batch.samples, pair.results[batch.id], strict=True):
                pair.history[sample.id].append(score)

    def _final_scores(self) -> list[SampleScore]:
        out: list[SampleScore] = []
        history = {(p.criterion.name, p.scorer.name): p.history for p in self.pairs}
        for sid in self.order:
            sample = self.samples[sid]
            for c in self.cfg.criteria:
                for scorer in self.scorers:
                    rounds = tuple(history.get((c.name, scorer.name), {}).get(sid, []))
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

    # -- one batch ---------------------------------------------------------------

    def _batch_call(self, batch: Batch) -> Call:
        crit = batch.criterion
        n = len(batch.samples)

        def request() -> GenerateRequest:
            return GenerateRequest(
                model=batch.scorer.model_id,
                messages=(Message("user", batch.prompt(self.template)),),
                temperature=self.cfg.temperature,
                max_tokens=self.cfg.max_tokens,
            )

        def parse(outcome: CallOutcome) -> list[float | None]:
            assert outcome.result is not None
            return parse_scores(outcome.result.text, n, crit.scale.low, crit.scale.high)

        def follow(outcomes: Sequence[CallOutcome]) -> GenerateRequest | None:
            # The whole batch is asked once more when scores are missing; the
            # batch then keeps the scores of the reply with more readable ones.
            if len(outcomes) == 1 and any(s is None for s in parse(outcomes[0])):
                return request()
            return None

        def finish(outcomes: Sequence[CallOutcome], run_id: str) -> Finished:
            first = outcomes[0]
            if not first.ok or first.result is None:
                return self._rows(batch, outcomes, [None] * n, CallStatus.FAILED, None, run_id)
            scores = parse(first)
            error: str | None = None
            if len(outcomes) > 1:
                self.reasked += 1
                again = outcomes[1]
                if again.ok and again.result is not None:
                    # One generation's scores, never a mix of the two replies.
                    scores = one_generation(scores, parse(again))
                else:
                    error = f"re-ask failed: {again.error}"
            status = CallStatus.OK if all(s is not None for s in scores) else CallStatus.INVALID
            return self._rows(batch, outcomes, scores, status, error, run_id)

        def stopped(outcomes: Sequence[CallOutcome], run_id: str) -> Finished:
            # The re-ask did not run: the first reply is kept for the next run.
            return self._rows(
                batch, outcomes[:1], parse(outcomes[0]), CallStatus.PARTIAL, None, run_id
            )

        return Call(
            id=batch.id,
            table=TABLE,
            stage=self.name,
            provider=batch.scorer.provider,
            request=request,
            finish=finish,
            follow=follow,
            priority=Priority.BACKGROUND,
            stopped=stopped,
        )

    def _reask_call(self, batch: Batch, first: Sequence[tuple[float | None, str | None]]) -> Call:
        """The re-ask of a batch whose first reply a stopped run logged (`partial` rows)."""
        crit = batch.criterion
        n = len(batch.samples)
        first_scores = [score for score, _ in first]
        first_text = first[0][1]

        def request() -> GenerateRequest:
            return GenerateRequest(
                model=batch.scorer.model_id,
                messages=(Message("user", batch.prompt(self.template)),),
                temperature=self.cfg.temperature,
                max_tokens=self.cfg.max_tokens,
            )

        def finish(outcomes: Sequence[CallOutcome], run_id: str) -> Finished:
            again = outcomes[0]
            self.reasked += 1
            error: str | None = None
            if again.ok and again.result is not None:
                scores = one_generation(
                    first_scores,
                    parse_scores(again.result.text, n, crit.scale.low, crit.scale.high),
                )
                reply: str | None = again.result.text
            else:
                scores, reply = list(first_scores), None
                error = f"re-ask failed: {again.error}"
            status = CallStatus.OK if all(s is not None for s in scores) else CallStatus.INVALID
            texts = [first_text, reply]
            return self._rows(batch, outcomes, scores, status, error, run_id, texts=texts)

        return Call(
            id=batch.id,
            table=TABLE,
            stage=self.name,
            provider=batch.scorer.provider,
            request=request,
            finish=finish,
            priority=Priority.BACKGROUND,
        )

    def _rows(
        self,
        batch: Batch,
        outcomes: Sequence[CallOutcome],
        scores: list[float | None],
        status: CallStatus,
        error: str | None,
        run_id: str,
        *,
        texts: Sequence[str | None] | None = None,
    ) -> Finished:
        """One row per sample; `texts`: the replies (default: the outcomes' texts)."""
        n = len(batch.samples)
        usage = [o.result.usage for o in outcomes if o.result is not None]
        tokens_in = sum(u.input_tokens for u in usage)
        tokens_out = sum(u.output_tokens for u in usage)
        cost = sum(o.cost_usd for o in outcomes)
        self.tokens_in += tokens_in
        self.tokens_out += tokens_out
        self.cost_usd += cost
        first, last = outcomes[0], outcomes[-1]
        if texts is None:
            texts = [o.result.text if o.result is not None else None for o in outcomes]
        rows = []
        for k, (sample, score, t_in, t_out) in enumerate(
            zip(batch.samples, scores, _split(tokens_in, n), _split(tokens_out, n), strict=True),
            1,
        ):
            row_status: CallStatus
            row_error: str | None
            if status is CallStatus.FAILED:
                row_status, row_error = CallStatus.FAILED, first.error
            elif status is CallStatus.PARTIAL:  # the re-ask did not run yet
                row_status, row_error = CallStatus.PARTIAL, None
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
                    "usage_estimated": any(o.usage.estimated for o in outcomes),
                    "latency_s": sum(o.latency_s for o in outcomes),
                    "attempts": sum(o.attempts for o in outcomes),
                    "started_at": first.started_at,
                    "finished_at": last.finished_at,
                    "run_id": run_id,
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
                    "reasked": len(texts) > 1,
                    "model": sample.model,
                    "question_id": sample.question_id,
                    "example_ids": (
                        None if self.examples is None else [e.id for e in batch.examples]
                    ),
                }
            )
        return Finished(status, tuple(rows))
