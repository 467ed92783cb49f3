"""The plan file `DIR/plan.parquet`: the ids of the calls the current config needs.

`arena run` writes it atomically before any call starts. Readers of the log
use it to tell current rows from stale ones: a logged row whose id is not in
the plan was made for an older config (or a removed model) and is not mixed
into results.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from arena.errors import ArenaInputError

if TYPE_CHECKING:
    import pyarrow.parquet as pq

    from arena.config import Tournament
    from arena.pipeline import Plan

__all__ = [
    "PLAN_FILE",
    "PLAN_SCHEMA",
    "PlanFileDamaged",
    "PlanWriter",
    "current_rows",
    "plan_changes",
    "plan_chunks",
    "plan_digests",
    "plan_fingerprint",
    "plan_frame",
    "read_plan",
    "write_plan",
]

PLAN_FILE = "plan.parquet"


class PlanFileDamaged(ArenaInputError):
    """DIR/plan.parquet cannot be read (truncated, garbled): names it and the fix."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        super().__init__(
            f"{path}: the plan file cannot be read ({reason}). It only records what the "
            "last run planned, and the next `arena run` of the tournament writes it again; "
            f"to read this directory before that, delete it (`rm {path}`): every logged "
            "row then counts as current"
        )


def _plan_path(directory: str | os.PathLike[str]) -> Path | None:
    """DIR's plan file when there is one (its footer read: `PlanFileDamaged` if unreadable)."""
    path = Path(directory) / PLAN_FILE
    if not path.exists():
        return None
    try:
        pl.read_parquet_schema(path)
    except (OSError, ValueError, pl.exceptions.PolarsError) as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise PlanFileDamaged(path, reason) from None
    return path


# One row per planned call. `model` is set for answers; `model_a`, `model_b`
# and `reviewer` for reviews; `provider` is the provider that serves the call.
PLAN_SCHEMA = pl.Schema(
    {
        "id": pl.String,
        "stage": pl.String,
        "provider": pl.String,
        "question_id": pl.String,
        "model": pl.String,
        "model_a": pl.String,
        "model_b": pl.String,
        "reviewer": pl.String,
    }
)

# Logical key of a row per table: the same key under another id is a stale row.
KEYS: dict[str, tuple[str, ...]] = {
    "answers": ("question_id", "model"),
    "reviews": ("question_id", "model_a", "model_b", "reviewer"),
}


# Rows of the plan's frame made at once by `plan_chunks`: a million-call plan is
# written and classified a slice at a time, never held whole as strings.
PLAN_CHUNK_ROWS = 32_768


def plan_frame(t: Tournament, plan: Plan) -> pl.DataFrame:
    """The plan as a frame of ids, stages, providers and logical keys."""
    return pl.concat(list(plan_chunks(t, plan)))


def plan_chunks(t: Tournament, plan: Plan, rows: int = PLAN_CHUNK_ROWS) -> Iterator[pl.DataFrame]:
    """`plan_frame` in slices of at most `rows` reviews, in order: the answers, then the
    reviews; each slice holds one stage."""
    if rows < 1:
        raise ValueError(f"rows must be at least 1, got {rows}")
    provider = {name: t.provider_of(name) for name in t.config.models}  # files: (file)
    n_a = len(plan.answers)
    answers = pl.DataFrame(
        {
            "id": [a.id for a in plan.answers],
            "stage": ["answers"] * n_a,
            "provider": [provider[a.model] for a in plan.answers],
            "question_id": [a.question.id for a in plan.answers],
            "model": [a.model for a in plan.answers],
            "model_a": [None] * n_a,
            "model_b": [None] * n_a,
            "reviewer": [None] * n_a,
        },
        schema=PLAN_SCHEMA,
    )
    yield answers
    n = len(plan.reviews)
    for start in range(0, n, rows):
        yield _review_columns(plan, provider, start, min(n, start + rows))


