"""Pairwise judgments written by other tools, as arena's review rows.

Each format is recognised by the fields of its first record (or forced by
name). Every judgment becomes one row: question, the model shown first (A)
and second (B), the reviewer, a verdict (`A`, `B`, `tie`, `invalid`), and
where the format has them a graded share `p_a` in [0, 1] (the part of a win
credited to A), a `weight`, the question's category, the turn judged and
the two answers' texts.

- AlpacaEval `annotations.json` (a JSON list): `instruction` (the question),
  `generator_1` (A) / `generator_2` (B), `output_1` / `output_2`,
  `annotator` (reviewer), `dataset` (category), `preference` in [1, 2]
  (1: A preferred, 2: B preferred, 1.5 or 0: a draw): `p_a = 2 - preference`.
- arena-hard-auto `model_judgment/<judge>/<model>.jsonl`: `uid` (v2) or
  `question_id` (v0.1), `model`, `baseline` (v0.1 has none: `gpt-4-0314`),
  `judge`, `category`, `games`: game 1 shows the baseline first, game 2 the
  model first; a score `A>>B` / `B>>A` (strong) weighs `strong_win_weight`.
- MT-bench (FastChat) pairwise judgments: `question_id`, `model_1`,
  `model_2`, `g1_winner` (model_1 shown first), `g2_winner` (model_2 shown
  first), winners `model_1` / `model_2` / `tie` (`error`: invalid),
  `judge` (`[model, prompt]`: the model is the reviewer), `turn`.
- Chatbot Arena battles: `model_a`, `model_b`, `winner` (`model_a`,
  `model_b`, `tie`, `tie (bothbad)`), `question_id`, `turn`; no reviewer
  column: every battle is the reviewer `crowd`'s.
- PRD review files, named
  `ratings-<reviewer>/answer_<m1>-vs-answer_<m2>-<reviewer>-reviewer_threeclass.jsonl`:
  `question_id`, `score` 1 (m1 better), 2 (m2 better), 3 (tie); the models
  and the reviewer come from the file's name (the reviewer from the
  `ratings-` folder when there is one).
- Pairwise expert-labelled items (PRD's LFQA file, JSONL or CSV): `question`,
  `answer_a`, `answer_b`, `overall_preference` (-1 A, 1 B, 0 tie); each label
  a review of `answer_a` (A) against `answer_b` (B) by `expert1`, `expert2`,
  ... (see `arena.formats._pairwise_items`).

arena's own reviews files (CSV, JSONL, Parquet with `model_a, model_b,
reviewer, score|verdict`) are read by `arena.report`; `detect_format` names
them `arena`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.formats._checks import check_judgment_record
from arena.formats._errors import FormatError
from arena.formats._pairwise_items import (
    ITEM_SIDES,
    expert_name,
    is_pairwise_item,
    read_pairwise_items,
)
from arena.formats._records import Record, read_records

__all__ = [
    "ARENA_HARD_V01_BASELINE",
    "CROWD",
    "GAMES",
    "JUDGMENT_COLUMNS",
    "JUDGMENT_FORMATS",
    "Judgments",
    "detect_format",
    "read_judgments",
]

# How an MT-bench record's two games count: as two reviews, or merged into one.
GAMES = ("separate", "merged")
JUDGMENT_FORMATS = (
    "arena",
    "alpacaeval",
    "arena-hard",
    "mt-bench",
    "chatbot-arena",
    "prd",
    "pairwise-items",
)
# The columns of `Judgments.columns`, in order.
JUDGMENT_COLUMNS = (
    "question_id",
    "model_a",
    "model_b",
    "reviewer",
    "verdict",
    "p_a",
    "weight",
    "category",
    "turn",
    "answer_a",
    "answer_b",
    "where",
)
# The reviewer of a Chatbot Arena battle: the crowd of voters.
CROWD = "crowd"
# arena-hard v0.1 judgment records name no baseline: the benchmark's fixed one.
ARENA_HARD_V01_BASELINE = "gpt-4-0314"

_PRD_NAME = re.compile(
    r"^answer[_-](?P<m1>.+?)-vs-answer[_-](?P<rest>.+)[_-]reviewer(?:[_-]threeclass)?$"
)


@dataclass
class Judgments:
    """The judgments of one file as columns (see JUDGMENT_COLUMNS); `where` names each row."""

    path: Path
    format: str
    columns: dict[str, list[Any]] = field(default_factory=lambda: {c: [] for c in JUDGMENT_COLUMNS})
    # AlpacaEval annotations of a model against itself (the baseline's own
    # annotations file): skipped, counted per model.
    skipped_self: dict[str, int] = field(default_factory=dict)

    def add(
        self,
        where: str,
        question: str,
        model_a: str,
        model_b: str,
        reviewer: str,
        verdict: str,
        *,
        p_a: float | None = None,
        weight: float | None = None,
        category: str | None = None,
        turn: int | None = None,
        answers: tuple[str | None, str | None] = (None, None),
    ) -> None:
        """Append one judgment."""
        if model_a == model_b:
            raise FormatError(self.path, where, f"model {model_a!r} against itself")
        row = (question, model_a, model_b, reviewer, verdict, p_a, weight, category, turn)
        for name, value in zip(JUDGMENT_COLUMNS, (*row, *answers, where), strict=True):
            self.columns[name].append(value)

    def __len__(self) -> int:
        return len(self.columns["question_id"])


def _text(path: Path, where: str, obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    if value is None or isinstance(value, (dict, list, bool)) or str(value).strip() == "":
        raise FormatError(path, f"{where}: {key}", "missing (expected a non-empty string)")
    return str(value).strip()


def _optional_text(obj: Mapping[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None or isinstance(value, (dict, list, bool)) or str(value) == "":
        return None
    return str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _verdict_of(p_a: float) -> str:
    return "A" if p_a > 0.5 else "B" if p_a < 0.5 else "tie"


# --- AlpacaEval -------------------------------------------------------------------


def _alpacaeval(out: Judgments, where: str, obj: Mapping[str, Any]) -> None:
    path = out.path
    instruction = _text(path, where, obj, "instruction")
    extra = obj.get("input")
    if isinstance(extra, str) and extra.strip():
        instruction = f"{instruction}\n\n{extra.strip()}"
    model_a = _text(path, where, obj, "generator_1")
    model_b = _text(path, where, obj, "generator_2")
    if model_a == model_b:  # the baseline against itself: no battle
        out.skipped_self[model_a] = out.skipped_self.get(model_a, 0) + 1
        return
    reviewer = _optional_text(obj, "annotator") or "alpacaeval"
    raw = obj.get("preference")
    preference = _number(raw)
    if raw is not None and preference is None:
        raise FormatError(path, f"{where}: preference", f"not a number: {raw!r}")
    verdict, p_a = "invalid", None
    if preference is not None and not math.isnan(preference):
        if preference == 0.0:  # AlpacaEval's older draw code
            preference = 1.5
        if not 1.0 <= preference <= 2.0:
            raise FormatError(
                path, f"{where}: preference", f"{raw!r} is outside [1, 2] (and not 0, a draw)"
            )
        p_a = 2.0 - preference
        verdict = _verdict_of(p_a)
    # An empty output is an answer of length 0 (AlpacaEval counts it so in avg_length).
    outputs = tuple(
        v if isinstance(v, str) else None for v in (obj.get("output_1"), obj.get("output_2"))
    )
    out.add(
        where,
        instruction,
        model_a,
        model_b,
        reviewer,
        verdict,
        p_a=p_a,
        category=_optional_text(obj, "dataset"),
        answers=(outputs[0], outputs[1]),
    )


# --- arena-hard-auto -----------------------------------------------------------------

# A game's score label: (winner position, strong).
_ARENA_HARD_SCORES: dict[str, tuple[str, bool]] = {
    "A>>B": ("A", True),
    "A>B": ("A", False),
    "A=B": ("tie", False),
    "A<B": ("B", False),
    "A<<B": ("B", True),
    "B>>A": ("B", True),
    "B>A": ("B", False),
    "B=A": ("tie", False),
    "B<A": ("A", False),
    "B<<A": ("A", True),
}


def _judge_name(value: Any) -> str | None:
    """A judge field: a name, or FastChat's `[model, prompt]`."""
    if isinstance(value, list) and value and isinstance(value[0], str):
        return value[0]
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _arena_hard(
    out: Judgments, where: str, obj: Mapping[str, Any], strong_win_weight: float
) -> None:
    path = out.path
    key = "uid" if "uid" in obj else "question_id"
    question = _text(path, where, obj, key)
    model = _text(path, where, obj, "model")
    baseline = _optional_text(obj, "baseline") or ARENA_HARD_V01_BASELINE
    reviewer = _judge_name(obj.get("judge")) or path.parent.name
    games = obj.get("games")
    if not isinstance(games, list) or len(games) != 2:
        raise FormatError(path, f"{where}: games", "expected a list of two games")
    category = _optional_text(obj, "category")
    # Game 1 shows the baseline first (A), game 2 the model first.
    for number, (model_a, model_b) in enumerate(((baseline, model), (model, baseline)), 1):
        game = games[number - 1]
        label = game.get("score") if isinstance(game, dict) else None
        verdict, weight = "invalid", None
        if label is not None:
            if not isinstance(label, str) or label.strip() not in _ARENA_HARD_SCORES:
                known = ", ".join(_ARENA_HARD_SCORES)
                raise FormatError(
                    path, f"{where}: games[{number - 1}].score", f"{label!r} is not one of {known}"
                )
            verdict, strong = _ARENA_HARD_SCORES[label.strip()]
            weight = strong_win_weight if strong else 1.0
        out.add(
            f"{where}: games[{number - 1}]",
            question,
            model_a,
            model_b,
            reviewer,
            verdict,
            weight=weight,
            category=category,
        )


