"""A run directory's battles for reading: questions, both answers, every review and discussion.

`RunData` reads the log of a run directory (also while `arena run` writes it:
`refresh` reloads only when a log file changed) and answers the questions the
viewer and the HTML report ask: which reviews match a filter, one page of
them, one battle in full, the most disputed battles. A battle is one question
and one pair of answers; its reviews are every reviewer's verdict in both
orders. Everything returned is plain data (str, int, float, lists, dicts);
no text here is escaped, that is the renderers' job.
"""

from __future__ import annotations

import hashlib
import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

import arena
from arena.config import ConfigError
from arena.rundir import current_rows, load_for_directory

__all__ = [
    "VERDICTS",
    "BattleFilter",
    "Question",
    "RunData",
    "load_questions",
]

# Verdict filter values: the review verdicts, plus "failed" for reviews that never got one.
VERDICTS = ("A", "B", "tie", "invalid", "failed")

_REVIEW_COLUMNS = (
    "id",
    "status",
    "error",
    "question_id",
    "model_a",
    "model_b",
    "reviewer",
    "answer_a_id",
    "answer_b_id",
    "text",
    "verdict",
)
_KIND_ORDER = {"initial": 0, "turn": 1, "final": 2}


@dataclass(frozen=True)
class Question:
    """A question's text and category, as the tournament's questions file gives them."""

    id: str
    turns: tuple[str, ...]
    category: str | None


@dataclass(frozen=True)
class Snapshot:
    """The log as read at one moment; replaced whole, so readers never see half a reload."""

    reviews: pl.DataFrame
    answers: dict[str, dict[str, Any]]
    discussions: pl.DataFrame | None
    facets: dict[str, list[str]]


@dataclass(frozen=True)
class BattleFilter:
    """Which reviews to list; None matches anything."""

    model: str | None = None  # either side
    reviewer: str | None = None
    verdict: str | None = None  # one of VERDICTS
    category: str | None = None


def load_questions(directory: Path) -> tuple[dict[str, Question], str | None]:
    """The questions of the tournament DIR's last run recorded, and why not when unavailable."""
    try:
        tournament = load_for_directory(directory, None)
    except ConfigError as exc:
        return {}, f"question texts unavailable: {exc}"
    return {q.id: Question(q.id, tuple(q.turns), q.category) for q in tournament.questions}, None


def _signature(directory: Path) -> tuple[tuple[str, int, int], ...]:
    """Names, sizes and modification times of every log file: changes when anything is written."""
    entries: list[tuple[str, int, int]] = []
    for folder in (directory, directory / "log"):
        try:
            scan = list(os.scandir(folder))
        except OSError:
            continue
        for entry in scan:
            try:
                st = entry.stat()
            except OSError:
                continue
            if entry.is_dir():
                if folder == directory:
                    continue
                parts = sorted(os.listdir(entry.path)) if os.path.isdir(entry.path) else []
                entries.append((f"{entry.name}/", len(parts), hash(tuple(parts))))
            else:
                entries.append((entry.name, st.st_size, st.st_mtime_ns))
    return tuple(sorted(entries))


def _verdict_column() -> pl.Expr:
    return (
        pl.when(pl.col("status") == "failed")
        .then(pl.lit("failed"))
        .otherwise(pl.col("verdict").fill_null("invalid"))
        .alias("verdict")
    )


def _number(value: Any) -> Any:
    if isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
        return None
    return value


def _facets(r: pl.DataFrame) -> dict[str, list[str]]:
    def values(column: pl.Series) -> list[str]:
        return sorted(str(v) for v in column.drop_nulls().unique().to_list())

    models = sorted(set(values(r["model_a"])) | set(values(r["model_b"])))
    return {
        "models": models,
        "reviewers": values(r["reviewer"]),
        "verdicts": [v for v in VERDICTS if v in set(r["verdict"].unique().to_list())],
        "categories": values(r["category"]),
    }


def _answer(snap: Snapshot, answer_id: str | None) -> dict[str, Any] | None:
    row = None if answer_id is None else snap.answers.get(answer_id)
    if row is None:
        return None
    return {
        "id": row["id"],
        "model": row["model"],
        "status": row["status"],
        "error": row["error"],
        "turns": list(row["answer_turns"] or []),
    }


