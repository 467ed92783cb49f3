"""The BatchEval stage inside `arena run`: it scores every contestant answer."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from arena.batcheval._planner import BatchEvalPlanner, Scorer
from arena.batcheval._prompt import check_pool, load_template
from arena.batcheval._samples import Sample
from arena.batcheval._schema import SCORES_FILE
from arena.batcheval._scores import write_scores
from arena.config import ConfigError, Question, Tournament
from arena.pipeline import AllPairsPlanner
from arena.review import render_answer, render_question
from arena.runner import Call, Idle

__all__ = [
    "TournamentBatchEvalPlanner",
    "batcheval_preflight",
    "batcheval_planner",
    "tournament_samples",
]

AnswerRef = tuple[str, Question, str]  # (answer id, question, contestant)


def batcheval_preflight(t: Tournament) -> list[str]:
    """Problems with the tournament's batcheval section (its template, its examples'
    criteria and scales), before any call."""
    if t.config.batcheval is None:
        return []
    try:
        load_template(t.config.batcheval, t.path, examples=t.batcheval_examples is not None)
        if t.batcheval_examples is not None:
            check_pool(t.batcheval_examples, t.config.batcheval)
    except ConfigError as exc:
        return [str(exc)]
    return []


def tournament_samples(
    answers: Sequence[AnswerRef], answer_turns: Mapping[str, Sequence[str]]
) -> list[Sample]:
    """One sample per logged answer: the answer with its question as context."""
    samples: list[Sample] = []
    for aid, question, model in answers:
        turns = answer_turns.get(aid)
        if turns is None:
            continue
        if len(question.turns) == 1:
            text, context = turns[0], render_question(question)
        else:  # the whole conversation; it already shows every question turn
            text, context = render_answer(question, turns), None
        samples.append(Sample(aid, text, context, model=model, question_id=question.id))
    return samples


class TournamentBatchEvalPlanner(BatchEvalPlanner):
    """The BatchEval stage of `arena run`: scores every answer of the tournament.

    A round's batches mix answers of every question, and the composition of
    round 1 is drawn from the whole answer set (so that batch ids, resume and
    `arena status` do not depend on the order answers arrived in). So the
    stage begins once no answer of the plan can still arrive (answers that
    failed are left out), not before; it does not wait for reviews or
    discussions, which run alongside it.
    """

    def __init__(self, t: Tournament, base: AllPairsPlanner) -> None:
        cfg = t.config.batcheval
        if cfg is None:
            raise ValueError("the tournament has no batcheval section")
        scorers = [
            Scorer(n, t.provider_of(n), t.provider_model_id(n), t.model_fingerprint(n))
            for n in cfg.scorers
        ]
        pool = t.batcheval_examples
        super().__init__(
            cfg,
            load_template(cfg, t.path, examples=pool is not None),
            scorers,
            seed=t.config.seed,
            examples=pool,
        )
        self.t = t
        self.base = base
        self.gave_up = False

    def next_call(self) -> Call | Idle:
        if not self.begun and not self.gave_up and self.base.answers_settled:
            self._begin_or_give_up()
        if self.gave_up:
            return Idle.DONE
        return super().next_call()

    def on_settled(self) -> None:
        if not self.begun and not self.gave_up:
            self._begin_or_give_up()

    def _begin_or_give_up(self) -> None:
        ctx = self._ctx
        assert ctx is not None
        base, cfg = self.base, self.cfg
        answers = [(a.id, a.question, a.model) for a in base.plan.answers]
        failed = base.failed_answers
        waiting = [a for a, _, _ in answers if a not in base.answers and a not in failed]
        samples = tournament_samples(answers, base.answers)
        if waiting or ctx.stopped or not samples:
            expected = len([a for a, _, _ in answers if a not in failed])
            ctx.stats.plan(
                self.name,
                cfg.rounds
                * math.ceil(expected / cfg.batch_size)
                * len(cfg.criteria)
                * len(self.scorers),
            )
            if waiting and not ctx.stopped:
                ctx.stats.error(f"batcheval: waiting for {len(waiting)} answers")
            self.gave_up = True
            return
        self.begin(samples)

    def finish(self) -> None:
        if self.begun:
            write_scores(self.t.output_dir / SCORES_FILE, self.summary().scores)


def batcheval_planner(t: Tournament, base: AllPairsPlanner) -> TournamentBatchEvalPlanner | None:
    """The stage factory `arena run` uses: a stage when the tournament has a batcheval section."""
    return TournamentBatchEvalPlanner(t, base) if t.config.batcheval is not None else None