def _review_columns(plan: Plan, provider: dict[str, str], start: int, stop: int) -> pl.DataFrame:
    """Rows `start:stop` of the reviews straight from the plan's columns
    (`arena.pipeline.ReviewCalls`: integer codes and ids), without making a call
    object per review."""
    reviews = plan.reviews
    codes, ids = reviews.codes[start:stop], reviews.ids[start:stop]
    n = stop - start
    questions = pl.Series([q.id for q in reviews.questions], dtype=pl.String)
    models = pl.Series(list(reviews.models), dtype=pl.String)
    reviewers = list(reviews.reviewers)
    judge = pl.Series(reviewers, dtype=pl.String)
    served_by = pl.Series([provider[r] for r in reviewers], dtype=pl.String)
    return pl.DataFrame(
        {
            "id": pl.Series(ids).cast(pl.String),
            "stage": pl.repeat("reviews", n, dtype=pl.String, eager=True),
            "provider": served_by.gather(codes[:, 3]),
            "question_id": questions.gather(codes[:, 0]),
            "model": pl.repeat(None, n, dtype=pl.String, eager=True),
            "model_a": models.gather(codes[:, 1]),
            "model_b": models.gather(codes[:, 2]),
            "reviewer": judge.gather(codes[:, 3]),
        },
        schema=PLAN_SCHEMA,
    )


def write_plan(
    directory: str | os.PathLike[str], frame: pl.DataFrame | Iterable[pl.DataFrame]
) -> Path:
    """Write DIR/plan.parquet atomically (temporary file, fsync, rename).

    `frame` may be the plan's frame (written PLAN_CHUNK_ROWS rows at a time) or its
    slices (`plan_chunks`), written one after another as row groups of the one file.
    The file's metadata keeps, per stage, the fingerprint of its ids that are
    digests (`plan_fingerprint`).
    """
    folder = Path(directory)
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / PLAN_FILE
    tmp = folder / f".{PLAN_FILE}.{uuid.uuid4().hex}.tmp"
    try:
        with PlanWriter(tmp) as writer:
            chunks: Iterable[pl.DataFrame] = (
                frame.iter_slices(PLAN_CHUNK_ROWS) if isinstance(frame, pl.DataFrame) else frame
            )
            for chunk in chunks:
                writer.write(chunk)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    return target


# The plan file's metadata key for its ids' fingerprints: {stage: [count, sum, sum]}.
FINGERPRINTS_KEY = b"arena.digest_fingerprints"


class PlanWriter:
    """Writes a plan's slices to one Parquet file, each as row groups (`with` closes it).

    The file is opened with the first slice's Arrow schema (every slice has the
    plan's columns and types); without any slice, an empty plan is written.
    Closing it adds each stage's `digest_fingerprint` to the file's metadata.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._writer: pq.ParquetWriter | None = None
        self._prints: dict[str, list[int]] = {}

    def write(self, chunk: pl.DataFrame) -> None:
        """Append a slice of the plan's frame."""
        import pyarrow.parquet as pq

        from arena.store import digest_fingerprint, digest_keys_of

        table = chunk.select(PLAN_SCHEMA.names()).cast(PLAN_SCHEMA).to_arrow()
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, table.schema, compression="zstd")
        self._writer.write_table(table)
        for (stage,), ids in chunk.select("stage", "id").group_by("stage"):
            count, *sums = digest_fingerprint(digest_keys_of(ids["id"]))
            seen = self._prints.setdefault(str(stage), [0, 0, 0])
            seen[0] += count
            for k, value in enumerate(sums, start=1):
                seen[k] = (seen[k] + value) % (1 << 64)

    def __enter__(self) -> PlanWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._writer is not None:
            if exc[0] is None:
                self._writer.add_key_value_metadata(
                    {FINGERPRINTS_KEY: json.dumps(self._prints, sort_keys=True).encode()}
                )
            self._writer.close()
        elif exc[0] is None:
            pl.DataFrame(schema=PLAN_SCHEMA).write_parquet(self.path)


def plan_fingerprint(directory: str | os.PathLike[str], table: str) -> tuple[int, int, int] | None:
    """The `digest_fingerprint` of the ids DIR's plan has for `table` that are digests,
    read from the plan file's metadata (no id is read); None when DIR has no plan file
    or its plan was written without fingerprints (by an older arena)."""
    path = Path(directory) / PLAN_FILE
    try:
        meta = pl.read_parquet_metadata(path)
    except (OSError, ValueError, pl.exceptions.PolarsError):
        return None
    try:
        found = json.loads(meta[FINGERPRINTS_KEY.decode()]).get(table, [0, 0, 0])
        count, first, second = (int(v) for v in found)
    except (KeyError, ValueError, TypeError, AttributeError):
        return None
    return count, first, second


