"""Reading the run log: parts, sealed journals and the live journal, latest row per id."""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from arena.errors import ArenaInputError
from arena.store._files import (
    DIGEST_ID,
    add_prints,
    digest_halves,
    digest_keys,
    digest_order,
    drop_repeats,
    halves_fingerprint,
    halves_order,
    journal_path,
    keys_of_halves,
    latest_per_id,
    list_parts,
    list_sealed,
    max_key,
    missing_parts,
    parse_journal,
    read_journal,
    read_parts,
)
from arena.store._format import LOG_FORMAT, check_format, upgrade
from arena.store._schema import TABLES, table_schema

if TYPE_CHECKING:
    from arena.store._writer import LogWriter


def _writer_active(log_dir: Path) -> bool:
    """Whether this process has a started writer on `log_dir` (a process that never
    loaded the writer module has none, so a reader does not load it to ask)."""
    writer = sys.modules.get("arena.store._writer")
    return writer is not None and bool(writer.writer_active(log_dir))


__all__ = ["LEDGER_FILE", "LedgerDamaged", "RunLog", "Sums", "part_rows"]

_READ_ATTEMPTS = 50
# Parts `RunLog.scan` reads together: a few tens of thousands of rows at a time,
# whatever the size of the log.
SCAN_PARTS = 16


def _narrowest(largest: int) -> type[pl.DataType]:
    """The narrowest unsigned polars integer that holds 0..largest."""
    return pl.UInt8 if largest < 1 << 8 else pl.UInt16 if largest < 1 << 16 else pl.UInt32


def _enum_codes(
    codes: pl.Series, frame_codes: np.ndarray, texts: list[str], names: list[str]
) -> pl.Series:
    """A frame's codes (`frame_codes` stand for `texts`) as indices into `names`
    (sorted): a lookup table gathered by the codes, nulls kept."""
    table = np.zeros(int(frame_codes.max(initial=0)) + 1, dtype=np.uint32)
    sorted_names = np.array(names, dtype=object)
    table[frame_codes] = np.searchsorted(sorted_names, np.array(texts, dtype=object))
    width = _narrowest(max(0, len(names) - 1))
    return pl.Series(codes.name, table).cast(width).gather(codes)


# Parts `RunLog.read_coded` reads together: the frames are coded as they come, and a
# frame's texts stand in memory until it is coded, so more parts a frame is quicker
# and holds more. A run's history snapshot, whose memory is the end of a long run's
# peak, reads fewer at a time (LEAN_CODED_PARTS).
CODED_PARTS = 64
LEAN_CODED_PARTS = 24
# Parts `RunLog.sum_all` reads together: a frame's rows are added up and dropped, so
# bigger frames cost a few MB and save the per-frame work (a third of the time at 16).
SUM_PARTS = 64

# The spend ledger (DIR/log/spend_ledger.json): per table, provider and run id,
# the cost of every billed attempt seen before `arena gc` took rows out of the log.
LEDGER_FILE = "spend_ledger.json"
_LEDGER_COLUMNS = ("table", "provider", "run_id")


class LedgerDamaged(ArenaInputError):
    """DIR/log/spend_ledger.json cannot be read: names it and the fix (exit 2)."""

    def __init__(self, path: Path, reason: str) -> None:
        self.path = path
        super().__init__(
            f"{path}: the spend ledger cannot be read ({reason}). It holds what was spent "
            "on rows `arena gc` took out of the log: restore it from a backup; or move it "
            f"away (`mv {path} {path}.damaged`), and the spend (and budget_usd) counts only "
            "the rows still in the log until the next `arena gc` writes a new ledger"
        )


class _Renamed(Exception):
    """The live journal was sealed while it was being opened."""