# --- MT-bench -----------------------------------------------------------------------


def _mt_bench_winner(path: Path, where: str, obj: Mapping[str, Any], key: str) -> str:
    """A game's winner: `model_1`, `model_2`, `tie` or `error`."""
    winner = obj[key]
    if winner == "tie" or (isinstance(winner, str) and winner.startswith("tie")):
        return "tie"
    if winner in ("model_1", "model_2"):
        return str(winner)
    if winner == "error" or winner is None:
        return "error"
    raise FormatError(path, f"{where}: {key}", f"{winner!r} is not model_1, model_2, tie or error")


def _mt_bench(out: Judgments, where: str, obj: Mapping[str, Any], games: str) -> None:
    path = out.path
    question = _text(path, where, obj, "question_id")
    model_1 = _text(path, where, obj, "model_1")
    model_2 = _text(path, where, obj, "model_2")
    reviewer = _judge_name(obj.get("judge"))
    if reviewer is None:
        raise FormatError(path, f"{where}: judge", "missing (a name or [model, prompt])")
    turn = _turn(path, where, obj)
    played = [g for g in ("g1", "g2") if f"{g}_winner" in obj]
    winners = {g: _mt_bench_winner(path, where, obj, f"{g}_winner") for g in played}
    if games == "merged" and len(played) == 2:
        # FastChat's pairwise table: a record whose games disagree (or tie) is one tie;
        # one with an error is left out.
        one, two = winners["g1"], winners["g2"]
        merged = (
            "invalid"
            if "error" in (one, two)
            else "tie"
            if one == "tie" or one != two
            else ("A" if one == "model_1" else "B")
        )
        out.add(where, question, model_1, model_2, reviewer, merged, turn=turn)
        return
    # g1 shows model_1 first, g2 model_2 first; winners name the model, not the position.
    for game, (model_a, model_b) in (("g1", (model_1, model_2)), ("g2", (model_2, model_1))):
        if game not in winners:
            continue
        winner = winners[game]
        if winner == "tie":
            verdict = "tie"
        elif winner == "error":
            verdict = "invalid"
        else:
            verdict = "A" if {"model_1": model_1, "model_2": model_2}[winner] == model_a else "B"
        out.add(f"{where}: {game}", question, model_a, model_b, reviewer, verdict, turn=turn)


