"""The BatchEval stage inside `arena run`: it scores every contestant answer."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from arena.batcheval._prompt import load_template
from arena.batcheval._samples import Sample
from arena.batcheval._schema import SCORES_FILE, TABLE
from arena.batcheval._scores import write_scores
from arena.batcheval._stage import BatchEvalStage, ProgressFn, Scorer, StageSummary
from arena.config import ConfigError, Question, Tournament
from arena.review import render_answer, render_question
from arena.scheduler import Scheduler
from arena.store import LogWriter, RunLog
from arena.types import CallStatus

__all__ = ["batcheval_preflight", "score_tournament", "tournament_samples"]

AnswerRef = tuple[str, Question, str]  # (answer id, question, contestant)


def batcheval_preflight(t: Tournament) -> list[str]:
    """Problems with the tournament's batcheval section (its template), before any call."""
    if t.config.batcheval is None:
        return []
    try:
        load_template(t.config.batcheval, t.path)
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


async def score_tournament(
    t: Tournament,
    answers: Sequence[AnswerRef],
    answer_turns: Mapping[str, Sequence[str]],
    scheduler: Scheduler,
    writer: LogWriter,
    log: RunLog,
    *,
    run_id: str,
    progress: ProgressFn | None = None,
) -> StageSummary | None:
    """Score every answer with the batcheval section; None when the section is absent.

    It starts once no answer is pending (answers that failed are left out), so
    that the batches are built from the whole answer set.
    """
    cfg = t.config.batcheval
    if cfg is None:
        return None
    failed = log.ids("answers", statuses={CallStatus.FAILED.value})
    waiting = [a for a, _, _ in answers if a not in answer_turns and a not in failed]
    samples = tournament_samples(answers, answer_turns)
    scorers = [
        Scorer(n, t.provider_of(n), t.provider_model_id(n), t.model_fingerprint(n))
        for n in cfg.scorers
    ]
    if waiting or scheduler.stopped or not samples:
        expected = len([a for a, _, _ in answers if a not in failed])
        planned = (
            cfg.rounds * math.ceil(expected / cfg.batch_size) * len(cfg.criteria) * len(scorers)
        )
        summary = StageSummary(planned=planned, pending=planned)
        if waiting and not scheduler.stopped:
            summary.errors.append(f"batcheval: waiting for {len(waiting)} answers")
        return summary
    stage = BatchEvalStage(
        cfg,
        load_template(cfg, t.path),
        samples,
        scorers,
        scheduler,
        writer,
        log.read(TABLE),
        seed=t.config.seed,
        run_id=run_id,
        progress=progress,
    )
    summary = await stage.run()
    write_scores(t.output_dir / SCORES_FILE, summary.scores)
    return summary