@dataclass
class Sums:
    """Column totals of a table's rows per group (`RunLog.sum_all`).

    `totals[key][i]` is the sum of the i-th column (nulls count 0), `counted[key][i]`
    how many of its values were not null, `rows[key]` the group's rows.
    """

    columns: tuple[str, ...]
    totals: dict[tuple[str, ...], list[float]] = field(default_factory=dict)
    counted: dict[tuple[str, ...], list[int]] = field(default_factory=dict)
    rows: dict[tuple[str, ...], int] = field(default_factory=dict)

    def add(self, frame: pl.DataFrame, by: Sequence[str]) -> None:
        """Add a frame's rows (it has the `by` columns, as text, and `columns`)."""
        if not frame.height:
            return
        values = [pl.col(c) for c in self.columns]
        aggs = [
            pl.len().alias("_rows"),
            *[v.fill_null(0).sum().alias(f"_sum{i}") for i, v in enumerate(values)],
            *[v.count().alias(f"_n{i}") for i, v in enumerate(values)],
        ]
        agg = frame.group_by(list(by)).agg(aggs) if by else frame.select(aggs)
        n = len(self.columns)
        for row in agg.iter_rows(named=True):
            key = tuple(str(row[c]) for c in by)
            totals = self.totals.setdefault(key, [0] * n)
            counted = self.counted.setdefault(key, [0] * n)
            for i in range(n):
                totals[i] += row[f"_sum{i}"] or 0
                counted[i] += int(row[f"_n{i}"])
            self.rows[key] = self.rows.get(key, 0) + int(row["_rows"])

    def total(self, column: str) -> float:
        """A column's sum over every group."""
        i = self.columns.index(column)
        return sum(t[i] for t in self.totals.values())

    def count(self, column: str) -> int:
        """A column's values that were not null, over every group."""
        i = self.columns.index(column)
        return sum(c[i] for c in self.counted.values())


def part_rows(directory: str | os.PathLike[str], table: str) -> int:
    """Rows in a table's Parquet parts in DIR's log (superseded ones included, journals
    not), from the parts' footers: a size hint that reads no column and, unlike
    `RunLog`, creates nothing (0 where there is no log)."""
    paths = [path for _, path in list_parts(Path(directory) / "log", table)]
    if not paths:
        return 0
    try:
        return int(pl.scan_parquet(paths).select(pl.len()).collect().item())
    except (OSError, pl.exceptions.PolarsError):  # a part moved or quarantined meanwhile
        return 0