def _discussions(snap: Snapshot, question_id: str, pair: set[str]) -> list[dict[str, Any]]:
    """The discussions of one battle (its question and pair of answers), turns in order."""
    d = snap.discussions
    if d is None or not pair:
        return []
    rows = d.filter(
        (pl.col("question_id") == question_id)
        & pl.col("answer_a_id").is_in(list(pair))
        & pl.col("answer_b_id").is_in(list(pair))
    )
    out: list[dict[str, Any]] = []
    for (discussion_id,), group in rows.group_by(["discussion_id"], maintain_order=True):
        turns = sorted(
            group.iter_rows(named=True),
            key=lambda r: (_KIND_ORDER.get(r["kind"] or "", 3), r["turn"] or 0, r["id"]),
        )
        final = next((t for t in turns if t["kind"] == "final"), None)
        first = turns[0]
        out.append(
            {
                "discussion_id": discussion_id,
                "model_a": first["model_a"],
                "model_b": first["model_b"],
                "leader": first["leader"],
                "follower": first["follower"],
                "trigger": first["trigger"],
                "outcome": None if final is None else final["outcome"],
                "verdict": None if final is None else final["verdict"],
                "reason": None if final is None else final["reason"],
                "turns": [
                    {
                        "kind": t["kind"],
                        "turn": t["turn"],
                        "speaker": t["speaker"],
                        "status": t["status"],
                        "error": t["error"],
                        "preference": t["preference"],
                        "text": t["text"],
                    }
                    for t in turns
                    if t["kind"] != "final"
                ],
            }
        )
    return out


def _answer_key(question_id: str, model: str, turn: Any, text: str | None) -> str:
    """The id of an imported answer: its question, model, turn and text."""
    blob = "\0".join((question_id, model, str(turn), text if text is not None else "\1"))
    return "a" + hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]


def _judgments_snapshot(judgments: pl.DataFrame) -> Snapshot:
    """Imported judgments (`load_reviews_file(..., keep_texts=True)`) as the viewer's snapshot.

    Each judgment is a review `r1`, `r2`, ... in file order; each distinct
    (question, model, turn, text) an answer, so the judgments of one battle
    share their answers whether or not the file carries the texts.
    """
    n = judgments.height

    def column(name: str) -> list[Any]:
        return judgments[name].to_list() if name in judgments.columns else [None] * n

    questions, models_a, models_b = column("question_id"), column("model_a"), column("model_b")
    texts_a, texts_b, turns = column("answer_a"), column("answer_b"), column("turn")
    answers: dict[str, dict[str, Any]] = {}
    ids_a: list[str] = []
    ids_b: list[str] = []
    for k in range(n):
        for model, text, ids in (
            (models_a[k], texts_a[k], ids_a),
            (models_b[k], texts_b[k], ids_b),
        ):
            key = _answer_key(questions[k], model, turns[k], text)
            ids.append(key)
            answers.setdefault(
                key,
                {
                    "id": key,
                    "model": model,
                    "status": "ok",
                    "error": None,
                    "answer_turns": [] if text is None else [text],
                },
            )
    verdicts = [v if v in ("A", "B", "tie") else "invalid" for v in column("verdict")]
    frame = pl.DataFrame(
        {
            "id": [f"r{k + 1}" for k in range(n)],
            "status": ["ok" if v != "invalid" else "invalid" for v in verdicts],
            "error": [None] * n,
            "question_id": [str(q) for q in questions],
            "model_a": models_a,
            "model_b": models_b,
            "reviewer": column("reviewer"),
            "answer_a_id": ids_a,
            "answer_b_id": ids_b,
            "text": [None] * n,
            "verdict": verdicts,
            "category": column("category"),
            "p_a": column("p_a"),
        },
        schema={
            **{c: pl.String for c in _REVIEW_COLUMNS},
            "category": pl.String,
            "p_a": pl.Float64,
        },
    )
    return Snapshot(frame, answers, None, _facets(frame))


