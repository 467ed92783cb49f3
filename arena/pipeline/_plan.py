"""The plan of a tournament: every call it needs, with content-derived ids.

Answers are one `AnswerCall` per (contestant, question); reviews are held as
columns (`ReviewCalls`: integer codes and 26-byte ids), the one
representation of a plan's reviews, a `ReviewCall` made only when asked for.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
from numpy.typing import NDArray

from arena.config import Question, Tournament, declared_verdicts
from arena.examples import example_ids
from arena.review import uses_reference
from arena.store import RunLog
from arena.types import CallStatus, stable_id

__all__ = [
    "AnswerCall",
    "Plan",
    "ReviewCall",
    "ReviewCalls",
    "answer_id",
    "build_plan",
    "load_done",
    "question_context",
    "review_context",
    "review_id",
]


@dataclass(frozen=True)
class AnswerCall:
    """One contestant answering one question (all its turns)."""

    id: str
    question: Question
    model: str


@dataclass(frozen=True)
class ReviewCall:
    """One reviewer judging one ordered battle (question, model_a, model_b)."""

    id: str
    question: Question
    model_a: str
    model_b: str
    reviewer: str
    answer_a_id: str
    answer_b_id: str


class ReviewCalls(Sequence[ReviewCall]):
    """The reviews of a plan held as columns: a `ReviewCall` is made only when asked for.

    Per review: question, model A, model B and reviewer as small integer codes
    and the id as 26 ASCII bytes, about 40 bytes in all (a `ReviewCall` with
    its strings takes ten times that). Iterating yields the calls in plan order.
    """

    def __init__(
        self,
        questions: tuple[Question, ...],
        models: tuple[str, ...],
        reviewers: tuple[str, ...],
        answer_ids: tuple[tuple[str, ...], ...],
        codes: NDArray[np.int32],
        ids: NDArray[np.bytes_],
    ) -> None:
        self.questions = questions
        self.models = models
        self.reviewers = reviewers
        self.answer_ids = answer_ids  # [question][model]
        self.codes = codes  # (n, 4): question, model_a, model_b, reviewer
        self.ids = ids

    def __len__(self) -> int:
        return int(self.ids.shape[0])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ReviewCalls):
            return (
                self.questions == other.questions
                and self.models == other.models
                and self.reviewers == other.reviewers
                and self.answer_ids == other.answer_ids
                and np.array_equal(self.codes, other.codes)
                and np.array_equal(self.ids, other.ids)
            )
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    @overload
    def __getitem__(self, index: int) -> ReviewCall: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[ReviewCall]: ...

    def __getitem__(self, index: int | slice) -> ReviewCall | Sequence[ReviewCall]:
        if isinstance(index, slice):
            return [self._call(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._call(index)

    def __iter__(self) -> Iterator[ReviewCall]:
        for start in range(0, len(self), 4096):
            rows = self.codes[start : start + 4096].tolist()
            ids = self.ids[start : start + 4096].tolist()
            for (q, a, b, r), rid in zip(rows, ids, strict=True):
                yield self._make(rid.decode("ascii"), q, a, b, r)

    @classmethod
    def empty(cls) -> ReviewCalls:
        """No reviews."""
        return cls((), (), (), (), np.empty((0, 4), dtype=np.int32), np.empty(0, dtype="S26"))

    def take(self, indices: Sequence[int] | NDArray[np.int64]) -> ReviewCalls:
        """The reviews at `indices` (in that order), as columns."""
        at = np.asarray(indices, dtype=np.int64)
        return ReviewCalls(
            self.questions,
            self.models,
            self.reviewers,
            self.answer_ids,
            self.codes[at],
            self.ids[at],
        )

    def id_at(self, index: int) -> str:
        """The id of review `index` (no call built)."""
        return str(self.ids[index].decode("ascii"))

    def _call(self, index: int) -> ReviewCall:
        q, a, b, r = self.codes[index].tolist()
        return self._make(self.id_at(index), q, a, b, r)

    def _make(self, rid: str, q: int, a: int, b: int, r: int) -> ReviewCall:
        answer_ids = self.answer_ids[q]
        return ReviewCall(
            rid,
            self.questions[q],
            self.models[a],
            self.models[b],
            self.reviewers[r],
            answer_ids[a],
            answer_ids[b],
        )


@dataclass(frozen=True)
class Plan:
    """Every call a tournament needs, with stable content-derived ids."""

    answers: tuple[AnswerCall, ...]
    reviews: ReviewCalls

    @property
    def size(self) -> int:
        return len(self.answers) + len(self.reviews)

    @classmethod
    def empty(cls) -> Plan:
        """A plan with no call."""
        return cls((), ReviewCalls.empty())


def answer_id(t: Tournament, model: str, q: Question) -> str:
    """Id of a model's answer to a question: changes when anything it depends on does.

    An answer from a file depends on its text (or on its absence from the file).
    """
    payload: dict[str, Any] = {
        "model": t.model_fingerprint(model),
        "question": [q.id, list(q.turns)],
    }
    found = t.answer_files.get(model)
    if found is not None:
        turns = found.answers.get(q.id)
        payload["text"] = None if turns is None else list(turns)
    return stable_id("answer", payload)


def review_context(t: Tournament, reviewer: str) -> str:
    """Hash of everything a reviewer's reviews depend on besides the two answers."""
    context: dict[str, Any] = {
        "reviewer": t.model_fingerprint(reviewer),
        "template": t.review_template,
        # The reviewer's own `review:` settings, else the section's.
        "temperature": t.review_settings(reviewer)[0],
        "max_tokens": t.review_settings(reviewer)[1],
    }
    declared = declared_verdicts(t.config.review.verdicts)
    if declared is not None:  # undeclared: the ids of the default tokens, as ever
        context["verdicts"] = {token: list(value) for token, value in declared.items()}
    return stable_id("review-context", context)


