"""The discussion stage of `arena run` (and of `arena discuss`): a planner.

It follows the reviews as they are logged (or read from the log at start):
as soon as every reviewer has judged a battle (and, for the `inconsistent`
trigger, its mirror), the battle's triggers are computed, and a selected battle
is discussed at once. There is no barrier between reviews and discussions.

A battle's contestants never discuss it unless the section sets
`allow_contestants`: `top2` discussants are the two reviewers, other than the
battle's contestants, with the highest PeerRank weights at the moment a
battle is dispatched, computed from the reviews known then
(recomputed when reviews arrived since; in a resumed run every review in the
log is known before the first dispatch). A battle that already has
discussions in the log (same context) keeps their discussants and leaders, so
an interrupted discussion resumes where it stopped even if the top two
reviewers changed since. A stopped run (a signal, the budget) starts no
discussion: its review set may be incomplete, so the next run, once every
review is logged, chooses the discussants, as an uninterrupted run would.

Each discussion is the generator of `_protocol.discussion_steps`; the planner
hands its steps to the runner one at a time (a discussion's next turn is asked
for once the previous one is logged) and feeds the logged rows back.
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict, deque
from collections.abc import Sequence
from typing import Any

import polars as pl

from arena.config import DiscussionConfig, Tournament
from arena.discuss._choose import choose_leader, discussant_pairs, ranked_reviewers
from arena.discuss._prompt import load_templates
from arena.discuss._protocol import (
    Ask,
    Battle,
    Discussant,
    DiscussionResult,
    DiscussionSpec,
    LoggedReview,
    Pending,
    Record,
    Reply,
    Settings,
    Steps,
    discussion_steps,
    logged_calls,
    outcome_row,
)
from arena.discuss._schema import TABLE
from arena.discuss._state import DiscussionState, discussion_context, write_state
from arena.discuss._triggers import battle_triggers
from arena.pipeline import (
    AllPairsPlanner,
    ReviewIdSet,
    question_context,
    review_context,
    review_id,
)
from arena.runner import Call, CallResult, Finished, Idle, Planner, Priority, RunContext, RunStats
from arena.scheduler import CallOutcome
from arena.store import RunLog
from arena.types import CallStatus, Verdict, stable_id

__all__ = ["DiscussionSteps", "DiscussionPlanner", "discussion_id", "discussion_planner"]

_Key = tuple[str, str, str]  # (question id, model A, model B)
_DONE = (CallStatus.OK.value, CallStatus.INVALID.value)
# A dispatch waits this many times as long as the last read of the reviews table took.
_READ_SPACING = 4.0


def discussion_id(t: Tournament, battle: Battle, context: str, leader: str, follower: str) -> str:
    """Id of a discussion: its battle, context and both discussants (leader first)."""
    return stable_id(
        "discussion",
        {
            "battle": battle.id,
            "context": context,
            "leader": t.model_fingerprint(leader),
            "follower": t.model_fingerprint(follower),
        },
    )


class DiscussionSteps:
    """Runs discussions as runner calls, one step of each at a time.

    `add` starts a discussion (the generator of `_protocol.discussion_steps`);
    its steps come out of `next_call` (a model call, or a record: a row logged
    without a call), and `on_result` sends the discussion its logged row (or
    `Pending` when the call did not end) and queues its next step. Each new
    model call is counted planned in `stats` under `stage`; `ended` holds how
    every discussion that finished ended.
    """

    def __init__(self, stage: str) -> None:
        self.stage = stage
        self.ended: list[DiscussionResult] = []
        self._stats: RunStats | None = None
        self._calls: deque[Call] = deque()  # steps ready to run
        self._running: dict[str, Steps] = {}  # call id -> the discussion waiting on it

    @property
    def ready(self) -> bool:
        """Whether a step is ready to run."""
        return bool(self._calls)

    @property
    def busy(self) -> bool:
        """Whether a step is ready or a discussion waits on a call."""
        return bool(self._calls or self._running)

    def add(self, steps: Steps, stats: RunStats) -> None:
        """Start a discussion: queue its first step."""
        self._stats = stats
        self._advance(steps, None)

    def next_call(self) -> Call | None:
        """The next step ready to run, if any."""
        return self._calls.popleft() if self._calls else None

    def on_result(self, result: CallResult) -> None:
        """A call ended: if one of the discussions waits on it, send it the outcome."""
        steps = self._running.pop(result.call.id, None)
        if steps is None:
            return
        reply: Reply
        if result.status == "pending":
            outcome = result.outcome
            reply = Pending(outcome.error if outcome is not None else None)
        elif result.call.request is None:
            reply = None
        else:
            reply = result.row
        self._advance(steps, reply)

    def _advance(self, steps: Steps, reply: Reply) -> None:
        """Send a discussion its last step's reply; queue its next step, or keep how it ended."""
        try:
            step = steps.send(reply)
        except StopIteration as end:
            self.ended.append(end.value)
            return
        if isinstance(step, Record):
            row = dict(step.row)
            call = Call(
                id=str(row["id"]),
                table=TABLE,
                stage=self.stage,
                provider="",
                request=None,
                finish=lambda _outcomes, _run_id: Finished(CallStatus.OK, (row,)),
            )
        else:
            assert self._stats is not None
            self._stats.plan(self.stage)
            call = _ask_call(step, self.stage)
        self._running[call.id] = steps
        self._calls.append(call)


