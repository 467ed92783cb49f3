"""The plan of a tournament: every call it needs, with content-derived ids.

Answers are one `AnswerCall` per (contestant, question); reviews are held as
columns (`ReviewCalls`: integer codes and 26-byte ids), the one
representation of a plan's reviews, a `ReviewCall` made only when asked for.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

import numpy as np
import polars as pl
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
    "GridIds",
    "PackedIds",
    "ReviewCalls",
    "ReviewGrid",
    "ReviewIdSet",
    "ReviewIds",
    "answer_id",
    "build_plan",
    "load_done",
    "question_context",
    "review_context",
    "review_id",
    "settled_reviews",
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


# The two hex digits of each byte value, as ASCII codes.
_HEX = np.array([list(f"{i:02x}".encode()) for i in range(256)], dtype=np.uint8)
_ID_PREFIX = b"r-"
_DIGEST_BYTES = 12


class ReviewIds(ABC):
    """A plan's review ids (`r-` + 24 hex digits), read like an `S26` array of them.

    Indexing and slicing give what the array would: one id as bytes, several
    as an `S26` array (made only for those asked for). `PackedIds` keeps 12
    digest bytes per id; `GridIds` (a whole plan) keeps none and hashes an id
    when it is asked for.
    """

    dtype = np.dtype("S26")

    @abstractmethod
    def __len__(self) -> int: ...

    @abstractmethod
    def digest(self, index: int) -> bytes:
        """The 12 digest bytes of id `index` (0 <= index < len)."""

    @abstractmethod
    def digests(self, start: int, stop: int) -> NDArray[np.uint8]:
        """The digest bytes of ids `start:stop`, as `(stop - start, 12)`."""

    @property
    def shape(self) -> tuple[int]:
        return (len(self),)

    def _at(self, index: int | np.integer[Any]) -> int:
        n = len(self)
        at = int(index) + n if index < 0 else int(index)
        if not 0 <= at < n:
            raise IndexError(f"review index {int(index)} out of range for {n} reviews")
        return at

    def picked(self, indices: NDArray[np.integer[Any]] | Sequence[int]) -> NDArray[np.uint8]:
        """The digest bytes of the ids at `indices`, as `(k, 12)`."""
        at = [self._at(i) for i in np.asarray(indices, dtype=np.int64).ravel().tolist()]
        if not at:
            return np.empty((0, _DIGEST_BYTES), dtype=np.uint8)
        joined = b"".join(self.digest(i) for i in at)
        return np.frombuffer(joined, dtype=np.uint8).reshape(-1, _DIGEST_BYTES).copy()

    @overload
    def __getitem__(self, index: int | np.integer[Any]) -> bytes: ...

    @overload
    def __getitem__(self, index: slice | NDArray[np.integer[Any]]) -> NDArray[np.bytes_]: ...

    def __getitem__(
        self, index: int | np.integer[Any] | slice | NDArray[np.integer[Any]]
    ) -> bytes | NDArray[np.bytes_]:
        if isinstance(index, int | np.integer):
            return self.text(int(index)).encode("ascii")
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step == 1:
                return _unpack(self.digests(start, max(start, stop)))
            return _unpack(self.picked(range(start, stop, step)))
        return _unpack(self.picked(index))

    def text(self, index: int) -> str:
        """One id as text."""
        return "r-" + self.digest(self._at(index)).hex()

    def take(self, indices: NDArray[np.integer[Any]] | Sequence[int]) -> PackedIds:
        """The ids at `indices`, packed."""
        return PackedIds(self.picked(indices))

    def __iter__(self) -> Iterator[bytes]:
        for start in range(0, len(self), 4096):
            yield from _unpack(self.digests(start, min(len(self), start + 4096))).tolist()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        ids = _unpack(self.digests(0, len(self)))
        return ids if dtype is None else ids.astype(dtype)

    def tolist(self) -> list[bytes]:
        return list(self)


def _unpack(digests: NDArray[np.uint8]) -> NDArray[np.bytes_]:
    """Ids as an `S26` array from their digest bytes."""
    out = np.empty((digests.shape[0], 26), dtype=np.uint8)
    out[:, :2] = np.frombuffer(_ID_PREFIX, dtype=np.uint8)
    out[:, 2:] = _HEX[digests].reshape(digests.shape[0], 2 * _DIGEST_BYTES)
    return out.view("S26").reshape(digests.shape[0])


class PackedIds(ReviewIds):
    """Review ids kept as their 12 digest bytes (a part of a plan: `ReviewCalls.take`)."""

    def __init__(self, digests: NDArray[np.uint8]) -> None:
        if digests.ndim != 2 or digests.shape[1] != _DIGEST_BYTES:
            raise ValueError(f"review id digests must be (n, 12) bytes, got {digests.shape}")
        self.packed = digests

    @classmethod
    def empty(cls) -> PackedIds:
        return cls(np.empty((0, _DIGEST_BYTES), dtype=np.uint8))

    @classmethod
    def pack(cls, ids: NDArray[np.bytes_] | Sequence[str] | Sequence[bytes]) -> PackedIds:
        """Pack ids `r-` + 24 lowercase hex digits (ValueError for any other id)."""
        raw = np.asarray(ids, dtype="S26")
        if raw.size == 0:
            return cls.empty()
        chars = raw.view(np.uint8).reshape(-1, 26)
        prefix = np.frombuffer(_ID_PREFIX, dtype=np.uint8)
        digits = chars[:, 2:]
        nibble = np.where(digits >= ord("a"), digits - (ord("a") - 10), digits - ord("0"))
        valid = (chars[:, :2] == prefix).all(axis=1) & (
            ((digits >= ord("0")) & (digits <= ord("9")))
            | ((digits >= ord("a")) & (digits <= ord("f")))
        ).all(axis=1)
        if not valid.all():
            bad = raw[int(np.flatnonzero(~valid)[0])]
            raise ValueError(f"not a review id (r- and 24 hex digits): {bad!r}")
        packed = (nibble[:, 0::2] << 4) | nibble[:, 1::2]
        return cls(packed.astype(np.uint8))

    def __len__(self) -> int:
        return int(self.packed.shape[0])

    def digest(self, index: int) -> bytes:
        out: bytes = self.packed[index].tobytes()
        return out

    def digests(self, start: int, stop: int) -> NDArray[np.uint8]:
        return self.packed[start:stop]

    def picked(self, indices: NDArray[np.integer[Any]] | Sequence[int]) -> NDArray[np.uint8]:
        at = np.asarray(indices, dtype=np.int64).ravel()
        n = len(self)
        if at.size and (int(at.min()) < -n or int(at.max()) >= n):
            raise IndexError(f"review index out of range for {n} reviews")
        return self.packed[at]


class GridIds(ReviewIds):
    """The ids of a whole plan's reviews, hashed when asked for: no bytes per review.

    An id is the hash of its question, answers and reviewer context
    (`review_id`); a slice hashes the questions it spans (`_review_digests`),
    one id hashes alone, cheaply enough to do when it is asked for.
    """

    def __init__(
        self,
        grid: ReviewGrid,
        question_ids: tuple[str, ...],
        answer_ids: tuple[tuple[str, ...], ...],
        contexts: tuple[tuple[str, ...], ...],
    ) -> None:
        self.grid = grid
        self.question_ids = question_ids
        self.answer_ids = answer_ids  # [question][model]
        self.contexts = contexts  # [question][reviewer]: question_context of each reviewer
        self._pairs: list[tuple[int, int]] = [(a, b) for a, b in grid.pairs.tolist()]

    def __len__(self) -> int:
        return len(self.grid)

    def digest(self, index: int) -> bytes:
        q, a, b, r = self.grid.row(index)
        row = self.answer_ids[q]
        return _digest(_head(self.question_ids[q]), row[a], row[b], self.contexts[q][r])

    def digests(self, start: int, stop: int) -> NDArray[np.uint8]:
        per = self.grid.per_question
        if stop <= start:
            return np.empty((0, _DIGEST_BYTES), dtype=np.uint8)
        first, last = start // per, (stop - 1) // per
        blocks = []
        for q in range(first, last + 1):
            row = self.answer_ids[q]
            pairs = [(row[a], row[b]) for a, b in self._pairs]
            blocks.append(_review_digests(self.question_ids[q], pairs, list(self.contexts[q])))
        joined = np.frombuffer(b"".join(blocks), dtype=np.uint8).reshape(-1, _DIGEST_BYTES)
        return joined[start - first * per : stop - first * per].copy()


class ReviewGrid:
    """The codes (question, model A, model B, reviewer) of a whole plan's reviews, from the
    index alone: questions outermost, then the ordered pairs, then the reviewers.

    Indexing gives what the `(n, 4)` int32 array would (rows made when asked for).
    """

    dtype = np.dtype(np.int32)

    def __init__(self, questions: int, pairs: NDArray[np.int32], reviewers: int) -> None:
        self.n_questions = questions
        self.pairs = pairs  # (p, 2): model A, model B
        self.n_reviewers = reviewers
        self.per_question = len(pairs) * reviewers

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n_questions * self.per_question, 4)

    def __len__(self) -> int:
        return self.n_questions * self.per_question

    def row(self, index: int) -> tuple[int, int, int, int]:
        """The codes of review `index` (0 <= index < len), as plain ints."""
        question, within = divmod(index, self.per_question)
        pair, reviewer = divmod(within, self.n_reviewers)
        a, b = self.pairs[pair].tolist()
        return question, a, b, reviewer

    def rows(self, index: NDArray[np.int64]) -> NDArray[np.int32]:
        """The codes of the reviews at `index` (any shape), as `index.shape + (4,)`."""
        n = len(self)
        if index.size and (int(index.min()) < -n or int(index.max()) >= n):
            raise IndexError(f"review index out of range for {n} reviews")
        at = np.where(index < 0, index + n, index).astype(np.int64)
        question, within = np.divmod(at, self.per_question)
        pair, reviewer = np.divmod(within, self.n_reviewers)
        out = np.empty((*at.shape, 4), dtype=np.int32)
        out[..., 0] = question
        out[..., 1] = self.pairs[pair, 0]
        out[..., 2] = self.pairs[pair, 1]
        out[..., 3] = reviewer
        return out

    def __getitem__(self, key: Any) -> NDArray[np.int32]:
        rows, rest = (key[0], key[1:]) if isinstance(key, tuple) else (key, ())
        n = len(self)
        if isinstance(rows, int | np.integer) and -n <= rows < n:  # one review: no arrays
            out = np.array(self.row(int(rows) + n if rows < 0 else int(rows)), dtype=np.int32)
            return out[rest] if rest else out
        if isinstance(rows, slice):
            index = np.arange(*rows.indices(len(self)), dtype=np.int64)
        else:
            index = np.asarray(rows, dtype=np.int64)
        out = self.rows(index)
        return out[(Ellipsis, *rest)] if rest else out

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> NDArray[Any]:
        out = self.rows(np.arange(len(self), dtype=np.int64))
        return out if dtype is None else out.astype(dtype)


class ReviewCalls(Sequence[ReviewCall]):
    """The reviews of a plan held as columns: a `ReviewCall` is made only when asked for.

    Per review: question, model A, model B and reviewer as small integer codes
    (`codes`, (n, 4)) and the id (`ids`, 26 ASCII bytes `r-` + 24 hex digits).
    A whole plan's codes follow from the index (`ReviewGrid`) and its ids are
    hashed when asked for (`GridIds`), so its reviews take no memory per
    review; a part of a plan (`take`) keeps its codes and its ids' 12 digest
    bytes (`PackedIds`). Iterating yields the calls in plan order.
    """

    def __init__(
        self,
        questions: tuple[Question, ...],
        models: tuple[str, ...],
        reviewers: tuple[str, ...],
        answer_ids: tuple[tuple[str, ...], ...],
        codes: NDArray[np.int32] | ReviewGrid,
        ids: NDArray[np.bytes_] | ReviewIds,
    ) -> None:
        self.questions = questions
        self.models = models
        self.reviewers = reviewers
        self.answer_ids = answer_ids  # [question][model]
        self.codes = codes  # (n, 4): question, model_a, model_b, reviewer
        self.ids = ids if isinstance(ids, ReviewIds) else PackedIds.pack(ids)
        if len(self.codes) != len(self.ids):
            raise ValueError(f"{len(self.codes)} review codes for {len(self.ids)} ids")

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
        return cls((), (), (), (), np.empty((0, 4), dtype=np.int32), PackedIds.empty())

    def take(self, indices: Sequence[int] | NDArray[np.int64]) -> ReviewCalls:
        """The reviews at `indices` (in that order), as columns."""
        at = np.asarray(indices, dtype=np.int64)
        return ReviewCalls(
            self.questions,
            self.models,
            self.reviewers,
            self.answer_ids,
            np.asarray(self.codes[at], dtype=np.int32).reshape(-1, 4),
            self.ids.take(at),
        )

    def id_at(self, index: int) -> str:
        """The id of review `index` (no call built)."""
        return self.ids.text(index)

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
    """`review_id` of every (answer pair, context) of one question, pairs outermost."""
    digests = _review_digests(question_id, pairs, contexts)
    step = _DIGEST_BYTES
    return ["r-" + digests[i : i + step].hex() for i in range(0, len(digests), step)]


def _review_digests(question_id: str, pairs: list[tuple[str, str]], contexts: list[str]) -> bytes:
    """The 12 digest bytes of the `review_id` of every (answer pair, context) of one
    question, pairs outermost, one after another (an id is `r-` and their hex).

    The same bytes `stable_id` hashes, assembled once per question (see `_digest`).
    """
    head = _head(question_id)
    sha256 = hashlib.sha256
    out: list[bytes] = []
    for a_id, b_id in pairs:
        stem = f'{head}{a_id}", "{b_id}", "'
        out.extend(sha256(f'{stem}{context}"]}}'.encode()).digest()[:12] for context in contexts)
    return b"".join(out)


def _head(question_id: str) -> str:
    """The start of what `review_id` hashes for a question (its id JSON-encoded)."""
    return '{"kind": "review", "payload": [' + json.dumps(question_id) + ', "'


def _digest(head: str, a_id: str, b_id: str, context: str) -> bytes:
    """The 12 digest bytes of a review id: the same bytes `stable_id` hashes (answer
    ids and contexts are plain ASCII), assembled from the question's `_head`."""
    return hashlib.sha256(f'{head}{a_id}", "{b_id}", "{context}"]}}'.encode()).digest()[:12]