def _turn(path: Path, where: str, obj: Mapping[str, Any]) -> int | None:
    raw = obj.get("turn")
    if raw is None:
        return None
    number = _number(raw)
    if number is None or number != int(number) or number < 1:
        raise FormatError(path, f"{where}: turn", f"{raw!r} is not a turn number (1, 2, ...)")
    return int(number)


# --- Chatbot Arena ------------------------------------------------------------------

_ARENA_WINNERS = {"model_a": "A", "model_b": "B", "tie": "tie", "tie (bothbad)": "tie"}


def _conversation_answer(value: Any) -> str | None:
    """The assistant turns of a Chatbot Arena conversation, joined by blank lines."""
    if not isinstance(value, list):
        return None
    texts = [
        m["content"]
        for m in value
        if isinstance(m, dict)
        and m.get("role") == "assistant"
        and isinstance(m.get("content"), str)
    ]
    return "\n\n".join(texts) if texts else None


def _chatbot_arena(out: Judgments, where: str, obj: Mapping[str, Any]) -> None:
    path = out.path
    question = _optional_text(obj, "question_id")
    if question is None:
        raise FormatError(path, f"{where}: question_id", "missing (battles are grouped by it)")
    winner = obj.get("winner")
    if winner not in _ARENA_WINNERS:
        known = ", ".join(_ARENA_WINNERS)
        raise FormatError(path, f"{where}: winner", f"{winner!r} is not one of {known}")
    out.add(
        where,
        question,
        _text(path, where, obj, "model_a"),
        _text(path, where, obj, "model_b"),
        CROWD,
        _ARENA_WINNERS[str(winner)],
        category=_optional_text(obj, "category"),
        turn=_turn(path, where, obj),
        answers=(
            _conversation_answer(obj.get("conversation_a")),
            _conversation_answer(obj.get("conversation_b")),
        ),
    )