# The columns a frame's ids stand as while read (`digest_halves`).
HALVES = ("_id_high", "_id_low")


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The arrays as one array of its own; `parts` is emptied (their memory goes)."""
    out = np.concatenate(parts) if len(parts) != 1 else parts[0].copy()
    parts.clear()
    return out


class RunLog:
    """The append-only log of one run directory (`DIR/log/`).

    Any number of readers may read while one `LogWriter` writes; readers take
    no lock and never modify the log.
    """

    def __init__(self, directory: str | os.PathLike[str], *, repair: bool = False) -> None:
        self.directory = Path(directory)
        self.log_dir = self.directory / "log"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        # The format the log records (0: none, a log from before versions); a newer
        # one than this arena reads is refused here, before anything is read.
        self.format = check_format(self.log_dir)
        # Move parts that cannot be decoded to quarantine (else they are only
        # skipped): asked for (`arena gc`), or while this process writes the log.
        self.repair = repair

    def _repairs(self) -> bool:
        return self.repair or _writer_active(self.log_dir)

    def writer(self, *, compact_every: int = 2000) -> LogWriter:
        """A writer for this log; use as `async with log.writer() as w`."""
        from arena.store._writer import LogWriter

        return LogWriter(self.directory, compact_every=compact_every)

    def read(self, table: str, columns: Sequence[str] | None = None) -> pl.DataFrame:
        """Every row of a table, the last written one per `id`, with the table's schema.

        `columns` selects the columns to read (`id` always comes first): Parquet
        parts then read only those from disk, so a caller that needs ids and
        statuses does not load every text. An unknown column is a ValueError.
        """
        names = table_schema(table).names  # unknown table -> ValueError
        cols: list[str] | None = None
        if columns is not None:
            unknown = [c for c in columns if c not in names]
            if unknown:
                raise ValueError(f"table {table!r} has no column(s) {', '.join(unknown)}")
            cols = list(dict.fromkeys(["id", *columns]))
        missing_parts(self.log_dir, table)  # warns about deleted parts
        for _ in range(_READ_ATTEMPTS):
            try:
                return latest_per_id(self._read_frames(table, cols), table, cols)
            except _Renamed:
                continue
        raise RuntimeError(f"could not read table {table!r} of {self.log_dir}: it kept moving")

    def read_coded(
        self,
        table: str,
        columns: Sequence[str],
        coded: Sequence[str],
        *,
        threads: int = 1,
        known: tuple[int, int, int] | None = None,
        parts: int = CODED_PARTS,
    ) -> pl.DataFrame:
        """`read(table, columns)` with the text columns `coded` as polars Enums (their
        values, in text order), read a few parts at a time (`scan`) and each part's
        texts coded as it comes: a million rows never stand as those texts.

        When every id is as the plan makes them (one letter for the table, `-` and
        24 hex digits), the ids come as their `digest_keys` (Int128: 16 bytes a row
        where the text takes about 42), in id order; other ids come as text. While
        read, they stand as their two halves (`digest_halves`, 12 bytes a row): the
        order is found on those and the keys made in that order, a slice at a time.
        `threads` columns are put in that order at a time (each stands twice over
        while it is: the history snapshot of a long run keeps to one).

        `known`: a `digest_fingerprint` (the plan's, `plan_fingerprint`). When the
        table's ids have exactly that fingerprint, no key is made: the rows come
        in id order without an `id` column (a caller that needs no id beyond
        knowing that the log holds the plan's ids, spared 16 bytes a row). When
        each of those ids is there once, the sort of the ids' first halves is
        done on them in place (4 bytes a row less).

        `parts`: log parts read (as text) and coded together; fewer hold less
        text at a time and take longer.
        """
        cols = list(dict.fromkeys(["id", *columns]))
        as_codes = [pl.col(c).cast(pl.Categorical) for c in coded]
        frames: list[pl.DataFrame] = []
        # Per frame and coded column: the frame's codes and their texts. A frame keeps
        # its codes in the narrowest unsigned integer that holds them (a byte a row
        # for models and verdicts) until the Enums are known.
        found: list[dict[str, tuple[np.ndarray, list[str]]]] = []
        halves: tuple[list[np.ndarray], list[np.ndarray]] = ([], [])  # `digest_halves`
        # With `known`: the fingerprint of every row's id as read (a repeated id counted
        # again), which equals `known` only when each of its ids is there once.
        prints = [np.uint64(0), np.uint64(0)]
        plain = [c for c in cols if c != "id" and c not in coded]
        dtypes: dict[str, pl.DataType] = {}  # of the columns a frame holds as Null
        letter: str | None = None
        # Frames of CODED_PARTS parts: their rows stand coded (about 25 bytes each), so
        # bigger frames cost little memory and save the per-frame work.
        text = pl.col("id")
        for frame in self.scan(table, cols, parts=parts):
            ids = frame["id"]
            first = None if ids.dtype != pl.String or ids.null_count() else ids[0][:2]
            if first is None or letter not in (None, first):
                return self._read_coded_text(table, cols, coded)  # an id of another kind
            letter = first
            # The ids turned, checked and the texts coded in one parallel pass.
            frame = frame.with_columns(
                *(half.alias(name) for half, name in zip(digest_halves(text), HALVES, strict=True)),
                *as_codes,
                (text.str.contains(DIGEST_ID) & text.str.starts_with(first)).all().alias("_ok"),
            )
            if not frame["_ok"][0]:
                return self._read_coded_text(table, cols, coded)  # an id of another kind
            # The ids stand as their two halves (12 bytes a row) until the rows are in
            # order: the order is found on them, and the keys are made in that order.
            for k, name in enumerate(HALVES):
                halves[k].append(frame[name].to_numpy())
            if known is not None:
                add_prints(prints, halves[0][-1], halves[1][-1])
            frame = frame.drop("_ok", "id", *HALVES)
            uniques = frame.select(pl.col(c).unique().drop_nulls().implode() for c in coded)
            seen: dict[str, tuple[np.ndarray, list[str]]] = {}
            for c, values in zip(coded, uniques.get_columns(), strict=True):
                values = values.explode().drop_nulls()
                seen[c] = (values.to_physical().to_numpy(), values.cast(pl.String).to_list())
            # A column null in every row of the frame (graded verdicts' share and weight,
            # in a log of plain ones) stands as a Null column: no memory, not 9 bytes a row.
            nulls = [c for c in plain if frame[c].null_count() == frame.height]
            dtypes.update((c, frame.schema[c]) for c in nulls)
            frame = frame.with_columns(
                *(
                    pl.col(c).to_physical().cast(_narrowest(int(seen[c][0].max(initial=0))))
                    for c in coded
                ),
                *(pl.lit(None, dtype=pl.Null).alias(c) for c in nulls),
            )
            found.append(seen)
            frames.append(frame)
        if not frames:
            return self._read_coded_text(table, cols, coded)
        # Each frame's codes as the Enums' in its turn; a column null in every frame stays
        # a Null column (no memory), one null in some frames only takes its type again in
        # those; then the rows in id order, a column at a time: a million rows never
        # stand twice over.
        empty = {c for c in plain if all(f.schema[c] == pl.Null for f in frames)}
        names = {c: sorted({t for seen in found for t in seen[c][1]}) for c in coded}
        enums = {c: pl.Enum(names[c]) for c in coded}
        for k, frame in enumerate(frames):
            frames[k] = frame.with_columns(
                *(_enum_codes(frame[c], *found[k][c], names[c]).cat.to(enums[c]) for c in coded),
                *(
                    pl.col(c).cast(dtypes[c])
                    for c in plain
                    if c not in empty and frame.schema[c] == pl.Null
                ),
            )
        merged = pl.concat(frames, how="vertical", rechunk=False)
        del frames, frame
        from concurrent.futures import ThreadPoolExecutor

        # In id order, an id's rows in the order written: its latest row is kept (as
        # `drop_repeats` keeps it), found on the sorted ids without hashing them. The
        # keys are made in that order first, then the halves go.
        high, low = _joined(halves[0]), _joined(halves[1])
        if known is not None and (high.size, int(prints[0]), int(prints[1])) == known:
            # The plan's ids, each once: no key is made, and `high` itself is sorted.
            found_order = halves_order(high, low, consume=True)
            keyless = True
        else:
            found_order = halves_order(high, low, latest=True)
            keyless = known is not None and halves_fingerprint(high, low, found_order) == known
        keys = None if keyless else keys_of_halves(high, low, found_order)
        del high, low
        order = pl.Series(found_order)
        del found_order
        series = merged.get_columns()
        del merged

        def gather(k: int) -> None:  # each column replaced by its rows in order
            series[k] = series[k].gather(order)

        if threads <= 1:
            for k in range(len(series)):
                gather(k)
        else:  # `threads` columns at a time (polars lets go of the interpreter)
            with ThreadPoolExecutor(threads, thread_name_prefix="arena-gather") as pool:
                list(pool.map(gather, range(len(series))))
        return pl.DataFrame(series if keys is None else [keys.set_sorted(), *series])

    def _read_coded_text(self, table: str, cols: list[str], coded: Sequence[str]) -> pl.DataFrame:
        """`read_coded` of a table whose ids are not all as the plan makes them."""
        as_codes = [pl.col(c).cast(pl.Categorical) for c in coded]
        frames = [frame.with_columns(as_codes) for frame in self.scan(table, cols)]
        merged = (
            drop_repeats(pl.concat(frames, how="vertical", rechunk=True), "id")
            if frames
            else self.read(table, cols)
        )
        del frames
        merged = self._as_enums(merged, coded)
        if merged.height and not merged["id"].null_count():
            keys = digest_keys(merged["id"])
            if keys is not None:  # ids of one letter: sorted on their digits (as text)
                merged = merged[digest_order(keys)].with_columns(pl.col("id").set_sorted())
        return merged

    @staticmethod
    def _as_enums(frame: pl.DataFrame, coded: Sequence[str]) -> pl.DataFrame:
        names = {c: sorted(frame[c].drop_nulls().unique().cast(pl.String).to_list()) for c in coded}
        return frame.with_columns(pl.col(c).cast(pl.Enum(names[c])) for c in coded)

    def has_files(self, table: str) -> bool:
        """Whether a table has any file (a journal or a part) in the log."""
        return self._has_files(table)

    def read_where(
        self, table: str, where: pl.Expr, columns: Sequence[str] | None = None
    ) -> pl.DataFrame:
        """`read(table, columns).filter(where)`, a few parts at a time (`scan`).

        Memory grows with the rows kept, not with the log: each frame's rows that
        match are kept, and a kept row is dropped when a later frame writes its id
        again (the later row is kept in its place if it matches). `where` may use
        only `columns`.
        """
        cols = None if columns is None else list(dict.fromkeys(["id", *columns]))
        kept: list[pl.DataFrame] = []
        for frame in self.scan(table, cols):
            latest = drop_repeats(frame, "id")
            if kept:
                ids = latest.select("id")
                kept = [k.join(ids, on="id", how="anti", maintain_order="left") for k in kept]
            match = latest.filter(where)
            if match.height:
                kept.append(match)
            kept = [pl.concat(kept)] if len(kept) > 32 else kept
        return latest_per_id(kept, table, cols)

    def read_all(self, table: str, columns: Sequence[str] | None = None) -> pl.DataFrame:
        """Every row ever written to a table, superseded ones included, oldest first.

        `columns` as in `read`; identical rows count once (pass columns that
        tell two writes apart, such as `started_at`).
        """
        names = table_schema(table).names
        cols = None if columns is None else list(dict.fromkeys(["id", *columns]))
        if cols is not None and not set(cols) <= set(names):
            raise ValueError(f"table {table!r} has no column(s) {set(cols) - set(names)}")
        for _ in range(_READ_ATTEMPTS):
            try:
                frames = [f for f in self._read_frames(table, cols) if f.height]
            except _Renamed:
                continue
            if not frames:
                return latest_per_id([], table, cols)
            # A crash between a part and the deletion of its journal leaves
            # the same rows twice: identical rows are one write.
            return drop_repeats(pl.concat(frames, how="vertical", rechunk=True))
        raise RuntimeError(f"could not read table {table!r} of {self.log_dir}: it kept moving")

    def spent_usd(self) -> float:
        """Cost of every billed attempt: every row of every table of calls, and what rows
        taken out of the log by `arena gc` had cost (the ledger)."""
        return float(sum(self.spend_groups().values()))

    def spent_by_provider(self, table: str) -> dict[str, float]:
        """`spent_usd` of one table, per provider."""
        out: dict[str, float] = {}
        for (name, provider, _), usd in self.spend_groups([table]).items():
            if name == table:
                out[provider] = out.get(provider, 0.0) + usd
        return out

    def spend_groups(
        self, tables: Iterable[str] | None = None
    ) -> dict[tuple[str, str, str], float]:
        """Spend per (table, provider, run id): the larger of the log's rows and the
        ledger's total (the log only loses rows, to `arena gc`, after the ledger has
        their cost). A row without provider or run id counts under ''."""
        live = self._live_spend(tables)
        ledger = {k: v for k, v in self.ledger().items() if tables is None or k[0] in tables}
        return {k: max(live.get(k, 0.0), ledger.get(k, 0.0)) for k in {*live, *ledger}}

    def _live_spend(self, tables: Iterable[str] | None = None) -> dict[tuple[str, str, str], float]:
        wanted = set(TABLES) if tables is None else set(tables)
        out: dict[tuple[str, str, str], float] = {}
        for table, schema in list(TABLES.items()):
            if table not in wanted or "cost_usd" not in schema.names:
                continue
            if not self._has_files(table):
                continue
            # The columns that tell two writes apart, as `read_all` reads them.
            by = [c for c in ("provider", "run_id") if c in schema.names]
            sums = self.sum_all(table, ["cost_usd"], by=by, distinct=["started_at", "finished_at"])
            for key, (usd,) in sums.totals.items():
                named = dict(zip(by, key, strict=True))
                out[(table, named.get("provider", ""), named.get("run_id", ""))] = float(usd)
        return out

    def sum_all(
        self,
        table: str,
        columns: Sequence[str],
        *,
        by: Sequence[str] = (),
        distinct: Sequence[str] = (),
    ) -> Sums:
        """Totals of numeric `columns` over every row ever written to a table, per group
        of the `by` columns (as text; null reads as ''): what `read_all(table, [*by,
        *columns, *distinct])` would add up, identical rows counting once.

        The log is read a few parts at a time (`scan`), so memory does not grow with
        the log but for one 8-byte hash per row, which finds rows written twice (a crash
        between a part and the deletion of its journal). The rows are hashed without
        their ids (a million ids are most of what such a reading reads); only when
        two rows agree on every other column are the ids read and hashed with them,
        and when whole rows repeat, the table is read whole (`read_all`) and its
        repeats dropped as there.
        """
        wanted = list(dict.fromkeys([*by, *columns, *distinct]))
        keys = [pl.col(c).cast(pl.String).fill_null("").alias(c) for c in by]
        sums = Sums(tuple(columns))
        hashes: list[np.ndarray] = []
        for frame in self.scan(table, wanted, parts=SUM_PARTS, ids=False):
            hashes.append(frame.hash_rows().to_numpy())
            sums.add(frame.with_columns(keys), by)
        if not _repeats(hashes):
            return sums
        hashes = [f.hash_rows().to_numpy() for f in self.scan(table, wanted, parts=SUM_PARTS)]
        if not _repeats(hashes):  # rows alike but for their ids: different calls
            return sums
        sums = Sums(tuple(columns))  # a row twice: as `read_all` counts it
        sums.add(self.read_all(table, wanted).with_columns(keys), by)
        return sums

    def ledger(self) -> dict[tuple[str, str, str], float]:
        """The spend ledger (see LEDGER_FILE): {} before the first `arena gc`."""
        path = self.log_dir / LEDGER_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise LedgerDamaged(path, str(exc)) from None
        entries = data.get("entries") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise LedgerDamaged(path, 'expected {"version": 1, "entries": [...]}')
        out: dict[tuple[str, str, str], float] = {}
        for i, entry in enumerate(entries):
            cost = entry.get("cost_usd") if isinstance(entry, dict) else None
            if (
                cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float))
            ) or not isinstance(entry, dict):
                shape = "{table, provider, run_id, cost_usd}"
                raise LedgerDamaged(path, f"entries[{i}] is not {shape}")
            if cost is not None and not (math.isfinite(cost) and cost >= 0):
                raise LedgerDamaged(path, f"entries[{i}]: cost_usd {cost!r} is not an amount")
            key = tuple(str(entry.get(c) or "") for c in _LEDGER_COLUMNS)
            out[(key[0], key[1], key[2])] = float(cost or 0.0)
        return out

    def record_ledger(self) -> None:
        """Write every group's spend to the ledger (before `arena gc` takes rows out of the
        log; the caller holds the run lock). Atomic: a temporary file, fsync, rename."""
        groups = self.spend_groups()
        entries = [
            {"table": t, "provider": p, "run_id": r, "cost_usd": usd}
            for (t, p, r), usd in sorted(groups.items())
        ]
        path = self.log_dir / LEDGER_FILE
        tmp = self.log_dir / f".{LEDGER_FILE}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump({"version": 1, "entries": entries}, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)

    def missing_parts(self) -> dict[str, list[str]]:
        """Per table, the parts its manifest lists that were deleted (warned about)."""
        found = {table: missing_parts(self.log_dir, table) for table in list(TABLES)}
        return {table: names for table, names in found.items() if names}

    def _has_files(self, table: str) -> bool:
        return bool(
            journal_path(self.log_dir, table).exists()
            or list_sealed(self.log_dir, table)
            or list_parts(self.log_dir, table)
        )

    def ids(self, table: str, statuses: Iterable[str] | None = None) -> set[str]:
        """Ids whose latest row has a status in `statuses` (every id when None)."""
        frame = self.read(table, columns=["status"])
        if statuses is not None:
            frame = frame.filter(pl.col("status").is_in([str(s) for s in statuses]))
        return set(frame["id"].to_list())

    def scan(
        self,
        table: str,
        columns: Sequence[str] | None = None,
        *,
        parts: int = SCAN_PARTS,
        ids: bool = True,
    ) -> Iterator[pl.DataFrame]:
        """Every row ever written to a table, oldest first, in frames of a few parts each.

        The rows of `read_all` before it drops repeats (`columns` as there, `id`
        first), read a few parts at a time (SCAN_PARTS), so that a caller keeping
        running totals holds one frame at a time whatever the size of the log. The
        journals are read when the scan starts and each part in its turn: a part
        quarantined meanwhile is skipped. An unknown column is a ValueError.
        `ids=False` leaves the `id` column out unless `columns` names it.
        """
        names = table_schema(table).names
        first = ["id"] if ids else []
        cols = None if columns is None else list(dict.fromkeys([*first, *columns]))
        if cols is not None and not set(cols) <= set(names):
            raise ValueError(f"table {table!r} has no column(s) {set(cols) - set(names)}")
        missing_parts(self.log_dir, table)  # warns about deleted parts, as `read` does
        for _ in range(_READ_ATTEMPTS):
            try:
                items = self._listing(table, cols)
            except _Renamed:
                continue
            return self._scanned(table, items, cols, parts)
        raise RuntimeError(f"could not read table {table!r} of {self.log_dir}: it kept moving")

    def _scanned(
        self, table: str, items: list[pl.DataFrame | Path], cols: list[str] | None, parts: int
    ) -> Iterator[pl.DataFrame]:
        repair = self._repairs()
        for frame in _frames(table, items, cols, repair, parts):
            if not frame.height:
                continue
            yield upgrade(frame, table, self.format) if self.format < LOG_FORMAT else frame

    def _read_frames(self, table: str, cols: list[str] | None) -> list[pl.DataFrame]:
        """One pass over a table's files, oldest rows first (see `_listing`)."""
        frames = list(_frames(table, self._listing(table, cols), cols, self._repairs()))
        if self.format < LOG_FORMAT:  # an older log: its rows as this format has them
            frames = [upgrade(frame, table, self.format) for frame in frames]
        return frames

    def _listing(self, table: str, cols: list[str] | None) -> list[pl.DataFrame | Path]:
        """A table's files in the order of their rows, safe against a running writer: the
        journals' rows (read now) and the parts' paths (read by the caller).

        Files are listed against the flow of rows (live journal, sealed journals,
        parts), so a row moving on during the pass lands in a file read later;
        a sealed journal that vanished was compacted into a part listed later.
        The live journal's rows belong after every file keyed before it was
        opened (`opened_after`) and before every file keyed since, which holds
        a superset of them (the same journal, sealed) or newer rows.
        """
        live_path = journal_path(self.log_dir, table)
        live: pl.DataFrame | None = None
        try:
            f = open(live_path, "rb")
        except FileNotFoundError:
            opened_after = max_key(self.log_dir, table)
        else:
            with f:
                opened_after = max_key(self.log_dir, table)
                if not _same_file(live_path, f.fileno()):
                    raise _Renamed  # maybe sealed before the keys were listed
                live = _select(parse_journal(table, f.read(), live_path), cols)

        files: list[tuple[int, int, pl.DataFrame | Path]] = []
        for key, path in list_sealed(self.log_dir, table):
            try:
                files.append((key, 0, _select(read_journal(table, path), cols)))
            except FileNotFoundError:
                continue  # compacted meanwhile: its part is listed below
        files.extend((key, 1, path) for key, path in list_parts(self.log_dir, table))
        files.sort(key=lambda entry: entry[:2])
        before = [item for key, _, item in files if key <= opened_after]
        after = [item for key, _, item in files if key > opened_after]
        return [*before, *([live] if live is not None else []), *after]