def read_plan(directory: str | os.PathLike[str]) -> pl.DataFrame | None:
    """The plan of the last run started in DIR, or None when there is none."""
    path = _plan_path(directory)
    if path is None:
        return None
    try:
        frame = pl.read_parquet(path)
    except (OSError, ValueError, pl.exceptions.PolarsError) as exc:
        raise PlanFileDamaged(path, str(exc).splitlines()[0]) from None
    missing = [c for c in PLAN_SCHEMA.names() if c not in frame.columns]
    if missing:
        raise PlanFileDamaged(path, f"no column {missing[0]!r}")
    return frame.select(PLAN_SCHEMA.names()).cast(PLAN_SCHEMA)


def plan_changes(previous: pl.DataFrame, current: pl.DataFrame) -> tuple[int, int]:
    """Calls of `current` not in `previous`, and calls of `previous` not in `current`."""
    added = current.select("id").join(previous.select("id"), on="id", how="anti").height
    removed = previous.select("id").join(current.select("id"), on="id", how="anti").height
    return added, removed


def plan_digests(directory: str | os.PathLike[str], table: str) -> pl.Series | None:
    """The ids DIR's plan has for `table` that are digests (`DIGEST_ID`), as their
    `digest_keys`, sorted; None when DIR has no plan file.

    What `current_rows` compares a coded frame's ids with (`RunLog.read_coded`):
    a caller may find it meanwhile (in a thread: polars lets go of the
    interpreter) and hand it over. The plan's million ids never stand as text.
    """
    path = _plan_path(directory)
    if path is None:
        return None
    from arena.store import DIGEST_ID, digest_key, digest_order

    text = pl.col("id").cast(pl.String)
    planned = pl.scan_parquet(path).filter(pl.col("stage") == table).select(pl.col("id"))
    ids = (
        planned.filter(text.str.contains(DIGEST_ID))
        .select(digest_key(text).alias("id"))
        .collect(engine="streaming")["id"]
    )
    return ids.gather(digest_order(ids)).set_sorted()


def current_rows(
    directory: str | os.PathLike[str],
    table: str,
    frame: pl.DataFrame,
    *,
    digests: pl.Series | None = None,
) -> pl.DataFrame:
    """Rows of `table` whose id is in DIR's plan (all rows when DIR has no plan file).

    `digests`: `plan_digests(directory, table)` when the caller has it already
    (for a frame whose ids are digests). Without it, a frame of digests whose
    `digest_fingerprint` is the plan's (`plan_fingerprint`) is returned as it is,
    without reading the plan's ids.
    """
    path = Path(directory) / PLAN_FILE
    if not path.is_file():
        return frame
    if frame.schema.get("id") == pl.Int128:
        # Ids as their digits (`RunLog.read_coded`, no id twice): a log holding exactly
        # the plan's ids (a finished run) is found so on the plan's fingerprint alone.
        if digests is None:
            from arena.store import digest_fingerprint

            planned_print = plan_fingerprint(directory, table)
            if planned_print is not None and planned_print == digest_fingerprint(frame["id"]):
                return frame
        # Otherwise the plan's ids alike, compared with the log's.
        found = plan_digests(directory, table) if digests is None else digests
        ids = pl.DataFrame(schema={"id": pl.Int128}) if found is None else found.to_frame("id")
        ranked = frame["id"]
        if ranked.flags["SORTED_ASC"] and ids.height == ranked.len():
            # A finished run: the plan's ids are the log's (compared in order).
            if bool((ids["id"] == ranked).all()):
                return frame
    else:
        # Only the ids of the plan are read (a million-call plan without its other columns).
        planned = pl.scan_parquet(path).filter(pl.col("stage") == table).select(pl.col("id"))
        ids = planned.select(pl.col("id").cast(pl.String)).collect()
    # The rows to keep, found on the ids alone: a frame whose rows are all planned (a
    # finished run) comes back as it is, without copying a million rows of its columns.
    rows = (
        frame.select("id")
        .with_row_index("_row")
        .join(ids, on="id", how="semi", maintain_order="left")["_row"]
    )
    return frame if rows.len() == frame.height else frame[rows]
