"""MT-bench single-answer grades: FastChat's `model_judgment/<judge>_single.jsonl`.

Each record grades one answer of one model on its own, 1 to 10: `question_id`,
`model`, `judge` (a list: the judge model and its prompt's name), `score` (the
grade; -1 where FastChat could not read one from the judgment text) and `turn`
(1 or 2). These are per-answer scores, not battles: arena reads them as such and
reports FastChat's single-mode table (`single_grade_table`): each model's mean
grade over its first turns, its second turns, and over both (FastChat's
"Average", the MT-bench score), grades of -1 left out as FastChat leaves them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from arena.formats._errors import FormatError
from arena.formats._records import read_records

__all__ = ["SingleGrades", "is_single_grades", "read_single_grades", "single_grade_table"]

# FastChat's grade when the judgment text held none ("Rating: [[x]]" missing).
UNREAD = -1


def is_single_grades(first: Mapping[str, Any]) -> bool:
    """Whether a record is an MT-bench single-answer grade (one model, one `score`)."""
    keys = set(first)
    pairwise = {"model_1", "model_2", "model_a", "model_b", "games", "generator_1"}
    return {"question_id", "model", "score", "judge"} <= keys and not keys & pairwise


@dataclass
class SingleGrades:
    """Grades read from one or more files: one row per graded answer and turn."""

    question_id: list[str] = field(default_factory=list)
    model: list[str] = field(default_factory=list)
    judge: list[str] = field(default_factory=list)
    turn: list[int] = field(default_factory=list)
    score: list[float] = field(default_factory=list)
    unread: int = 0  # grades of -1: no grade in the judgment text, left out
    files: list[Path] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.score)


def _judge(path: Path, where: str, value: Any) -> str:
    name = value[0] if isinstance(value, list | tuple) and value else value
    if not isinstance(name, str) or not name.strip():
        raise FormatError(path, f"{where}: judge", f"expected the judge's name, not {value!r}")
    return name.strip()


def _text(path: Path, where: str, obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, str | int) or str(value).strip() == "":
        raise FormatError(path, f"{where}: {key}", f"expected a name or number, not {value!r}")
    return str(value).strip()


def read_single_grades(paths: Sequence[Path], into: SingleGrades | None = None) -> SingleGrades:
    """Every grade of `paths` (FastChat single-mode JSONL files), checked.

    A grade must be a number (-1: unread, counted in `unread` and left out);
    `turn` 1 or more (absent: 1). Raises FormatError naming the file, the line
    and the field.
    """
    out = into if into is not None else SingleGrades()
    for path in paths:
        records = read_records(path, allow_array=False)
        if not records:
            raise FormatError(path, "", "no grades in the file")
        for where, obj in records:
            if not is_single_grades(obj):
                raise FormatError(
                    path,
                    where,
                    "not an MT-bench single-answer grade (question_id, model, judge, score): "
                    "single grades and pairwise judgments cannot be read together",
                )
            score = obj["score"]
            if isinstance(score, bool) or not isinstance(score, int | float):
                raise FormatError(path, f"{where}: score", f"expected a number, not {score!r}")
            if not math.isfinite(score):
                raise FormatError(path, f"{where}: score", f"expected a number, not {score!r}")
            turn = obj.get("turn", 1)
            if isinstance(turn, bool) or not isinstance(turn, int) or turn < 1:
                raise FormatError(path, f"{where}: turn", f"expected 1, 2, ..., not {turn!r}")
            question = _text(path, where, obj, "question_id")
            model = _text(path, where, obj, "model")
            judge = _judge(path, where, obj.get("judge"))
            if score == UNREAD:
                out.unread += 1
                continue
            out.question_id.append(question)
            out.model.append(model)
            out.judge.append(judge)
            out.turn.append(turn)
            out.score.append(float(score))
        out.files.append(path)
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def single_grade_table(grades: SingleGrades) -> dict[str, Any]:
    """FastChat's single-mode table: each model's mean grade per turn and over all turns.

    `models` is ordered by the overall mean (best first; FastChat's "Average",
    the MT-bench score), each with `score`, `turn_1`, `turn_2` (null where the
    model has no such grade), `n` (grades counted), and the judges.
    """
    by_model: dict[str, dict[int, list[float]]] = {}
    for model, turn, score in zip(grades.model, grades.turn, grades.score, strict=True):
        by_model.setdefault(model, {}).setdefault(turn, []).append(score)
    rows: list[dict[str, Any]] = []
    for model, turns in by_model.items():
        every = [s for scores in turns.values() for s in scores]
        rows.append(
            {
                "model": model,
                "score": _mean(every),
                "turn_1": _mean(turns.get(1, [])),
                "turn_2": _mean(turns.get(2, [])),
                "n": len(every),
            }
        )
    rows.sort(key=lambda row: (-(row["score"] or 0.0), row["model"]))
    for rank, row in enumerate(rows, 1):
        row["rank"] = rank
    warnings = []
    if grades.unread:
        warnings.append(
            f"{grades.unread} grade{'s' if grades.unread != 1 else ''} of -1 (no rating in the "
            "judgment text) left out, as FastChat leaves them"
        )
    return {
        "kind": "single-answer grades",
        "source": ", ".join(str(f) for f in grades.files),
        "judges": sorted(set(grades.judge)),
        "grades": len(grades),
        "questions": len(set(grades.question_id)),
        "models": rows,
        "warnings": warnings,
    }