class DiscussionPlanner(Planner):
    """Discusses every selected battle as soon as its reviews are known."""

    name = "discussions"

    def __init__(
        self, t: Tournament, base: AllPairsPlanner, cfg: DiscussionConfig | None = None
    ) -> None:
        section = cfg if cfg is not None else t.config.discussion
        if section is None:
            raise ValueError("the tournament has no discussion section")
        self.t = t
        self.base = base
        self.cfg = section
        self.questions = {q.id: q for q in t.questions}
        templates = load_templates(section, t.path)
        context = discussion_context(t, section, templates)
        self.settings = Settings(
            templates=templates,
            review_template=t.review_template,
            review_temperature=t.config.review.temperature,
            review_max_tokens=t.config.review.max_tokens,
            temperature=section.temperature,
            max_tokens=section.max_tokens,
            max_turns=section.max_turns,
            context=context,
            stop_on_agreement=section.stop_on_agreement,
            temperatures=dict(section.temperatures),
        )
        self.expected = set(t.reviewers)
        self.order: dict[_Key, int] = {}
        for q in t.questions:
            for a in t.contestants:
                for b in t.contestants:
                    if a != b:
                        self.order[(q.id, a, b)] = len(self.order)
        self.verdicts: dict[_Key, dict[str, str]] = defaultdict(dict)
        self.battles: dict[_Key, Battle] = {}
        self.evaluated: set[_Key] = set()
        self.queue: list[tuple[Battle, str]] = []
        self.top: list[str] | None = None
        self._known = 0  # verdicts seen so far
        self._top_known = -1  # verdicts seen when `top` was computed
        self._read_seconds = 0.0  # how long the last read of the reviews table took
        self._read_at = 0.0  # when it ended (monotonic)
        self._logged: dict[str, dict[str, dict[str, Any]]] = {}
        self._logged_pairs: dict[str, list[tuple[str, str]]] = {}
        self._reviews: dict[str, LoggedReview] = {}
        self._log: RunLog | None = None
        self._ctx: RunContext | None = None
        self._steps = DiscussionSteps(self.name)
        self._review_ids = ReviewIdSet(base.plan.reviews.ids)  # not a set of strings

    @property
    def results(self) -> Counter[str]:
        """How the discussions that ended in this run ended (agreed, unresolved, ...)."""
        return Counter(end.status for end in self._steps.ended)

    # -- planner hooks -----------------------------------------------------------

    def start(self, ctx: RunContext) -> None:
        """Read the logged discussions and verdicts; record the settings in discussion.json."""
        self._ctx = ctx
        self._log = ctx.log
        frame = self._log.read(TABLE)
        frame = frame.filter(pl.col("context") == self.settings.context)
        for row in frame.iter_rows(named=True):
            self._logged.setdefault(row["discussion_id"], {})[row["id"]] = row
            pair = (row["leader"], row["follower"])
            pairs = self._logged_pairs.setdefault(row["battle_id"], [])
            if pair not in pairs:
                pairs.append(pair)
        write_state(
            self.t.output_dir,
            DiscussionState(
                context=self.settings.context,
                outcome=self.cfg.outcome,
                weight=self.cfg.weight,
                trigger=list(self.cfg.trigger),
            ),
        )
        reviews = self._log.read("reviews", columns=["status", "verdict"])
        done = reviews.filter(pl.col("status").is_in(_DONE))
        verdicts = dict(zip(done["id"].to_list(), done["verdict"].to_list(), strict=True))
        for call in self.base.plan.reviews:
            verdict = verdicts.get(call.id)
            if verdict is not None:
                self._on_review(
                    call.question.id,
                    call.model_a,
                    call.model_b,
                    call.reviewer,
                    call.answer_a_id,
                    call.answer_b_id,
                    verdict,
                )

    def next_call(self) -> Call | Idle:
        if not self._steps.ready and self.queue and self._may_dispatch():
            self._dispatch()
        call = self._steps.next_call()
        if call is not None:
            return call
        if self._steps.busy or self.queue or not self.base.settled:
            return Idle.LATER
        return Idle.DONE

    def on_result(self, result: CallResult) -> None:
        table = result.call.table
        if table == "reviews" and result.status in ("ok", "invalid"):
            row = result.row
            if row is not None and row["id"] in self._review_ids:
                self._on_review(
                    row["question_id"],
                    row["model_a"],
                    row["model_b"],
                    row["reviewer"],
                    row["answer_a_id"],
                    row["answer_b_id"],
                    row["verdict"],
                )
        elif table == TABLE:
            self._steps.on_result(result)

    def on_settled(self) -> None:
        """Start whatever is still queued: top2 discussions, which wait for every review."""
        if self.queue and not self._stopped():
            self._dispatch()

    def _stopped(self) -> bool:
        """Whether the run was stopped (signal, budget): the review set may be incomplete.

        No discussion starts then: `top2` would rank reviewers on the reviews
        that happened to be logged, and its opening rows would be logged for
        discussants an uninterrupted run would not choose. The next run,
        with every review, starts them.
        """
        return self._ctx is not None and self._ctx.stopped

    # -- selection -------------------------------------------------------------

    def _on_review(
        self,
        question_id: str,
        model_a: str,
        model_b: str,
        reviewer: str,
        answer_a_id: str,
        answer_b_id: str,
        verdict: str,
    ) -> None:
        """Record a verdict; select the battle (and its mirror) once all is known."""
        key = (question_id, model_a, model_b)
        if key not in self.battles:
            self.battles[key] = Battle(
                self.questions[question_id], model_a, model_b, answer_a_id, answer_b_id
            )
        self.verdicts[key][reviewer] = verdict
        self._known += 1
        self._check(key)
        self._check((key[0], key[2], key[1]))

    def _complete(self, key: _Key) -> bool:
        return key in self.verdicts and self.expected <= self.verdicts[key].keys()

    def _check(self, key: _Key) -> None:
        if key in self.evaluated or not self._complete(key):
            return
        mirror = (key[0], key[2], key[1])
        mirror_known = self._complete(mirror)
        if "inconsistent" in self.cfg.trigger and not mirror_known:
            return
        self.evaluated.add(key)
        fired = battle_triggers(
            self.verdicts[key], self.verdicts[mirror] if mirror_known else None, self.cfg
        )
        if fired:
            self.queue.append((self.battles[key], ",".join(fired)))

    def _may_dispatch(self) -> bool:
        # top2 waits until no review can still arrive: the pair then comes from
        # the tournament's PeerRank weights, not from whichever reviews happened
        # to arrive first, so a run is reproducible. Otherwise, battles selected
        # meanwhile are dispatched together, with one read of the reviews table;
        # waiting a few times as long as a read takes keeps the reads (which
        # block the loop) to a small share of the run.
        if self._stopped():
            return False
        if self.cfg.discussants == "top2":
            return self.base.settled
        return time.monotonic() - self._read_at >= _READ_SPACING * self._read_seconds

    # -- dispatch --------------------------------------------------------------

    def _top2(self) -> list[str]:
        if self.top is None or self._top_known != self._known:
            self._top_known = self._known
            rows = [
                (k[0], k[1], k[2], r, v) for k, by in self.verdicts.items() for r, v in by.items()
            ]
            frame = pl.DataFrame(
                rows,
                orient="row",
                schema={
                    "question_id": pl.String,
                    "model_a": pl.String,
                    "model_b": pl.String,
                    "reviewer": pl.String,
                    "verdict": pl.String,
                },
            )
            self.top = ranked_reviewers(frame, self.t.contestants, self.t.reviewers)
        return self.top

    def _pairs(self, battle: Battle) -> list[tuple[str, str]]:
        """(leader, follower) of each discussion of a battle."""
        logged = self._logged_pairs.get(battle.id, [])
        if self.cfg.discussants == "top2" and logged:
            pairs = list(logged)
            if self.cfg.leader == "both":  # one of the two was logged when the run stopped
                pairs += [(f, lead) for lead, f in logged if (f, lead) not in logged]
            return pairs
        out: list[tuple[str, str]] = []
        top = self._top2() if self.cfg.discussants == "top2" else None
        for pair in discussant_pairs(self.cfg, top, (battle.model_a, battle.model_b)):
            if self.cfg.leader == "both":  # the paper's protocol: once with each leading
                out.extend([(pair[0], pair[1]), (pair[1], pair[0])])
                continue
            known = [p for p in logged if set(p) == set(pair)]
            if known:
                out.append(known[0])
                continue
            index = self.order.get((battle.question.id, battle.model_a, battle.model_b), 0)
            leader = choose_leader(
                self.cfg, pair, seed=self.t.config.seed, battle_id=battle.id, index=index
            )
            out.append((leader, pair[1] if leader == pair[0] else pair[0]))
        return out

    def _refresh_reviews(self, needed: set[str]) -> None:
        if needed <= self._reviews.keys() or self._log is None:
            return
        start = time.monotonic()
        frame = self._log.read("reviews", columns=["status", "text", "verdict"])
        frame = frame.filter(pl.col("status").is_in(_DONE) & pl.col("id").is_in(list(needed)))
        for rid, text, verdict in frame.select("id", "text", "verdict").iter_rows():
            self._reviews[rid] = LoggedReview(rid, text or "", Verdict(verdict))
        self._read_at = time.monotonic()
        self._read_seconds = self._read_at - start

    def _discussant(self, name: str) -> Discussant:
        return Discussant(name, self.t.provider_of(name), self.t.provider_model_id(name))

    def _dispatch(self) -> None:
        batch, self.queue = self.queue, []
        ctx = self._ctx
        if not batch or ctx is None:
            return
        planned: list[tuple[Battle, str, tuple[str, str], dict[str, str]]] = []
        needed: set[str] = set()
        contexts = {r: review_context(self.t, r) for r in self.t.reviewers}
        for battle, trigger in batch:
            for pair in self._pairs(battle):
                ids = {
                    name: review_id(
                        battle.question.id,
                        battle.answer_a_id,
                        battle.answer_b_id,
                        # the reviews' own context: with the question's reference
                        # and examples when the review prompt shows them
                        question_context(self.t, battle.question, contexts[name]),
                    )
                    for name in pair
                    if name in contexts
                }
                needed.update(ids.values())
                planned.append((battle, trigger, pair, ids))
        self._refresh_reviews(needed)
        answers = self.base.answers
        specs: list[DiscussionSpec] = []
        for battle, trigger, (leader, follower), ids in planned:
            did = discussion_id(self.t, battle, self.settings.context, leader, follower)
            spec = DiscussionSpec(
                id=did,
                battle=battle,
                leader=self._discussant(leader),
                follower=self._discussant(follower),
                trigger=trigger,
                answer_a=tuple(answers[battle.answer_a_id]),
                answer_b=tuple(answers[battle.answer_b_id]),
                reuse={n: self._reviews[i] for n, i in ids.items() if i in self._reviews},
            )
            specs.append(spec)
        # Calls already logged are planned here at once (the discussions count
        # them skipped as they replay them), so progress does not report every one.
        reused = sum(logged_calls(self._logged.get(spec.id, {})) for spec in specs)
        if reused:
            ctx.stats.plan(self.name, reused)
        for spec in specs:
            steps = discussion_steps(
                spec,
                self.settings,
                self._logged.get(spec.id, {}),
                run_id=ctx.run_id,
                skipped=lambda: ctx.stats.skip(self.name),
            )
            self._steps.add(steps, ctx.stats)


def _ask_call(ask: Ask, stage: str) -> Call:
    def finish(outcomes: Sequence[CallOutcome], _run_id: str) -> Finished:
        status, row = outcome_row(ask, outcomes[-1])
        return Finished(status, (row,))

    return Call(
        id=ask.row_id,
        table=TABLE,
        stage=stage,
        provider=ask.provider,
        request=lambda: ask.request,
        finish=finish,
        priority=Priority.BACKGROUND,
    )


def discussion_planner(t: Tournament, base: AllPairsPlanner) -> DiscussionPlanner | None:
    """The stage factory `arena run` uses: a stage when the tournament has a discussion section."""
    return DiscussionPlanner(t, base) if t.config.discussion is not None else None
