"""Where reviews come from: a run directory, or a file of judgments made elsewhere.

Both become a frame with the columns of the log's `reviews` table that ranking
needs (`question_id, model_a, model_b, reviewer, verdict`, plus `status` and
`cost_usd` when known). Bad input raises `LeaderboardInputError` naming the
file, the row (or column) and the problem.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import math
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from arena.config import ConfigError
from arena.formats import (
    JUDGMENT_COLUMNS,
    JUDGMENT_FORMATS,
    SCALAR_FIELDS,
    FormatError,
    Judgments,
    check_judgment_record,
    check_turn,
    detect_format,
    is_single_grades,
    load_json,
    read_judgments,
    read_records,
    read_single_grades,
    single_grade_table,
)
from arena.rank import STYLE_FEATURES, answer_style
from arena.rank._cores import cores
from arena.report._columnar import Columns as _Columns
from arena.report._columnar import read_alpacaeval_columns
from arena.report._order import sort_by_id
from arena.rundir import current_rows
from arena.rundir._planfile import plan_digests, plan_fingerprint
from arena.shard import recorded_shard
from arena.stage import StageBoard
from arena.stages import all_parts
from arena.store import RunLog
from arena.store._log import CODED_PARTS, LEAN_CODED_PARTS

__all__ = [
    "DUPLICATES",
    "IMPORT_COLUMNS",
    "LeaderboardInputError",
    "MissingShards",
    "RunData",
    "load_reviews_file",
    "load_run",
    "check_one_tournament",
    "drop_duplicates",
    "judgment_sources",
    "latest_rows",
    "load_runs",
    "load_single_grades",
]

IMPORT_COLUMNS = ("question_id", "model_a", "model_b", "reviewer")
_VERDICTS = {"a": "A", "b": "B", "tie": "tie", "invalid": "invalid"}
_SCORES = {-1: "A", 0: "tie", 1: "B"}
# What to do with a review read twice (`load_reviews_file(duplicates=...)`).
DUPLICATES = ("last", "first", "all", "error")
# A review's identity among imported judgments: the same review read twice repeats it.
DUPLICATE_KEY = ("question_id", "model_a", "model_b", "reviewer", "turn")
_FILE = "_arena_file"
_HASH = "_arena_text_hash"


@dataclass
class _Styles:
    """Answers' style counts by text (`_cached_styles`): each distinct text's 64-bit hash
    (`_HASH`) and its STYLE_FEATURES."""

    measured: pl.DataFrame | None = None


_SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".parquet": "parquet",
}


class LeaderboardInputError(ConfigError):
    """Unusable leaderboard input: names the file, where in it, and the problem (exit 2)."""


@dataclass
class RunData:
    """What a run directory holds for the leaderboard."""

    directory: Path
    reviews: pl.DataFrame
    answers: pl.DataFrame | None
    tournament: dict[str, Any] | None
    contestants: list[str] | None = None
    reviewers: list[str] | None = None
    sim_skill: dict[str, float] = field(default_factory=dict)
    batcheval: pl.DataFrame | None = None  # the BatchEval log table (for its cost)
    # Every directory read (several for the shards of one tournament).
    directories: tuple[Path, ...] = ()
    # Shards of the split that were not given (`allow_missing_shards`): a partial result.
    missing_shards: MissingShards | None = None


def _where(kind: str, index: int) -> str:
    """Human position of data row `index` (0-based): lines for text files."""
    if kind == "jsonl":
        return f"line {index + 1}"
    if kind == "csv":
        return f"line {index + 2}"  # line 1 is the header
    return f"row {index + 1}"


def _frame_of_records(records: Sequence[tuple[str, dict[str, Any]]]) -> pl.DataFrame:
    """Records as a frame of text columns (what the checks below cast from)."""
    rows = [row for _, row in records]
    if not rows:
        return pl.DataFrame()
    text = {
        key: [None if row.get(key) is None else str(row.get(key)) for row in rows]
        for key in dict.fromkeys(k for row in rows for k in row)
    }
    return pl.DataFrame(text, schema={key: pl.String for key in text})


def _records(path: Path, *, allow_array: bool = True) -> list[tuple[str, dict[str, Any]]]:
    try:
        records = read_records(path, allow_array=allow_array)
        for where, record in records:  # no list or object where a name or number belongs
            check_judgment_record(path, where, record)
        return records
    except FormatError as exc:
        raise LeaderboardInputError(exc.file, exc.where, exc.problem) from None


def _read_jsonl(path: Path) -> pl.DataFrame:
    try:
        frame = pl.read_ndjson(path, infer_schema_length=None)
    except Exception:  # noqa: BLE001 - re-parsed below to name the bad line
        pass
    else:  # a list or an object in a column: re-read below, which names the line and field
        # polars reads a list or object among strings as its JSON text: a name field
        # with a value that starts like one is read again below, record by record
        text = [c for c, t in frame.schema.items() if c in SCALAR_FIELDS and t == pl.String]
        looks_nested = pl.any_horizontal(pl.col(c).str.contains(r"^\s*[\[{]") for c in text)
        nested = any(dtype.is_nested() for dtype in frame.dtypes) or (
            bool(text) and bool(frame.select(looks_nested.any()).item())
        )
        if not nested:
            return frame
    return _frame_of_records(_records(path, allow_array=False))


def _first_object(path: Path) -> dict[str, Any] | None:
    """The first record of a JSONL file, read without the rest (None: no record)."""
    with path.open(encoding="utf-8", newline="\n", errors="replace") as handle:
        for line in handle:
            if line.strip():
                try:
                    first = load_json(path, line)
                except FormatError:
                    return None  # the full read names the place
                return first if isinstance(first, dict) else None
    return None


def _check_file(path: Path) -> str:
    if not path.exists():
        raise LeaderboardInputError(path, "", "no such file")
    if path.is_dir():
        raise LeaderboardInputError(path, "", "is a directory, expected a reviews file")
    kind = _SUFFIXES.get(path.suffix.lower())
    if kind is None:
        known = ", ".join(sorted(_SUFFIXES))
        raise LeaderboardInputError(path, "", f"unknown file type (expected {known})")
    return kind


def _read(path: Path) -> tuple[pl.DataFrame, str]:
    kind = _check_file(path)
    try:
        if kind == "jsonl":
            frame = _read_jsonl(path)
        elif kind == "json":
            frame = _frame_of_records(_records(path))
        elif kind == "csv":
            frame = pl.read_csv(path, infer_schema_length=None)
        else:
            frame = pl.read_parquet(path)
    except LeaderboardInputError:
        raise
    except pl.exceptions.NoDataError:
        frame = pl.DataFrame()
    except Exception as exc:  # noqa: BLE001 - any reader failure is bad input
        raise LeaderboardInputError(path, "", f"cannot read {kind}: {exc}") from None
    return frame, kind


def _first_bad(mask: pl.Series) -> int:
    return int(mask.arg_true()[0])


def _verdicts_from_scores(path: Path, kind: str, column: pl.Series) -> pl.Series:
    numbers = column.cast(pl.Float64, strict=False)
    bad = numbers.is_null() | ~numbers.is_in([-1.0, 0.0, 1.0])
    if bad.any():
        row = _first_bad(bad)
        value = column[row]
        problem = "missing score" if value is None else f"unknown score {value!r}"
        raise LeaderboardInputError(
            path, _where(kind, row), f"{problem} (expected -1, 0 or 1; a graded one is p_a)"
        )
    return numbers.cast(pl.Int64).replace_strict(_SCORES, return_dtype=pl.String)


def _normalise_verdicts(path: Path, kind: str, column: pl.Series) -> pl.Series:
    lowered = column.cast(pl.String).str.strip_chars().str.to_lowercase()
    bad = lowered.is_null() | ~lowered.is_in(list(_VERDICTS))
    if bad.any():
        row = _first_bad(bad)
        value = column[row]
        problem = "missing verdict" if value is None else f"unknown verdict {value!r}"
        raise LeaderboardInputError(path, _where(kind, row), f"{problem} (expected A, B or tie)")
    return lowered.replace_strict(_VERDICTS, return_dtype=pl.String)


def _graded(path: Path, kind: str, frame: pl.DataFrame) -> dict[str, pl.Series]:
    """`p_a` (in [0, 1]) and `weight` (positive) when the file has them; null: not given."""
    out: dict[str, pl.Series] = {}
    for name, expected in (("p_a", "a number in [0, 1]"), ("weight", "a positive number")):
        if name not in frame.columns:
            continue
        raw = frame[name]
        numbers = raw.cast(pl.Float64, strict=False)
        given = raw.is_not_null()
        value = numbers.fill_null(-1.0).fill_nan(-1.0)
        fine = (
            (value >= 0.0) & (value <= 1.0) if name == "p_a" else (value > 0.0) & value.is_finite()
        )
        bad = given & ~fine
        if bad.any():
            row = _first_bad(bad)
            raise LeaderboardInputError(
                path, _where(kind, row), f"{name} must be {expected}, not {raw[row]!r}"
            )
        if given.any():
            out[name] = numbers
    return out


def _verdicts_from_p_a(p_a: pl.Series) -> pl.Series:
    return (
        pl.DataFrame({"p": p_a})
        .select(
            pl.when(pl.col("p").is_null())
            .then(pl.lit("invalid"))
            .when(pl.col("p") > 0.5)
            .then(pl.lit("A"))
            .when(pl.col("p") < 0.5)
            .then(pl.lit("B"))
            .otherwise(pl.lit("tie"))
        )
        .to_series()
    )


_GLOB_CHARACTERS = frozenset("*?[")


def _judgment_files(path: Path) -> list[tuple[Path, bool]]:
    """(file, found in a folder) for a reviews file, every reviews file in a folder and
    its subfolders (by path), or every match of a glob pattern (`**` for any depth)."""
    if not path.exists() and _GLOB_CHARACTERS & set(str(path)):
        matches = sorted(Path(p) for p in glob.glob(str(path), recursive=True))
        if not matches:
            raise LeaderboardInputError(path, "", "no file or folder matches this pattern")
        return [found for match in matches for found in _judgment_files(match)]
    if not path.exists():
        raise LeaderboardInputError(path, "", "no such file or folder")
    if not path.is_dir():
        return [(path, False)]
    files = sorted(p for p in path.rglob("*") if p.suffix.lower() in _SUFFIXES and p.is_file())
    if not files:
        known = ", ".join(sorted(_SUFFIXES))
        raise LeaderboardInputError(path, "", f"a folder with no reviews files ({known}) in it")
    return [(file, True) for file in files]


def load_single_grades(paths: Sequence[str | Path]) -> dict[str, Any] | None:
    """FastChat's single-mode table of MT-bench single-answer grade files
    (`arena.formats.single_grade_table`), or None when the files are not such grades.

    Files, folders and patterns as for `load_reviews_file` (None when one is
    missing: reading them as judgments names it); grades mixed with pairwise
    judgments raise LeaderboardInputError (they are no battles).
    """
    try:
        found = [file for source in paths for file, _ in _judgment_files(Path(source))]
    except LeaderboardInputError:
        return None  # a missing file or folder: the pairwise reading says so
    kinds = []
    for file in found:
        jsonl = _SUFFIXES.get(file.suffix.lower()) == "jsonl" and file.is_file()
        first = _first_object(file) if jsonl else None
        kinds.append(first is not None and is_single_grades(first))
    if not any(kinds):
        return None
    if not all(kinds):
        other = next(f for f, single in zip(found, kinds, strict=True) if not single)
        raise LeaderboardInputError(
            other,
            "",
            "not MT-bench single-answer grades, given with grade files: single grades "
            "(one answer's 1-10 score) and pairwise judgments are ranked apart",
        )
    try:
        return single_grade_table(read_single_grades(found))
    except FormatError as exc:
        raise LeaderboardInputError(exc.file, exc.where, exc.problem) from None


def judgment_sources(paths: Sequence[str | Path]) -> bool:
    """Whether positional sources are judgment files rather than run directories: none is
    a run directory, and each is a file, a glob pattern, or a folder holding reviews files."""

    def judgments(path: Path) -> bool:
        if path.is_file():
            return True
        if not path.exists():
            return bool(_GLOB_CHARACTERS & set(str(path)))
        if is_run_directory(path):
            return False
        return any(p.suffix.lower() in _SUFFIXES for p in path.rglob("*"))

    return bool(paths) and all(judgments(Path(p)) for p in paths)


class _NotJudgments(LeaderboardInputError):
    """A file whose first record is no judgments format: an error when named, skipped
    when found in a folder (an AlpacaEval results folder's `model_outputs.json`)."""


def drop_duplicates(
    frame: pl.DataFrame, files: Sequence[Path], keep: str
) -> tuple[pl.DataFrame, str | None]:
    """`frame` with each repeated review counted once, and the line that says so.

    A review repeats another when they share DUPLICATE_KEY (the columns of it
    the frame has): the same question, the same models in the same positions
    (so both games of one pair are two reviews), the same reviewer and turn.
    `keep`: "last" or "first" keeps that copy (rows in reading order),
    "error" raises LeaderboardInputError naming the first repeat's files.
    `frame[_FILE]` is each row's index in `files`. (None: nothing repeats.)
    """
    key = [c for c in DUPLICATE_KEY if c in frame.columns]
    occurrence = pl.int_range(pl.len()).over(key)
    copies = pl.len().over(key)
    marks = frame.select(occurrence.alias("k"), copies.alias("n"))
    repeated = marks["n"] > 1
    if not repeated.any():
        return frame, None
    kept_mask = marks["k"] == (marks["n"] - 1 if keep == "last" else 0)
    dropped = int((~kept_mask).sum())
    involved = frame.filter(repeated)[_FILE].unique().sort().to_list()
    names = [str(files[k]) for k in involved]
    if keep == "error":
        row = frame.filter(repeated).row(0, named=True)
        what = ", ".join(f"{c} {row[c]!r}" for c in key if row[c] is not None)
        raise LeaderboardInputError(
            names[0],
            "",
            f"a review read twice ({what}; {dropped} repeats in all, in "
            f"{', '.join(names)}): choose --duplicates last, first or all",
        )
    shown = ", ".join(names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
    note = (
        f"{dropped} review{'s' if dropped != 1 else ''} repeat a review already read (same "
        f"question, models in the same positions, reviewer and turn): the {keep} copy of "
        f"each is counted (--duplicates {keep}; first, last, all or error to choose); "
        f"repeats in {shown}"
    )
    return frame.filter(kept_mask), note


def load_reviews_file(
    path: str | Path | Sequence[str | Path],
    *,
    format: str | None = None,
    strong_win_weight: float = 3.0,
    keep_texts: bool = False,
    duplicates: str = "last",
    notes: list[str] | None = None,
    games: str = "separate",
) -> pl.DataFrame:
    """Read judgments into the ranking's reviews columns, from one or several files or folders.

    arena's own files (JSONL, JSON, CSV or Parquet) need `question_id,
    model_a, model_b, reviewer` and `score` (-1 = model_a better, 0 = tie, 1 =
    model_b better), `verdict` (A, B, tie; also `invalid`) or `p_a` (the share
    of a win credited to model_a, in [0, 1]); `score` wins over `verdict`,
    either over `p_a` for the discrete verdict. Optional: `p_a` and `weight`
    (graded verdicts), `cost_usd`, `category` (for `--by category`), `turn`,
    and the answers' style (`answer_a`/`answer_b` text, or
    `length_a`/`length_b` and optional markdown counts) for style control.
    Native files of other tools (AlpacaEval annotations, arena-hard and
    MT-bench judgments, Chatbot Arena battles, PRD reviews: see
    `arena.formats.read_judgments`) are recognised by their fields, or by
    `format` (one of JUDGMENT_FORMATS). A folder stands for its files.
    `keep_texts` keeps the answers' texts as `answer_a`, `answer_b` where the
    files have them (for reading the battles: `arena view --reviews`).
    `duplicates` (one of DUPLICATES): what to do with a review whose (question,
    model A, model B, reviewer, turn) was already read, in this file or an
    earlier one (files in the order given, a folder's by name): count the
    `last` copy (the default: a later re-run supersedes), the `first`, `all`
    of them, or raise (`error`); the repeats are counted in one line appended
    to `notes` (see `drop_duplicates`). `games`: MT-bench records' two games
    as two reviews or merged into one (`arena.formats.read_judgments`).
    Raises LeaderboardInputError naming the file, the row and the field.
    """
    sources = [Path(path)] if isinstance(path, str | Path) else [Path(p) for p in path]
    found = [item for source in sources for item in _judgment_files(source)]
    if format is not None and format not in JUDGMENT_FORMATS:
        known = ", ".join(JUDGMENT_FORMATS)
        raise LeaderboardInputError("--reviews-format", "", f"{format!r} is not one of {known}")
    if duplicates not in DUPLICATES:
        known = ", ".join(DUPLICATES)
        raise LeaderboardInputError("--duplicates", "", f"{duplicates!r} is not one of {known}")
    frames: list[pl.DataFrame] = []
    files: list[Path] = []
    skipped: list[Path] = []
    selves: dict[Path, dict[str, int]] = {}
    styles = _Styles()  # each distinct answer's style, measured once (a baseline's answers)
    # AlpacaEval files decode as columns on every core (polars works outside the GIL);
    # the rest of reading goes file by file, in order.
    columnar: dict[Path, Future[_Columns | None]] = {}
    if format in (None, "alpacaeval") and sum(f.suffix.lower() == ".json" for f, _ in found) > 1:
        pool = ThreadPoolExecutor(cores(), thread_name_prefix="arena-read")
        columnar = {
            f: pool.submit(read_alpacaeval_columns, f)
            for f, _ in found
            if f.suffix.lower() == ".json"
        }
        pool.shutdown(wait=False)
    for file, in_folder in found:
        try:
            frame = _load_one(
                file,
                format,
                strong_win_weight,
                keep_texts,
                selves,
                games,
                styles,
                columnar.get(file),
            )
        except _NotJudgments:
            if not in_folder:
                raise
            skipped.append(file)
            continue
        if frame.height:
            frames.append(frame)
            files.append(file)
    out = notes if notes is not None else []
    out += _reading_notes(skipped, selves)
    if not frames:
        where = ", ".join(str(s) for s in sources)
        raise LeaderboardInputError(where, "", "no reviews in these files")
    if duplicates == "all":
        return frames[0] if len(frames) == 1 else pl.concat(frames, how="diagonal_relaxed")
    # Each row's file (its position in `files`), for naming where repeats are.
    tagged = [f.with_columns(pl.lit(k, dtype=pl.Int32).alias(_FILE)) for k, f in enumerate(frames)]
    merged = tagged[0] if len(tagged) == 1 else pl.concat(tagged, how="diagonal_relaxed")
    kept, note = drop_duplicates(merged, files, duplicates)
    if note is not None and notes is not None:
        notes.append(note)
    return kept.drop(_FILE)


def _reading_notes(skipped: Sequence[Path], selves: dict[Path, dict[str, int]]) -> list[str]:
    """What reading left out: files in folders that are not judgments, annotations of a
    model against itself."""
    out: list[str] = []
    if skipped:
        shown = ", ".join(str(p) for p in skipped[:5])
        more = f" and {len(skipped) - 5} more" if len(skipped) > 5 else ""
        out.append(
            f"skipped {len(skipped)} file{'s' if len(skipped) != 1 else ''} found in the "
            f"folders that {'are' if len(skipped) != 1 else 'is'} not judgments: {shown}{more}"
        )
    for path, models in selves.items():
        for model, count in models.items():
            out.append(
                f"skipped {count} annotation{'s' if count != 1 else ''} of {model} against "
                f"itself in {path} (a baseline's own annotations: no battle)"
            )
    return out


def _load_one(
    source: Path,
    format: str | None,
    strong_win_weight: float,
    keep_texts: bool = False,
    selves: dict[Path, dict[str, int]] | None = None,
    games: str = "separate",
    styles: _Styles | None = None,
    columnar: Future[_Columns | None] | None = None,
) -> pl.DataFrame:
    kind = _check_file(source)
    if kind == "json" and format in (None, "alpacaeval"):
        columns = read_alpacaeval_columns(source) if columnar is None else columnar.result()
        if columns is not None:
            frame, skipped_self = columns
            if skipped_self and selves is not None:
                selves[source] = skipped_self
            if skipped_self and not frame.height:
                return pl.DataFrame()  # only the baseline against itself
            return _judgments_frame(source, frame, keep_texts, styles)
    records = None
    found = format
    if found is None and kind == "jsonl":
        first = _first_object(source)
        found = None if first is None else _detected(source, first)
    elif found is None and kind == "json":
        records = _records(source)
        found = _detected(source, records[0][1]) if records else "arena"
    if found is not None and found != "arena":
        if kind in ("csv", "parquet"):
            frame, _ = _read(source)
            records = [(_where(kind, i), row) for i, row in enumerate(frame.to_dicts())]
        try:
            judgments = read_judgments(
                source,
                format=found,
                strong_win_weight=strong_win_weight,
                records=records,
                games=games,
            )
        except FormatError as exc:
            raise LeaderboardInputError(exc.file, exc.where, exc.problem) from None
        if judgments.skipped_self and selves is not None:
            selves[source] = dict(judgments.skipped_self)
        if judgments.skipped_self and not len(judgments):
            return pl.DataFrame()  # only the baseline against itself
        return _native_frame(source, judgments, keep_texts, styles)
    frame, kind = _read(source) if records is None else (_frame_of_records(records), kind)
    if found is None and frame.height and kind in ("csv", "parquet"):
        detected = _detected(source, dict.fromkeys(frame.columns))
        if detected != "arena":
            return _load_one(source, detected, strong_win_weight, keep_texts, selves, games, styles)
    return _arena_frame(source, kind, frame, keep_texts)


def _detected(path: Path, first: dict[str, Any]) -> str:
    try:
        return detect_format(path, first)
    except FormatError as exc:
        raise _NotJudgments(exc.file, exc.where, exc.problem) from None


def _native_frame(
    path: Path, judgments: Judgments, keep_texts: bool = False, styles: _Styles | None = None
) -> pl.DataFrame:
    """The rows of a native judgments file, with the answers' style where texts are known."""
    columns = judgments.columns
    if not columns["question_id"]:
        raise LeaderboardInputError(path, "", "no reviews in the file")
    schema: dict[str, Any] = {name: pl.String for name in JUDGMENT_COLUMNS}
    schema.update({"p_a": pl.Float64, "weight": pl.Float64, "turn": pl.Int64})
    frame = pl.DataFrame(columns, schema=schema).drop("where")
    return _judgments_frame(path, frame, keep_texts, styles)


def _judgments_frame(
    path: Path, frame: pl.DataFrame, keep_texts: bool = False, styles: _Styles | None = None
) -> pl.DataFrame:
    """A native file's judgments (JUDGMENT_COLUMNS but `where`) as the ranking's rows."""
    # Columns a format never fills are left out: ranking then runs exactly as for
    # plain -1/0/1 verdicts.
    frame = frame.drop([c for c in frame.columns if frame[c].null_count() == frame.height])
    style = _style_columns(path, "jsonl", frame, styles)
    texts = () if keep_texts else ("answer_a", "answer_b")
    out = frame.drop([c for c in texts if c in frame.columns])
    return out.with_columns(**style) if style else out


def _arena_frame(
    source: Path, kind: str, frame: pl.DataFrame, keep_texts: bool = False
) -> pl.DataFrame:
    if frame.height == 0:
        raise LeaderboardInputError(source, "", "no reviews in the file")
    nested = [c for c, t in frame.schema.items() if c in SCALAR_FIELDS and t.is_nested()]
    if nested:  # a Parquet file's list or struct column
        raise LeaderboardInputError(
            source, f"column {nested[0]!r}", "expected strings or numbers, not lists or objects"
        )
    missing = [c for c in IMPORT_COLUMNS if c not in frame.columns]
    if not {"score", "verdict", "p_a"} & set(frame.columns):
        missing.append("score or verdict")
    if missing:
        raise LeaderboardInputError(
            source,
            f"column {missing[0]!r}",
            f"missing (needs {', '.join(IMPORT_COLUMNS)} and score, verdict or p_a)",
        )
    columns: dict[str, pl.Series] = {}
    for name in IMPORT_COLUMNS:
        text = frame[name].cast(pl.String).str.strip_chars()
        empty = text.is_null() | (text == "")
        if empty.any():
            row = _first_bad(empty)
            raise LeaderboardInputError(source, _where(kind, row), f"missing {name}")
        columns[name] = text
    same = columns["model_a"] == columns["model_b"]
    if same.any():
        row = _first_bad(same)
        raise LeaderboardInputError(
            source, _where(kind, row), f"model {columns['model_a'][row]!r} against itself"
        )
    graded = _graded(source, kind, frame)
    if "score" in frame.columns:
        columns["verdict"] = _verdicts_from_scores(source, kind, frame["score"])
    elif "verdict" in frame.columns:
        columns["verdict"] = _normalise_verdicts(source, kind, frame["verdict"])
    else:
        columns["verdict"] = _verdicts_from_p_a(graded.get("p_a", frame["p_a"].cast(pl.Float64)))
    columns.update(graded)
    if "cost_usd" in frame.columns:
        columns["cost_usd"] = frame["cost_usd"].cast(pl.Float64, strict=False)
    columns.update(_style_columns(source, kind, frame))
    if "turn" in frame.columns:  # 1, 2, ... or null (the first bad one named)
        turns = frame["turn"].cast(pl.Float64, strict=False)
        bad = frame["turn"].is_not_null() & ~(
            turns.is_finite().fill_null(False) & (turns >= 1) & (turns == turns.floor())
        ).fill_null(False)
        if bad.any():
            row = _first_bad(bad)
            try:
                check_turn(source, _where(kind, row), frame["turn"][row])
            except FormatError as exc:
                raise LeaderboardInputError(exc.file, exc.where, exc.problem) from None
    for name in ("category", "turn"):
        if name in frame.columns:
            columns[name] = frame[name].cast(pl.String)
    for name in ("answer_a", "answer_b") if keep_texts else ():
        if name in frame.columns:
            columns[name] = frame[name].cast(pl.String)
    return pl.DataFrame(columns)


def _style_columns(
    path: Path, kind: str, frame: pl.DataFrame, styles: _Styles | None = None
) -> dict[str, pl.Series]:
    """Style features for style control: from `answer_a`/`answer_b` text, or given counts.

    Text wins when both are present. Given counts (`length_a`, `length_b`, and
    optionally `headers_*`, `lists_*`, `bold_*`) must be non-negative numbers.
    `styles`: the styles of texts measured already (by earlier files), added to.
    """
    if {"answer_a", "answer_b"} <= set(frame.columns):
        if styles is not None:
            return _cached_styles(frame, styles)
        out: dict[str, pl.Series] = {}
        for side in ("a", "b"):
            style = answer_style(frame[f"answer_{side}"])
            out.update({f"{name}_{side}": style[name] for name in STYLE_FEATURES})
        return out
    if not {"length_a", "length_b"} <= set(frame.columns):
        return {}
    out = {}
    for name in STYLE_FEATURES:
        if not {f"{name}_a", f"{name}_b"} <= set(frame.columns):
            continue
        for side in ("a", "b"):
            column = f"{name}_{side}"
            numbers = frame[column].cast(pl.Float64, strict=False)
            bad = numbers.is_null() | (numbers < 0) | numbers.is_nan()
            if bad.any():
                row = _first_bad(bad)
                raise LeaderboardInputError(
                    path,
                    _where(kind, row),
                    f"{column} must be a non-negative number, not {frame[column][row]!r}",
                )
            out[column] = numbers
    return out


def _cached_styles(frame: pl.DataFrame, styles: _Styles) -> dict[str, pl.Series]:
    """`_style_columns` of the texts, each distinct text measured once across files: every
    AlpacaEval annotations file repeats the baseline's 805 answers. Texts are matched by
    a 64-bit hash (a collision among a few million texts has odds under 1e-6)."""
    texts = pl.concat([frame["answer_a"], frame["answer_b"]]).cast(pl.String)
    keys = texts.hash().alias(_HASH)
    new = pl.DataFrame([texts, keys]).filter(texts.is_not_null()).unique(_HASH, maintain_order=True)
    if styles.measured is not None:
        new = new.join(styles.measured.select(_HASH), on=_HASH, how="anti", maintain_order="left")
    if new.height:
        measured = answer_style(new[texts.name]).with_columns(new[_HASH])
        styles.measured = (
            measured if styles.measured is None else pl.concat([styles.measured, measured])
        )
    found = (
        keys.to_frame().join(styles.measured, on=_HASH, how="left", maintain_order="left")
        if styles.measured is not None
        else pl.DataFrame({name: [None] * keys.len() for name in STYLE_FEATURES})
    )
    found = found.with_columns(
        pl.when(texts.is_null()).then(None).otherwise(pl.col(name)).alias(name)
        for name in STYLE_FEATURES
    )
    out: dict[str, pl.Series] = {}
    for k, side in enumerate(("a", "b")):
        part = found.slice(k * frame.height, frame.height)
        for name in STYLE_FEATURES:
            out[f"{name}_{side}"] = part[name].cast(pl.Float64).alias(f"{name}_{side}")
    return out


def _load_tournament(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise LeaderboardInputError(path, "", f"unreadable: {exc}") from None
    if not isinstance(data, dict):
        raise LeaderboardInputError(path, "", "expected a JSON object")
    for key in ("contestants", "reviewers"):
        value = data.get(key)
        if value is not None and not (
            isinstance(value, list) and all(isinstance(v, str) for v in value)
        ):
            raise LeaderboardInputError(path, key, "expected a list of model names")
    models = data.get("models")
    if models is not None and not isinstance(models, dict):
        raise LeaderboardInputError(path, "models", "expected an object")
    return data


def _sim_skills(tournament: dict[str, Any], contestants: list[str]) -> dict[str, float]:
    """Every contestant's sim skill, or nothing when any is unknown."""
    models = tournament.get("models") or {}
    skills: dict[str, float] = {}
    for name in contestants:
        entry = models.get(name)
        skill = entry.get("sim_skill") if isinstance(entry, dict) else None
        if (
            not isinstance(skill, int | float)
            or isinstance(skill, bool)
            or not math.isfinite(skill)
        ):
            return {}
        skills[name] = float(skill)
    return skills


# What ranking reads of a run's log: the reviews' keys, verdicts (graded ones with
# their share and weight) and costs, and the other tables' costs (never a text).
RANKING_COLUMNS = (
    *IMPORT_COLUMNS,
    "verdict",
    "p_a",
    "weight",
    "status",
    "cost_usd",
    "finished_at",
)
COST_COLUMNS = ("status", "cost_usd", "finished_at")
# What style control adds: the answers each review judges (their texts come from `answers`).
STYLE_COLUMNS = ("answer_a_id", "answer_b_id")


# The reviews' columns of few distinct texts the history snapshot reads as codes.
CODED_COLUMNS = ("question_id", "model_a", "model_b", "reviewer", "verdict", "status")


# The reviews' columns an answer id decides: its question and its model.
ANSWER_KEYS = ("question_id", "model_a", "model_b")


def keys_from_answers(reviews: pl.DataFrame, answers: pl.DataFrame) -> pl.DataFrame | None:
    """Coded reviews (`RunLog.read_coded`, answer ids as Enums) with their `ANSWER_KEYS` as
    Enums taken from the answers they judge (the answers table's `question_id` and
    `model`): three columns of a million rows not read, nor coded. None when a
    review's answer id is null or not in `answers` (read the columns instead).
    """
    last = answers.select("id", "question_id", "model").unique("id", keep="last")
    found: dict[str, pl.Series] = {}
    for side, model in (("a", "model_a"), ("b", "model_b")):
        ids = reviews[f"answer_{side}_id"]
        enum = ids.dtype
        if not isinstance(enum, pl.Enum) or ids.null_count():
            return None
        keyed = pl.DataFrame({"id": enum.categories}).join(
            last, on="id", how="left", maintain_order="left"
        )
        if keyed["question_id"].null_count() or keyed["model"].null_count():
            return None
        codes = ids.to_physical()
        # Each answer's text coded once (a few thousand), its codes gathered per review:
        # an Enum of the texts the reviews use, in text order, as `read_coded` makes them.
        used = pl.Series(np.bincount(codes.to_numpy(), minlength=keyed.height) > 0)
        wanted = [(model, "model"), *([("question_id", "question_id")] if side == "a" else [])]
        for column, name in wanted:
            texts = keyed.select(pl.when(used).then(pl.col(name))).to_series()
            enum = pl.Enum(sorted(texts.drop_nulls().unique().to_list()))
            found[column] = texts.cast(enum).gather(codes)
    return reviews.with_columns(found[c].alias(c) for c in ANSWER_KEYS)


def _stage_hook_with_rows(log: RunLog, hook: str) -> bool:
    """Whether a part with rows in the log has its own `hook` (a `StageBoard` method)."""
    return any(
        part.board is not None
        and getattr(type(part.board), hook) is not getattr(StageBoard, hook)
        and any(log.has_files(table.name) for table in part.tables)
        for part in all_parts()
    )


def _rewrites_reviews(log: RunLog) -> bool:
    """Whether a stage may change the run's reviews before ranking (one that does, such as
    the discussions, with rows in the log): it then gets them as texts."""
    return _stage_hook_with_rows(log, "reviews")


def _reads_review_ids(log: RunLog) -> bool:
    """Whether a stage reads the reviews' ids for the leaderboard (a sampled run's
    design, with rows in the log)."""
    return _stage_hook_with_rows(log, "design")


def is_run_directory(directory: Path) -> bool:
    """Whether a directory is a run's: it has its snapshot (`tournament.json`) or its log."""
    return (directory / "tournament.json").exists() or (directory / "log").is_dir()


def load_run(
    directory: str | Path, *, ranking_only: bool = False, style: bool = True, coded: bool = False
) -> RunData:
    """Read a run directory: `tournament.json`, the `reviews`, `answers`, `batcheval` tables.

    `ranking_only` reads only the columns ranking needs (`RANKING_COLUMNS` of the
    reviews, `COST_COLUMNS` of the others): a million reviews without their texts;
    with `style`, also what style control needs (the reviews' answer ids and the
    answers' texts). `coded` (with `ranking_only`: one directory's ratings) reads
    the reviews a few log parts at a time, their `CODED_COLUMNS` as polars Enums,
    their ids as digits (`RunLog.read_coded`), with `style` their answers' ids
    as Enums too, and without their costs, unless a stage may change the
    reviews (`_rewrites_reviews`); ranking codes them alike.
    """
    root = Path(directory)
    if not root.is_dir():
        raise LeaderboardInputError(root, "", "no such run directory or reviews file")
    snapshot = root / "tournament.json"
    has_log = (root / "log").is_dir()
    if not is_run_directory(root):
        raise LeaderboardInputError(root, "", "not a run directory (no tournament.json, no log/)")
    tournament = _load_tournament(snapshot) if snapshot.exists() else None
    if has_log:
        log = RunLog(root)
        # Only rows of the current plan: stale rows and removed models are left out.
        wanted = RANKING_COLUMNS + (STYLE_COLUMNS if style else ()) if ranking_only else None
        costs = COST_COLUMNS if ranking_only else None
        texts = (*COST_COLUMNS, "answer_turns") if ranking_only and style else costs
        answers: pl.DataFrame | None = None
        if coded and ranking_only and not _rewrites_reviews(log):
            ranked = [c for c in RANKING_COLUMNS if c not in ("cost_usd", "finished_at")]
            answer_ids = STYLE_COLUMNS if style else ()  # few distinct: coded alike
            coded_all = [*CODED_COLUMNS, *answer_ids]
            kept = ranked
            if style:  # the question and models follow from the answers (see below)
                kept = [c for c in ranked if c not in ANSWER_KEYS]
                answers = log.read("answers", columns=[*(texts or ()), "question_id", "model"])
            coded_columns = [c for c in coded_all if c in {*kept, *answer_ids}]
            # The leaderboard finds the plan's ids meanwhile (polars lets go of the
            # interpreter) and orders two columns at a time; the history snapshot (no
            # style), whose memory is the end of a long run's peak, does each in turn.
            threads = 2 if style else 1
            with ThreadPoolExecutor(1, thread_name_prefix="arena-plan") as pool:
                # (Not when the plan's fingerprint may tell: `current_rows` tries it first.)
                needed = style and plan_fingerprint(root, "reviews") is None
                planned = pool.submit(plan_digests, root, "reviews") if needed else None
                # The ratings alone need no id once the log is known to hold the plan's
                # (a finished run's history snapshot): no keys, 16 bytes a review.
                known = (
                    None if style or _reads_review_ids(log) else plan_fingerprint(root, "reviews")
                )
                read = log.read_coded(
                    "reviews",
                    [*kept, *answer_ids],
                    coded_columns,
                    threads=threads,
                    known=known,
                    parts=CODED_PARTS if style else LEAN_CODED_PARTS,
                )
                if style:
                    assert answers is not None
                    keyed = keys_from_answers(read, answers)
                    if keyed is None:  # a review whose answers the log lacks: read them too
                        read = log.read_coded(
                            "reviews", [*ranked, *answer_ids], coded_all, threads=threads
                        )
                    else:
                        read = keyed.select("id", *ranked, *answer_ids)
                digests = None if planned is None else planned.result()
        else:
            read = log.read("reviews", columns=wanted)
            digests = None
        # Rows without ids are the plan's (`read_coded` found its fingerprint).
        reviews = (
            read
            if "id" not in read.columns
            else current_rows(root, "reviews", read, digests=digests)
        )
        del read
        if answers is None:
            answers = log.read("answers", columns=texts)
        # The stages' calls on the answers (BatchEval), for their cost.
        scored = [
            log.read(t.name, columns=costs) for p in all_parts() for t in p.tables if t.on_answers
        ]
        batcheval: pl.DataFrame | None = (
            pl.concat(scored, how="diagonal_relaxed") if scored else None
        )
    else:
        reviews = pl.DataFrame(
            schema={c: pl.String for c in (*IMPORT_COLUMNS, "verdict", "status")}
        )
        answers = batcheval = None
    contestants = None if tournament is None else tournament.get("contestants")
    reviewers = None if tournament is None else tournament.get("reviewers")
    if contestants is not None and reviewers is None:
        reviewers = list(contestants)
    skills = _sim_skills(tournament, contestants) if tournament and contestants else {}
    return RunData(root, reviews, answers, tournament, contestants, reviewers, skills, batcheval)


def _latest(frames: Sequence[pl.DataFrame | None]) -> pl.DataFrame | None:
    """The tables of several directories as one: the last-finished row per id."""
    present = [f for f in frames if f is not None]
    if not present:
        return None
    merged = pl.concat(present, how="diagonal_relaxed")
    if "id" not in merged.columns or merged["id"].n_unique() == merged.height:
        return merged
    if "finished_at" in merged.columns:
        merged = merged.sort("finished_at", nulls_last=False, maintain_order=True)
    return merged.unique("id", keep="last", maintain_order=True)


def _by_id(reviews: pl.DataFrame) -> pl.DataFrame:
    """Reviews in id order: the order weighted Elo draws its random orders from is then
    the same however the rows were written or split across directories."""
    return sort_by_id(reviews)


@dataclass(frozen=True)
class MissingShards:
    """The shards of a split that were not given: the result covers only part of the run."""

    count: int  # N of the K/N split
    missing: tuple[int, ...]
    directories: tuple[Path, ...]  # the shard directories given
    # Shards run on other questions or answers files than the first one given (their
    # tournament.json's `inputs_hash`), ranked together only with allow_missing_shards.
    other_inputs: tuple[Path, ...] = ()

    def labels(self) -> list[str]:
        """The missing shards as `K/N`."""
        return [f"{k}/{self.count}" for k in self.missing]

    def note(self) -> str:
        """One line for the terminal, the JSON `warnings` and the HTML report."""
        shards = ", ".join(self.labels())
        notes = []
        if self.missing:
            notes.append(
                f"shard{'s' if len(self.missing) > 1 else ''} {shards} of this "
                f"{self.count}-way split missing: it holds only the questions of "
                f"{len(self.directories)} of {self.count} shards"
            )
        if self.other_inputs:
            notes.append(
                f"{', '.join(str(d) for d in self.other_inputs)} ran on other questions "
                f"or answers files than {self.directories[0]}"
            )
        return "partial result: " + "; ".join(notes)

    def to_json(self) -> dict[str, Any]:
        """The JSON `partial` field (`other_inputs` only when some shard ran on other files)."""
        out: dict[str, Any] = {
            "split": self.count,
            "missing_shards": self.labels(),
            "directories": [str(d) for d in self.directories],
        }
        if self.other_inputs:
            out["other_inputs"] = [str(d) for d in self.other_inputs]
        return out


def _recorded_shard(path: Path, snapshot: dict[str, Any]) -> tuple[int, int] | None:
    try:
        found = recorded_shard(snapshot)
    except ValueError as exc:
        raise LeaderboardInputError(path / "tournament.json", "", str(exc)) from None
    return None if found is None else (found.index, found.count)


def check_one_tournament(
    directories: Sequence[str | Path], *, allow_missing_shards: bool = False
) -> MissingShards | None:
    """Refuse directories that are not the run directories (or shards) of one tournament.

    Reads only each `tournament.json`: a different tournament (name or config
    hash), the same directory twice, the same shard twice, shards of
    different splits, or an unsharded directory among shards raise
    LeaderboardInputError naming the directory. Shard directories that are
    not the whole split (`arena run --shard K/N`: 1..N all given) raise it
    too, unless `allow_missing_shards`: then the missing shards are returned
    (None: the directories hold the whole run). One shard directory alone is
    never refused: its missing shards are returned.
    """
    paths = [Path(d) for d in directories]
    if not paths:
        raise LeaderboardInputError("arena", "", "give at least one run directory")
    seen: dict[Path, Path] = {}
    for path in paths:
        key = path.resolve()
        if key in seen:
            raise LeaderboardInputError(path, "", f"given twice (also as {seen[key]})")
        seen[key] = path
    snapshots: list[tuple[Path, dict[str, Any]]] = []
    for path in paths:
        file = path / "tournament.json"
        if not file.is_file():
            if len(paths) == 1:
                return None  # a log without a snapshot: nothing says it is a shard
            raise LeaderboardInputError(
                path, "tournament.json", "missing: cannot tell which tournament this is"
            )
        snapshots.append((path, _load_tournament(file)))
    first_path, first = snapshots[0]
    shards: dict[tuple[int, int], Path] = {}
    whole: list[Path] = []
    for path, snapshot in snapshots:
        for field_name in ("name", "config_hash"):
            mine, theirs = snapshot.get(field_name), first.get(field_name)
            if mine != theirs:
                raise LeaderboardInputError(
                    path,
                    "tournament.json",
                    f"another tournament than {first_path} ({field_name} {mine!r}, not {theirs!r})",
                )
        shard = _recorded_shard(path, snapshot)
        if shard is None:
            whole.append(path)
            continue
        if shard in shards:
            raise LeaderboardInputError(
                path, "", f"shard {shard[0]}/{shard[1]} again (also {shards[shard]})"
            )
        other = next((p for (_, n), p in shards.items() if n != shard[1]), None)
        if other is not None:
            theirs = next(k for k, p in shards.items() if p == other)
            raise LeaderboardInputError(
                path,
                "",
                f"shard {shard[0]}/{shard[1]}, but {other} is shard {theirs[0]}/{theirs[1]}: "
                "shards of different splits (the shards of one run share N)",
            )
        shards[shard] = path
    if not shards:
        return None
    other_inputs = tuple(
        path
        for path, snapshot in snapshots
        if snapshot.get("inputs_hash")
        and first.get("inputs_hash")
        and snapshot["inputs_hash"] != first["inputs_hash"]
    )
    if other_inputs and not allow_missing_shards:
        theirs = dict(snapshots)[other_inputs[0]]["inputs_hash"]
        raise LeaderboardInputError(
            other_inputs[0],
            "tournament.json",
            f"ran on other questions or answers files than {first_path} (inputs_hash "
            f"{theirs!r}, not {first['inputs_hash']!r}): their shards do not split one "
            "question set. Run every shard on the same files, or --allow-missing-shards "
            "for a partial result",
        )
    if whole:
        raise LeaderboardInputError(
            whole[0],
            "",
            f"the whole run, but {next(iter(shards.values()))} is a shard: give the whole "
            "run's directory alone, or the directories of every shard",
        )
    count = next(iter(shards))[1]
    missing = tuple(k for k in range(1, count + 1) if (k, count) not in shards)
    if not missing and not other_inputs:
        return None
    found = MissingShards(count, missing, tuple(shards.values()), other_inputs)
    if not missing:
        return found  # every shard, on different inputs: allowed, marked partial
    # One shard directory alone is that shard's own view (a machine's progress, its
    # export): marked partial. Several are meant as the whole run: one missing is refused.
    if len(paths) > 1 and not allow_missing_shards:
        raise LeaderboardInputError(
            ", ".join(str(p) for p in found.directories),
            "",
            f"shard{'s' if len(missing) > 1 else ''} {', '.join(found.labels())} of this "
            f"{count}-way split missing: give the directories of every shard, or "
            "--allow-missing-shards for a partial result",
        )
    return found


def _repeats(reviews: pl.DataFrame) -> bool:
    """Whether two logged reviews share DUPLICATE_KEY (the columns of it the log has)."""
    key = [c for c in DUPLICATE_KEY if c in reviews.columns]
    if not reviews.height:
        return False
    sizes = [
        len(dtype.categories) if isinstance(dtype, pl.Enum) else 0
        for dtype in (reviews.schema[c] for c in key)
    ]
    space = math.prod(sizes)
    if not all(sizes) or space >= 1 << 62 or reviews.select(key).null_count().sum_horizontal()[0]:
        return bool(reviews.select(key).is_duplicated().any())
    # A million coded reviews (`RunLog.read_coded`): their codes as one integer each.
    combined = np.zeros(reviews.height, dtype=np.int64)
    for column, size in zip(key, sizes, strict=True):
        combined *= size
        combined += reviews[column].to_physical().to_numpy()
    if space <= max(4 * reviews.height, 1 << 22):
        return bool(np.bincount(combined, minlength=space).max() > 1)
    combined.sort()
    return bool((combined[1:] == combined[:-1]).any())


def _logged_once(
    reviews: pl.DataFrame, directories: Sequence[Path], keep: str, notes: list[str] | None
) -> pl.DataFrame:
    """A log's reviews with each repeated review counted once (`drop_duplicates`), the
    copies in the order they finished; the line that says so appended to `notes`."""
    if keep == "all" or not _repeats(reviews):
        return reviews
    ordered = reviews
    if "finished_at" in reviews.columns:
        ordered = reviews.sort("finished_at", nulls_last=False, maintain_order=True)
    # Every row's "file" is the first directory: the repeats are named by the logs.
    tagged = ordered.with_columns(pl.lit(0, dtype=pl.Int32).alias(_FILE))
    where = [Path(", ".join(str(d / "log") for d in directories))]
    kept, note = drop_duplicates(tagged, where, keep)
    if note is not None and notes is not None:
        notes.append(note.replace("a review already read", "a logged review"))
    return kept.drop(_FILE)


def latest_rows(frames: Sequence[pl.DataFrame | None]) -> pl.DataFrame | None:
    """One table of several directories: the last-finished row per id (None: no frame)."""
    return _latest(frames)


def load_runs(
    directories: Sequence[str | Path],
    *,
    ranking_only: bool = False,
    style: bool = True,
    allow_missing_shards: bool = False,
    coded: bool = True,
    duplicates: str = "last",
    notes: list[str] | None = None,
) -> RunData:
    """Several run directories of one tournament (the shards of a split run) read as one.

    Directories of different tournaments (name or config hash), the same
    directory twice, or the same shard twice are refused. The tables are
    concatenated, keeping the last-finished row of an id that appears twice;
    the reviews come in id order.
    `ranking_only` and `style` as for `load_run`; with `ranking_only`, one
    directory is read `coded` (see `load_run`) unless `coded` is False (a caller
    that needs the reviews' texts). Shards that are not the whole
    split are refused unless `allow_missing_shards` (then `missing_shards`
    says which are missing).
    `duplicates` (one of DUPLICATES): what to do with reviews of the same
    question, models in the same positions and reviewer under different ids
    (a log holding two plans' rows, or rows copied in twice): as for imported
    judgments (`load_reviews_file`), the `last` finished copy counts by
    default, and one line appended to `notes` says how many repeat.
    """
    if duplicates not in DUPLICATES:
        known = ", ".join(DUPLICATES)
        raise LeaderboardInputError("--duplicates", "", f"{duplicates!r} is not one of {known}")
    missing = check_one_tournament(directories, allow_missing_shards=allow_missing_shards)
    coded = coded and ranking_only and len(directories) == 1  # one tournament's codes
    runs = [
        load_run(path, ranking_only=ranking_only, style=style, coded=coded) for path in directories
    ]
    if coded and duplicates != "all" and _repeats(runs[0].reviews):
        # The coded read keeps no finishing time: read the log again to order the copies.
        runs = [load_run(directories[0], ranking_only=ranking_only, style=style, coded=False)]
    if len(runs) == 1:
        reviews = _logged_once(runs[0].reviews, [runs[0].directory], duplicates, notes)
        return dataclasses.replace(
            runs[0],
            reviews=_by_id(reviews),
            directories=(runs[0].directory,),
            missing_shards=missing,
        )
    first = runs[0]
    merged = _latest([run.reviews for run in runs])
    assert merged is not None
    reviews = _by_id(_logged_once(merged, [run.directory for run in runs], duplicates, notes))
    skills: dict[str, float] = {}
    for run in runs:
        skills.update(run.sim_skill)
    return RunData(
        first.directory,
        reviews,
        _latest([run.answers for run in runs]),
        first.tournament,
        first.contestants,
        first.reviewers,
        skills,
        _latest([run.batcheval for run in runs]),
        tuple(run.directory for run in runs),
        missing,
    )
