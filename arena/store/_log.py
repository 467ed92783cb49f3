"""Reading the run log: parts, sealed journals and the live journal, latest row per id."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

import polars as pl

from arena.store._files import (
    drop_repeats,
    journal_path,
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
from arena.store._writer import LogWriter, writer_active

__all__ = ["LEDGER_FILE", "RunLog"]

_READ_ATTEMPTS = 50

# The spend ledger (DIR/log/spend_ledger.json): per table, provider and run id,
# the cost of every billed attempt seen before `arena gc` took rows out of the log.
LEDGER_FILE = "spend_ledger.json"
_LEDGER_COLUMNS = ("table", "provider", "run_id")


class _Renamed(Exception):
    """The live journal was sealed while it was being opened."""


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
        return self.repair or writer_active(self.log_dir)

    def writer(self, *, compact_every: int = 2000) -> LogWriter:
        """A writer for this log; use as `async with log.writer() as w`."""
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
            cols = ["cost_usd", "started_at", "finished_at"]
            cols += [c for c in ("provider", "run_id") if c in schema.names]
            rows = self.read_all(table, cols)
            if not rows.height:
                continue
            keys = [
                (pl.col(c) if c in rows.columns else pl.lit(None)).cast(pl.String).fill_null("")
                for c in ("provider", "run_id")
            ]
            by = (
                rows.select(
                    *[k.alias(n) for k, n in zip(keys, ("provider", "run_id"), strict=True)],
                    pl.col("cost_usd").fill_null(0.0),
                )
                .group_by("provider", "run_id")
                .agg(pl.col("cost_usd").sum())
            )
            for provider, run_id, usd in by.iter_rows():
                out[(table, str(provider), str(run_id))] = float(usd or 0.0)
        return out

    def ledger(self) -> dict[tuple[str, str, str], float]:
        """The spend ledger (see LEDGER_FILE): {} before the first `arena gc`."""
        path = self.log_dir / LEDGER_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise ValueError(f"{path}: the spend ledger cannot be read: {exc}") from exc
        out: dict[tuple[str, str, str], float] = {}
        for entry in data.get("entries", []) if isinstance(data, dict) else []:
            key = tuple(str(entry.get(c) or "") for c in _LEDGER_COLUMNS)
            out[(key[0], key[1], key[2])] = float(entry.get("cost_usd") or 0.0)
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

    def _read_frames(self, table: str, cols: list[str] | None) -> list[pl.DataFrame]:
        """One pass over a table's files, oldest rows first, safe against a running writer.

        Files are read against the flow of rows (live journal, sealed journals,
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
                live = _select(parse_journal(table, f.read()), cols)

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
        live_frames = [live] if live is not None else []
        repair = self._repairs()
        frames = [
            *_frames(table, before, cols, repair),
            *live_frames,
            *_frames(table, after, cols, repair),
        ]
        if self.format < LOG_FORMAT:  # an older log: its rows as this format has them
            frames = [upgrade(frame, table, self.format) for frame in frames]
        return frames


def _select(frame: pl.DataFrame, cols: list[str] | None) -> pl.DataFrame:
    return frame if cols is None else frame.select(cols)


def _frames(
    table: str, items: list[pl.DataFrame | Path], cols: list[str] | None, repair: bool
) -> list[pl.DataFrame]:
    """Frames in order, reading each run of consecutive parts in one go."""
    frames: list[pl.DataFrame] = []
    run: list[Path] = []
    for item in items:
        if isinstance(item, Path):
            run.append(item)
            continue
        if run:
            frames.append(read_parts(table, run, cols, repair=repair))
            run = []
        frames.append(item)
    if run:
        frames.append(read_parts(table, run, cols, repair=repair))
    return frames


def _same_file(path: Path, fd: int) -> bool:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    fst = os.fstat(fd)
    return (st.st_dev, st.st_ino) == (fst.st_dev, fst.st_ino)