# --- PRD ----------------------------------------------------------------------------

_PRD_SCORES = {1: "A", 2: "B", 3: "tie"}


def prd_names(path: Path) -> tuple[str, str, str]:
    """(model 1, model 2, reviewer) from a PRD review file's name (and its folder)."""
    match = _PRD_NAME.match(path.stem)
    if match is None:
        raise FormatError(
            path,
            "",
            "a PRD review file's name must read "
            "answer_<m1>-vs-answer_<m2>-<reviewer>-reviewer_threeclass.jsonl",
        )
    rest = match["rest"]
    folder = path.parent.name
    reviewer = folder[len("ratings-") :] if folder.startswith("ratings-") else ""
    half = (len(rest) - 1) // 2
    if reviewer and rest.endswith(f"-{reviewer}"):
        model_2 = rest[: -len(reviewer) - 1]
    elif len(rest) % 2 == 1 and rest[half] == "-" and rest[:half] == rest[half + 1 :]:
        model_2 = reviewer = rest[:half]  # a model reviewing its own battle
    else:
        model_2, _, reviewer = rest.rpartition("-")
    if not model_2 or not reviewer:
        raise FormatError(path, "", "cannot tell the second model from the reviewer in the name")
    return match["m1"], model_2, reviewer


def _prd(out: Judgments, where: str, obj: Mapping[str, Any], names: tuple[str, str, str]) -> None:
    path = out.path
    question = _text(path, where, obj, "question_id")
    raw = obj.get("score")
    number = _number(raw)
    if isinstance(raw, list) and len(raw) == 2:  # PRD's score-pair reviews
        pair = [_number(v) for v in raw]
        if pair[0] is not None and pair[1] is not None:
            number = 1 if pair[0] > pair[1] else 2 if pair[1] > pair[0] else 3
    verdict = _PRD_SCORES.get(int(number)) if number is not None and number == int(number) else None
    if verdict is None:
        raise FormatError(path, f"{where}: score", f"{raw!r} is not 1, 2 or 3 (or a score pair)")
    out.add(where, question, names[0], names[1], names[2], verdict)