class RunData:
    """The battles of one run directory, reloaded when its log changes.

    `judgments` (imported reviews, as `arena.report.load_reviews_file` reads
    them with `keep_texts=True`) stands for a log: `directory` then only
    names them, nothing is reloaded and there are no calls.
    """

    def __init__(
        self, directory: str | os.PathLike[str], *, judgments: pl.DataFrame | None = None
    ) -> None:
        self.directory = Path(directory)
        self._signature: tuple[tuple[str, int, int], ...] | None = None
        self.notes: list[str] = []
        if judgments is not None:
            self._log = None
            self.snapshot = _judgments_snapshot(judgments)
            # No question texts: a question is its id (AlpacaEval's is the instruction).
            self.questions: dict[str, Question] = {
                qid: Question(qid, (), category)
                for qid, category in self.snapshot.reviews.select("question_id", "category")
                .unique("question_id", keep="first", maintain_order=True)
                .iter_rows()
            }
            return
        self._log = arena.open_log(self.directory) if (self.directory / "log").is_dir() else None
        self.questions, note = load_questions(self.directory)
        if note is not None:
            self.notes.append(note)
        empty = pl.DataFrame(
            schema={**{c: pl.String for c in _REVIEW_COLUMNS}, "category": pl.String}
        )
        self.snapshot = Snapshot(empty, {}, None, _facets(empty))
        self.refresh()

    @property
    def reviews(self) -> pl.DataFrame:
        """Every review of the plan (verdict "failed" when the call failed), ordered for reading."""
        return self.snapshot.reviews

    @property
    def answers(self) -> dict[str, dict[str, Any]]:
        """Every logged answer row by id."""
        return self.snapshot.answers

    def refresh(self) -> bool:
        """Reload the log if any of its files changed since the last load; True if it did."""
        if self._log is None:
            return False
        signature = _signature(self.directory)
        if signature == self._signature:
            return False
        log = self._log
        reviews = current_rows(self.directory, "reviews", log.read("reviews"))
        categories = {qid: q.category for qid, q in self.questions.items()}
        # Questions in the order of the questions file; unknown ones after, by id.
        order = {qid: k for k, qid in enumerate(self.questions)}
        graded = ["p_a"] if "p_a" in reviews.columns else []  # logs before graded verdicts
        reviews = (
            reviews.select(*_REVIEW_COLUMNS, *graded)
            .with_columns(
                _verdict_column(),
                pl.col("question_id")
                .replace_strict(categories, default=None, return_dtype=pl.String)
                .alias("category"),
                pl.col("question_id")
                .replace_strict(order, default=len(order), return_dtype=pl.Int64)
                .alias("_order"),
            )
            .sort("_order", "question_id", "model_a", "model_b", "reviewer", "id")
            .drop("_order")
        )
        answers = {row["id"]: row for row in log.read("answers").iter_rows(named=True)}
        discussions = log.read("discussions")
        self.snapshot = Snapshot(
            reviews, answers, discussions if discussions.height else None, _facets(reviews)
        )
        self._signature = signature
        return True

    # What there is to filter by.

    def facets(self) -> dict[str, list[str]]:
        """Every model, reviewer, verdict and category that occurs in the reviews."""
        return self.snapshot.facets

    def select(self, where: BattleFilter) -> pl.DataFrame:
        """The reviews that match a filter, in question, pair, reviewer order."""
        frame = self.reviews
        if where.model is not None:
            frame = frame.filter(
                (pl.col("model_a") == where.model) | (pl.col("model_b") == where.model)
            )
        if where.reviewer is not None:
            frame = frame.filter(pl.col("reviewer") == where.reviewer)
        if where.verdict is not None:
            frame = frame.filter(pl.col("verdict") == where.verdict)
        if where.category is not None:
            frame = frame.filter(pl.col("category") == where.category)
        return frame

    def page(self, where: BattleFilter, page: int, per_page: int) -> dict[str, Any]:
        """One page (1-based) of the matching reviews, without their texts, and the total."""
        frame = self.select(where)
        total = frame.height
        pages = max(1, math.ceil(total / per_page))
        page = min(max(page, 1), pages)
        rows = frame.slice((page - 1) * per_page, per_page).select(
            "id", "question_id", "category", "model_a", "model_b", "reviewer", "verdict"
        )
        return {
            "total": total,
            "page": page,
            "pages": pages,
            "per_page": per_page,
            "rows": rows.to_dicts(),
        }

    # One battle in full.

    def answer(self, answer_id: str | None) -> dict[str, Any] | None:
        """An answer's model, turns, status and error (None when not logged)."""
        return _answer(self.snapshot, answer_id)

    def question(self, question_id: str) -> dict[str, Any]:
        """A question's turns and category (empty turns when the questions file is unavailable)."""
        q = self.questions.get(question_id)
        return {
            "id": question_id,
            "turns": [] if q is None else list(q.turns),
            "category": None if q is None else q.category,
        }

    def battle(self, review_id: str) -> dict[str, Any] | None:
        """The battle a review belongs to: question, answers, every review, every discussion."""
        snap = self.snapshot
        hit = snap.reviews.filter(pl.col("id") == review_id)
        if hit.height == 0:
            return None
        row = hit.row(0, named=True)
        return self._battle(
            snap, row["question_id"], row["answer_a_id"], row["answer_b_id"], review_id
        )

    def _battle(
        self,
        snap: Snapshot,
        question_id: str,
        first: str | None,
        second: str | None,
        focus: str | None = None,
    ) -> dict[str, Any]:
        pair = [a for a in (first, second) if a is not None]
        reviews = snap.reviews.filter(
            (pl.col("question_id") == question_id)
            & pl.col("answer_a_id").is_in(pair)
            & pl.col("answer_b_id").is_in(pair)
        )
        shown = ["id", "model_a", "model_b", "reviewer", "verdict", "status", "error", "text"]
        shown += ["answer_a_id", *(["p_a"] if "p_a" in reviews.columns else [])]
        return {
            "question": self.question(question_id),
            "answers": [_answer(snap, first), _answer(snap, second)],
            "focus": focus,
            "reviews": [
                {k: _number(v) for k, v in r.items()}
                for r in reviews.select(shown).iter_rows(named=True)
            ],
            "discussions": _discussions(snap, question_id, set(pair)),
        }

    # The battles worth reading first.

    def disputed(self, limit: int) -> list[dict[str, Any]]:
        """Up to `limit` battles whose reviewers disagree most, each in full (see `battle`).

        Every counted verdict (A, B, tie) is turned into a vote for the first
        of the two answers (by id), the second, or a tie; the dispute is one
        minus the share of the most common vote. Ties are broken by the
        number of votes (more first), then by question and answer ids.
        """
        snap = self.snapshot
        counted = snap.reviews.filter(pl.col("verdict").is_in(["A", "B", "tie"]))
        if counted.height == 0 or limit <= 0:
            return []
        low = pl.min_horizontal("answer_a_id", "answer_b_id")
        high = pl.max_horizontal("answer_a_id", "answer_b_id")
        first_wins = ((pl.col("verdict") == "A") & (pl.col("answer_a_id") == low)) | (
            (pl.col("verdict") == "B") & (pl.col("answer_b_id") == low)
        )
        votes = (
            counted.with_columns(low.alias("low"), high.alias("high"))
            .group_by("question_id", "low", "high")
            .agg(
                pl.len().alias("n"),
                first_wins.sum().alias("first"),
                (pl.col("verdict") == "tie").sum().alias("ties"),
            )
            .with_columns((pl.col("n") - pl.col("first") - pl.col("ties")).alias("second"))
            .with_columns(
                (
                    1.0
                    - pl.max_horizontal("first", "second", "ties").cast(pl.Float64)
                    / pl.col("n").cast(pl.Float64)
                ).alias("dispute")
            )
            .sort(
                ["dispute", "n", "question_id", "low", "high"],
                descending=[True, True, False, False, False],
            )
            .head(limit)
        )
        out = []
        for v in votes.iter_rows(named=True):
            battle = self._battle(snap, v["question_id"], v["low"], v["high"])
            battle["dispute"] = float(v["dispute"])
            battle["votes"] = {"first": v["first"], "second": v["second"], "ties": v["ties"]}
            out.append(battle)
        return out

    def answer_lengths(self) -> dict[str, tuple[int, int]]:
        """Per model: (answers with a text, their characters in all), ok answers only."""
        out: dict[str, tuple[int, int]] = {}
        for row in self.snapshot.answers.values():
            turns = row.get("answer_turns") or []
            if row.get("status") != "ok" or not turns:
                continue
            count, chars = out.get(row["model"], (0, 0))
            out[row["model"]] = (count + 1, chars + sum(len(t) for t in turns))
        return out

    def calls(self) -> list[dict[str, Any]]:
        """Per table of calls: calls ok, invalid and failed, tokens and cost (every logged row)."""
        if self._log is None:
            return []
        out = []
        details = ["tokens_cache_read", "tokens_cache_write", "tokens_reasoning"]
        needed = ["status", "tokens_in", "tokens_out", "cost_usd", *details]
        extra = {"discussions": ["kind"], "batcheval": ["batch_id"]}
        for table in ("answers", "reviews", "discussions", "batcheval"):
            frame = self._log.read(table, columns=needed + extra.get(table, []))
            if table == "discussions":
                frame = frame.filter(pl.col("kind") == "turn")
            if table == "batcheval":
                # One row per sample; the call columns repeat per batch call.
                calls = frame.unique("batch_id") if frame.height else frame
            else:
                calls = frame
            if frame.height == 0:
                continue
            status = calls["status"].to_list()
            out.append(
                {
                    "table": table,
                    "calls": calls.height,
                    "ok": status.count("ok"),
                    "invalid": status.count("invalid"),
                    "failed": status.count("failed"),
                    "tokens_in": int(frame["tokens_in"].fill_null(0).sum()),
                    "tokens_out": int(frame["tokens_out"].fill_null(0).sum()),
                    "cost_usd": float(frame["cost_usd"].fill_null(0.0).sum()),
                    # Cache and reasoning tokens: None when no row reported any.
                    **{
                        column: None
                        if frame[column].null_count() == frame.height
                        else int(frame[column].fill_null(0).sum())
                        for column in details
                    },
                }
            )
        return out