def question_context(t: Tournament, q: Question, context: str) -> str:
    """A reviewer's context for one question: with its reference when the template shows it,
    and with the ids of its examples and the pool's hash when `examples:` is configured."""
    if q.reference is not None and uses_reference(t.review_template):
        context = stable_id("review-context", [context, list(q.reference)])
    if t.examples is not None:
        context = stable_id(
            "review-context", [context, t.examples.digest, example_ids(t.examples, q)]
        )
    return context


def review_id(question_id: str, a_id: str, b_id: str, context: str) -> str:
    """Id of a review: depends on both answers, the reviewer and the review prompt."""
    return stable_id("review", [question_id, a_id, b_id, context])


def _review_ids(question_id: str, pairs: list[tuple[str, str]], contexts: list[str]) -> list[str]:
    """`review_id` of every (answer pair, context) of one question, pairs outermost.

    The same bytes `stable_id` hashes, assembled once per question: the
    question id is JSON-encoded once; answer ids and contexts are plain ASCII.
    """
    head = '{"kind": "review", "payload": [' + json.dumps(question_id) + ', "'
    out: list[str] = []
    for a_id, b_id in pairs:
        stem = f'{head}{a_id}", "{b_id}", "'
        for context in contexts:
            digest = hashlib.sha256(f'{stem}{context}"]}}'.encode()).hexdigest()
            out.append(f"r-{digest[:24]}")
    return out


def build_plan(t: Tournament) -> Plan:
    """One answer per (contestant, question); one review per (question, i != j, reviewer).

    Reviews are held as columns (`ReviewCalls`), questions outermost, then
    model A, model B, reviewer.
    """
    models = tuple(t.contestants)
    reviewers = tuple(t.reviewers)
    contexts = [review_context(t, r) for r in reviewers]
    pairs = [(a, b) for a in range(len(models)) for b in range(len(models)) if a != b]
    per_question = len(pairs) * len(reviewers)
    n = per_question * len(t.questions)
    codes = np.empty((n, 4), dtype=np.int32)
    if n:
        pair_codes = np.array(pairs, dtype=np.int32)
        codes[:, 0] = np.repeat(np.arange(len(t.questions), dtype=np.int32), per_question)
        codes[:, 1] = np.tile(np.repeat(pair_codes[:, 0], len(reviewers)), len(t.questions))
        codes[:, 2] = np.tile(np.repeat(pair_codes[:, 1], len(reviewers)), len(t.questions))
        codes[:, 3] = np.tile(
            np.arange(len(reviewers), dtype=np.int32), len(pairs) * len(t.questions)
        )
    ids = np.empty(n, dtype="S26")
    answers: list[AnswerCall] = []
    answer_ids: list[tuple[str, ...]] = []
    for k, q in enumerate(t.questions):
        row = tuple(answer_id(t, m, q) for m in models)
        answer_ids.append(row)
        answers.extend(AnswerCall(row[i], q, m) for i, m in enumerate(models))
        ids[k * per_question : (k + 1) * per_question] = _review_ids(
            q.id,
            [(row[a], row[b]) for a, b in pairs],
            [question_context(t, q, c) for c in contexts],
        )
    reviews = ReviewCalls(t.questions, models, reviewers, tuple(answer_ids), codes, ids)
    return Plan(tuple(answers), reviews)


def load_done(log: RunLog) -> tuple[dict[str, list[str]], set[str]]:
    """Answers already logged ok (id -> turns) and ids of reviews logged with a result."""
    answers_df = log.read("answers", columns=["status", "answer_turns"])
    ok = answers_df.filter(answers_df["status"] == CallStatus.OK.value)
    done_answers = {
        rid: list(turns)
        for rid, turns in zip(ok["id"].to_list(), ok["answer_turns"].to_list(), strict=True)
    }
    done_reviews = log.ids("reviews", statuses={CallStatus.OK.value, CallStatus.INVALID.value})
    return done_answers, done_reviews