def _repeats(hashes: list[np.ndarray]) -> bool:
    """Whether a hash occurs twice among the arrays (emptied: their memory goes).

    The arrays are moved one by one into one array and each freed once moved, so
    that the hashes stand once (8 bytes a row), not twice as with a concatenation."""
    found = np.empty(sum(h.size for h in hashes), dtype=np.uint64)
    at = 0
    hashes.reverse()
    while hashes:
        part = hashes.pop()
        found[at : at + part.size] = part
        at += part.size
        del part
    found.sort()  # in place: a repeat is two equal neighbours
    return bool((found[1:] == found[:-1]).any())


def _select(frame: pl.DataFrame, cols: list[str] | None) -> pl.DataFrame:
    return frame if cols is None else frame.select(cols)


def _frames(
    table: str,
    items: list[pl.DataFrame | Path],
    cols: list[str] | None,
    repair: bool,
    most: int | None = None,
) -> Iterator[pl.DataFrame]:
    """Frames in order, each run of consecutive parts read in one go (at most `most`
    parts a read), each when its turn comes."""
    run: list[Path] = []
    for item in items:
        if isinstance(item, Path):
            run.append(item)
            if most is not None and len(run) >= most:
                yield read_parts(table, run, cols, repair=repair)
                run = []
            continue
        if run:
            yield read_parts(table, run, cols, repair=repair)
            run = []
        yield item
    if run:
        yield read_parts(table, run, cols, repair=repair)


def _same_file(path: Path, fd: int) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    fst = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (fst.st_dev, fst.st_ino)