def _items(out: Judgments, rows: Sequence[Record]) -> None:
    """Each label of a pairwise item: a review of answer_a (A) against answer_b (B)."""
    side_a, side_b = ITEM_SIDES
    for item in read_pairwise_items(out.path, rows):
        for n, label in enumerate(item.labels, 1):
            out.add(
                item.where,
                item.id,
                side_a,
                side_b,
                expert_name(n),
                label,
                answers=(item.answer_a, item.answer_b),
            )


# --- detection ----------------------------------------------------------------------


def detect_format(path: Path, first: Mapping[str, Any]) -> str:
    """The format of a file whose first record is `first` (one of JUDGMENT_FORMATS)."""
    keys = set(first)
    if is_pairwise_item(first):
        return "pairwise-items"
    if {"generator_1", "generator_2"} <= keys and "preference" in keys:
        return "alpacaeval"
    if "games" in keys and "model" in keys:
        return "arena-hard"
    if {"model_1", "model_2"} <= keys and ("g1_winner" in keys or "g2_winner" in keys):
        return "mt-bench"
    if {"model_a", "model_b", "winner"} <= keys and "reviewer" not in keys:
        return "chatbot-arena"
    if {"model_a", "model_b"} <= keys or "reviewer" in keys:
        return "arena"  # its reader names what is missing
    if "score" in keys and _PRD_NAME.match(path.stem):
        return "prd"
    if {"answer1_id", "answer2_id", "score"} <= keys:
        return "prd"
    raise FormatError(
        path,
        "",
        "not a judgments file this reader knows: expected the fields of AlpacaEval "
        "annotations (generator_1, generator_2, preference), arena-hard judgments "
        "(model, games), MT-bench pairwise judgments (model_1, model_2, g1_winner), "
        "Chatbot Arena battles (model_a, model_b, winner), a PRD review file, "
        "pairwise items (question, answer_a, answer_b, overall_preference), or "
        "arena's own (model_a, model_b, reviewer, score or verdict)",
    )


_ARENA_VERDICTS = {"a": "A", "b": "B", "tie": "tie", "invalid": "invalid"}
_ARENA_SCORES = {-1.0: "A", 0.0: "tie", 1.0: "B"}


def _arena(out: Judgments, where: str, obj: Mapping[str, Any]) -> None:
    """arena's own row: question_id, model_a, model_b, reviewer, score | verdict | p_a."""
    path = out.path
    names = [_text(path, where, obj, k) for k in ("question_id", "model_a", "model_b", "reviewer")]
    p_a = _number(obj.get("p_a")) if obj.get("p_a") not in (None, "") else None
    if p_a is not None and not 0.0 <= p_a <= 1.0:
        raise FormatError(path, f"{where}: p_a", f"{obj.get('p_a')!r} is not in [0, 1]")
    weight = _number(obj.get("weight")) if obj.get("weight") not in (None, "") else None
    if weight is not None and not (weight > 0 and math.isfinite(weight)):
        raise FormatError(path, f"{where}: weight", f"{obj.get('weight')!r} is not positive")
    if obj.get("score") not in (None, ""):
        score = _number(obj.get("score"))
        verdict = None if score is None else _ARENA_SCORES.get(score)
        if verdict is None:
            raise FormatError(path, f"{where}: score", f"{obj.get('score')!r} is not -1, 0 or 1")
    elif obj.get("verdict") not in (None, ""):
        verdict = _ARENA_VERDICTS.get(str(obj.get("verdict")).strip().lower())
        if verdict is None:
            raise FormatError(
                path, f"{where}: verdict", f"{obj.get('verdict')!r} is not A, B, tie or invalid"
            )
    elif p_a is not None:
        verdict = _verdict_of(p_a)
    else:
        raise FormatError(path, f"{where}: score", "missing (score, verdict or p_a)")
    question, model_a, model_b, reviewer = names
    out.add(
        where,
        question,
        model_a,
        model_b,
        reviewer,
        verdict,
        p_a=p_a,
        weight=weight,
        category=_optional_text(obj, "category"),
    )


