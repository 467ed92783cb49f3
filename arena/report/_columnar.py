"""AlpacaEval annotation files read as columns: the common case of a bulk import, fast.

An AlpacaEval `annotations.json` is one JSON array of flat records (57 models
of AlpacaEval 2.0 are about 225 MB). Decoding it with `json` into Python
dicts and checking each record costs seconds; polars decodes it straight into
columns. The rules are those of the record reader (`arena.formats`,
`_alpacaeval`): the instruction (and a non-empty `input` after a blank line)
is the question, `generator_1` is model A, `preference` in [1, 2] (0, the
older draw code, a tie) gives model A's share `2 - preference`, a missing or
NaN preference an invalid verdict, a record of a model against itself (the
baseline's own file) is skipped and counted.

Only clean files take this path: any value the record reader would refuse,
or whose type is not the plain one (a list where a name belongs, a number
written as a string, an empty generator, a preference out of range, JSON that
polars cannot decode), sends the file back to the record reader, which names
the record and the field of the problem.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import polars as pl

from arena.formats import JUDGMENT_COLUMNS

__all__ = ["Columns", "read_alpacaeval_columns"]

# A file's judgments and its skipped records of a model against itself, by model.
Columns = tuple[pl.DataFrame, dict[str, int]]

# The fields arena reads from an AlpacaEval annotations file, and their types.
_SCHEMA = {
    "instruction": pl.String,
    "input": pl.String,
    "generator_1": pl.String,
    "generator_2": pl.String,
    "output_1": pl.String,
    "output_2": pl.String,
    "annotator": pl.String,
    "dataset": pl.String,
    "preference": pl.Float64,
}
_NAMES = ("instruction", "generator_1", "generator_2")
# How much of the file's start is searched for AlpacaEval's field names.
_HEAD_BYTES = 65_536
# polars reads `true` as the text "true" in a string field and as 1.0 in a number
# field, and a lone high surrogate escape ("\\ud800") as a NUL, where the record reader
# refuses them: a file with a read value that may have been one goes to that reader.
_BOOLEAN_PREFERENCE = re.compile(rb'"preference"\s*:\s*(?:true|false)\b')
_TEXT = tuple(name for name, dtype in _SCHEMA.items() if dtype == pl.String)


def _looks_alpacaeval(head: bytes) -> bool:
    """Whether a file's first bytes look like a JSON array of AlpacaEval annotations."""
    return (
        head.lstrip().startswith(b"[")
        and b'"generator_1"' in head
        and b'"generator_2"' in head
        and b'"preference"' in head
    )


def read_alpacaeval_columns(path: Path) -> Columns | None:
    """The judgments of a clean AlpacaEval annotations file as JUDGMENT_COLUMNS (no
    `where`), with the count of skipped records of a model against itself, by model.

    None: not such a file, or one the record reader must read (it names any problem).
    """
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if not _looks_alpacaeval(data[:_HEAD_BYTES]):
        return None
    try:
        raw = pl.read_json(io.BytesIO(data), schema=_SCHEMA)
    except Exception:  # noqa: BLE001 - the record reader names what is wrong
        return None
    if raw.height == 0:
        return None
    names = [pl.col(c).str.strip_chars() for c in _NAMES]
    empty = pl.any_horizontal([n.is_null() | (n == "") for n in names])
    # (A list or an object where text belongs fails to decode under the schema.) A
    # boolean decodes as the text "true" / "false": the record reader refuses one in a
    # name, the instruction or the dataset, so a file with such a value goes to it. An
    # answer may well be the word "true".
    boolean = pl.any_horizontal(
        [pl.col(c).is_in(["true", "false"]) for c in _TEXT if not c.startswith("output")]
    )
    lone = pl.any_horizontal([pl.col(c).str.contains("\x00", literal=True) for c in _TEXT])
    lenient = boolean | lone
    preference = pl.col("preference")
    drawn = pl.when(preference == 0.0).then(1.5).otherwise(preference)
    out_of_range = preference.is_not_nan() & ((drawn < 1.0) | (drawn > 2.0))
    checks = raw.select(
        bad=(empty | lenient.fill_null(False) | out_of_range.fill_null(False)).any(),
        whole=preference.is_in([0.0, 1.0]).any(),
    ).row(0)
    if checks[0] or (checks[1] and _BOOLEAN_PREFERENCE.search(data)):
        return None
    del data

    instruction = pl.col("instruction").str.strip_chars()
    extra = pl.col("input").str.strip_chars()
    instruction = (
        pl.when(extra.is_not_null() & (extra != ""))
        .then(pl.concat_str([instruction, pl.lit("\n\n"), extra]))
        .otherwise(instruction)
    )

    def optional(name: str, default: str | None = None) -> pl.Expr:
        value = pl.col(name)
        return pl.when(value.is_null() | (value == "")).then(pl.lit(default)).otherwise(value)

    p_a = pl.when(preference.is_null() | preference.is_nan()).then(None).otherwise(2.0 - drawn)
    verdict = (
        pl.when(p_a.is_null())
        .then(pl.lit("invalid"))
        .when(p_a > 0.5)
        .then(pl.lit("A"))
        .when(p_a < 0.5)
        .then(pl.lit("B"))
        .otherwise(pl.lit("tie"))
    )
    columns = {
        "question_id": instruction,
        "model_a": pl.col("generator_1").str.strip_chars(),
        "model_b": pl.col("generator_2").str.strip_chars(),
        "reviewer": optional("annotator", "alpacaeval"),
        "verdict": verdict,
        "p_a": p_a,
        "weight": pl.lit(None, dtype=pl.Float64),
        "category": optional("dataset"),
        "turn": pl.lit(None, dtype=pl.Int64),
        "answer_a": pl.col("output_1"),
        "answer_b": pl.col("output_2"),
    }
    frame = raw.select(**{name: columns[name] for name in JUDGMENT_COLUMNS if name != "where"})
    selves = frame.filter(pl.col("model_a") == pl.col("model_b"))
    skipped = dict(selves.group_by("model_a", maintain_order=True).len().iter_rows())
    if skipped:
        frame = frame.filter(pl.col("model_a") != pl.col("model_b"))
    return frame, {str(k): int(v) for k, v in skipped.items()}