def build_plan(t: Tournament) -> Plan:
    """One answer per (contestant, question); one review per (question, i != j, reviewer).

    Reviews are held as columns (`ReviewCalls`), questions outermost, then
    model A, model B, reviewer.
    """
    models = tuple(t.contestants)
    reviewers = tuple(t.reviewers)
    contexts = [review_context(t, r) for r in reviewers]
    pairs = [(a, b) for a in range(len(models)) for b in range(len(models)) if a != b]
    codes = ReviewGrid(
        len(t.questions), np.array(pairs, dtype=np.int32).reshape(-1, 2), len(reviewers)
    )
    answers: list[AnswerCall] = []
    answer_ids: list[tuple[str, ...]] = []
    question_contexts: list[tuple[str, ...]] = []
    for q in t.questions:
        row = tuple(answer_id(t, m, q) for m in models)
        answer_ids.append(row)
        answers.extend(AnswerCall(row[i], q, m) for i, m in enumerate(models))
        question_contexts.append(tuple(question_context(t, q, c) for c in contexts))
    ids = GridIds(
        codes, tuple(q.id for q in t.questions), tuple(answer_ids), tuple(question_contexts)
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


# A review id as the plan makes it: `r-` and 24 lowercase hex digits.
_REVIEW_ID = r"^r-[0-9a-f]{24}$"
_PLAN_CHUNK = 1 << 16


def settled_reviews(log: RunLog, ids: ReviewIds) -> NDArray[np.bool_]:
    """Which of `ids` the log holds with a result: the latest row ok or invalid.

    `log.ids("reviews", {ok, invalid})` as a mask over `ids`, without a set of
    a million strings: the log is read a few parts at a time (ids and statuses),
    each logged id kept as its 12 digest bytes and one flag, and the plan's ids
    are looked up a slice at a time. Rows with ids no plan makes are skipped.
    """
    keys: list[NDArray[np.void]] = []
    flags: list[NDArray[np.bool_]] = []
    results = [CallStatus.OK.value, CallStatus.INVALID.value]
    for frame in log.scan("reviews", ["status"]):
        ours = frame.filter(pl.col("id").str.contains(_REVIEW_ID))
        if not ours.height:
            continue
        packed = PackedIds.pack(ours["id"].to_numpy().astype("S26")).packed
        keys.append(np.ascontiguousarray(packed).view(f"V{_DIGEST_BYTES}").ravel())
        flags.append(ours["status"].is_in(results).fill_null(False).to_numpy())
    out = np.zeros(len(ids), dtype=bool)
    if not keys:
        return out
    logged = np.concatenate(keys)
    settled = np.concatenate(flags)
    del keys, flags
    order = np.argsort(logged, kind="stable")  # an id's rows in log order: its last is latest
    logged, settled = logged[order], settled[order]
    del order
    last = np.ones(logged.size, dtype=bool)
    last[:-1] = logged[1:] != logged[:-1]
    done = logged[last & settled]  # sorted, each id once
    del logged, settled, last
    if not done.size:
        return out
    for start in range(0, len(ids), _PLAN_CHUNK):
        stop = min(len(ids), start + _PLAN_CHUNK)
        wanted = np.ascontiguousarray(ids.digests(start, stop)).view(f"V{_DIGEST_BYTES}").ravel()
        at = np.minimum(np.searchsorted(done, wanted), done.size - 1)
        out[start:stop] = done[at] == wanted
    return out


class ReviewIdSet:
    """Membership of review ids among `ids` (a plan's): their 12 digest bytes, sorted.

    A million ids take 12 MB here, against some 100 MB as a set of strings.
    """

    def __init__(self, ids: ReviewIds) -> None:
        chunks = [
            np.ascontiguousarray(ids.digests(start, min(len(ids), start + _PLAN_CHUNK)))
            .view(f"V{_DIGEST_BYTES}")
            .ravel()
            for start in range(0, len(ids), _PLAN_CHUNK)
        ]
        self._sorted = np.sort(np.concatenate(chunks)) if chunks else np.zeros(0, "V12")

    def __len__(self) -> int:
        return int(self._sorted.size)

    def __contains__(self, rid: object) -> bool:
        if not isinstance(rid, str) or not self._sorted.size:
            return False
        if len(rid) != 26 or not rid.startswith("r-"):
            return False
        try:
            raw = bytes.fromhex(rid[2:])
        except ValueError:
            return False
        if rid[2:] != raw.hex():  # upper-case digits: not an id the plan makes
            return False
        key = np.frombuffer(raw, dtype=np.uint8).view(f"V{_DIGEST_BYTES}")
        at = min(int(np.searchsorted(self._sorted, key[0])), self._sorted.size - 1)
        return bool(self._sorted[at] == key[0])