def judgment_records(path: Path) -> list[Record]:
    """The records of a judgments file: JSON / JSONL, CSV rows or Parquet rows."""
    suffix = path.suffix.lower()
    if suffix == ".csv":
        import csv

        try:
            with path.open(newline="", encoding="utf-8") as handle:
                return [(f"line {n}", dict(row)) for n, row in enumerate(csv.DictReader(handle), 2)]
        except (OSError, UnicodeDecodeError, csv.Error) as exc:
            raise FormatError(path, "", f"cannot read CSV: {exc}") from None
    if suffix == ".parquet":
        import polars as pl  # only for Parquet: the formats package stays light to import

        try:
            rows = pl.read_parquet(path).to_dicts()
        except Exception as exc:  # noqa: BLE001 - any reader failure is bad input
            raise FormatError(path, "", f"cannot read Parquet: {exc}") from None
        return [(f"row {n}", row) for n, row in enumerate(rows, 1)]
    return read_records(path)


def read_judgments(
    path: Path,
    *,
    format: str | None = None,
    strong_win_weight: float = 3.0,
    records: Sequence[Record] | None = None,
    games: str = "separate",
) -> Judgments:
    """Every judgment of a file, in any of JUDGMENT_FORMATS (arena.report reads arena's own
    big files faster, as frames).

    `format` forces one of JUDGMENT_FORMATS; by default it is detected from
    the first record's fields. `strong_win_weight`: the weight of an
    arena-hard strong verdict (`A>>B`), 3 as in arena-hard's own results.
    `records`: the file's records when already read. `games` (GAMES): an
    MT-bench record's two games as two reviews (`separate`), or as one, as
    FastChat's pairwise table counts them (`merged`: the winner where both
    games name it, else a tie; a game in error makes it invalid).
    """
    if games not in GAMES:
        raise FormatError(path, "", f"games must be one of {', '.join(GAMES)}, not {games!r}")
    if format is not None and format not in JUDGMENT_FORMATS:
        raise FormatError(path, "", f"unknown judgments format {format!r}")
    if not strong_win_weight > 0 or not math.isfinite(strong_win_weight):
        raise FormatError(path, "", f"strong win weight must be positive, not {strong_win_weight}")
    rows = list(judgment_records(path) if records is None else records)
    if not rows:
        raise FormatError(path, "", "no judgments in the file")
    found = format or detect_format(path, rows[0][1])
    out = Judgments(path, found)
    if found == "pairwise-items":
        _items(out, rows)
        return out
    reader: Callable[[Judgments, str, Mapping[str, Any]], None]
    if found == "arena":
        reader = _arena
    elif found == "alpacaeval":
        reader = _alpacaeval
    elif found == "arena-hard":

        def reader(out: Judgments, where: str, obj: Mapping[str, Any]) -> None:
            _arena_hard(out, where, obj, strong_win_weight)

    elif found == "mt-bench":

        def reader(out: Judgments, where: str, obj: Mapping[str, Any]) -> None:
            _mt_bench(out, where, obj, games)

    elif found == "chatbot-arena":
        reader = _chatbot_arena
    else:
        names = prd_names(path)

        def reader(out: Judgments, where: str, obj: Mapping[str, Any]) -> None:
            _prd(out, where, obj, names)

    for where, obj in rows:
        check_judgment_record(path, where, obj)  # the fields' types (arena.formats._checks)
        reader(out, where, obj)
    return out
