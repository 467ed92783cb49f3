"""Progress of a run that people can plan by: per stage done / total, rate, ETA, spend.

The runner's counts are sampled at a fixed interval (never per call): each
sample is a `Snapshot` of every stage's done and total (totals grow as stages
add work, a discussion per disagreement for instance), the spend so far, the
retries and the failures. `Figures` turns successive snapshots into rates
(calls per second over a sliding window) and an ETA per stage and overall.

Two views show the same figures: `BarsView` (rich bars, for a terminal) and
`LineView` (one plain timestamped line per interval, for cron and logs).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, Any

__all__ = [
    "BarsView",
    "Figures",
    "LineView",
    "Snapshot",
    "StageCounts",
    "StageFigures",
    "format_duration",
    "plain_line",
]

# Rates are measured over this many seconds of recent samples.
RATE_WINDOW_S = 30.0


@dataclass(frozen=True)
class StageCounts:
    """One stage's calls: those that need nothing more (`done`) out of `total` so far."""

    name: str
    done: int
    total: int
    failed: int = 0


@dataclass(frozen=True)
class Snapshot:
    """Every stage's counts at one moment (`at`: seconds since the run started)."""

    at: float
    stages: tuple[StageCounts, ...]
    spent_usd: float = 0.0
    retries: int = 0

    @property
    def done(self) -> int:
        return sum(s.done for s in self.stages)

    @property
    def total(self) -> int:
        return sum(max(s.total, s.done) for s in self.stages)

    @property
    def failed(self) -> int:
        return sum(s.failed for s in self.stages)


@dataclass(frozen=True)
class StageFigures:
    """What a view shows for one stage (or for the whole run, named "all")."""

    name: str
    done: int
    total: int
    rate: float | None  # calls per second over the recent window; None before two samples
    eta_s: float | None  # seconds left at that rate; None when unknown


def format_duration(seconds: float | None) -> str:
    """`h:mm:ss` (or `m:ss` under an hour); `--:--` when unknown."""
    if seconds is None:
        return "--:--"
    whole = int(round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def _eta(done: int, total: int, rate: float | None) -> float | None:
    if done >= total:
        return 0.0
    if rate is None or rate <= 0:
        return None
    return (total - done) / rate


@dataclass
class Figures:
    """Rates and ETAs from successive snapshots (a sliding window of `window_s` seconds)."""

    window_s: float = RATE_WINDOW_S
    _samples: deque[Snapshot] = field(default_factory=deque)

    def add(self, snapshot: Snapshot) -> None:
        """Record a sample; samples older than the window (but the newest old one) are dropped."""
        self._samples.append(snapshot)
        while len(self._samples) > 2 and snapshot.at - self._samples[1].at >= self.window_s:
            self._samples.popleft()

    @property
    def latest(self) -> Snapshot | None:
        return self._samples[-1] if self._samples else None

    def _rate(self, done_of: Callable[[Snapshot], int]) -> float | None:
        if len(self._samples) < 2:
            return None
        first, last = self._samples[0], self._samples[-1]
        elapsed = last.at - first.at
        if elapsed <= 0:
            return None
        return max(0, done_of(last) - done_of(first)) / elapsed

    def stages(self) -> list[StageFigures]:
        """Per stage figures, then the whole run as "all"."""
        last = self.latest
        if last is None:
            return []
        out: list[StageFigures] = []
        for stage in last.stages:

            def done_of(s: Snapshot, name: str = stage.name) -> int:
                return next((c.done for c in s.stages if c.name == name), 0)

            rate = self._rate(done_of)
            total = max(stage.total, stage.done)
            out.append(
                StageFigures(stage.name, stage.done, total, rate, _eta(stage.done, total, rate))
            )
        rate = self._rate(lambda s: s.done)
        out.append(
            StageFigures("all", last.done, last.total, rate, _eta(last.done, last.total, rate))
        )
        return out


def plain_line(figures: Figures) -> str:
    """One line with every figure: per stage done/total, rate, ETA, spend, retries, failures."""
    last = figures.latest
    if last is None:
        return "starting"
    parts = [f"{s.name} {s.done}/{s.total}" for s in figures.stages()[:-1]]
    overall = figures.stages()[-1]
    rate = "--" if overall.rate is None else f"{overall.rate:.1f}"
    parts.append(f"| {rate} calls/s")
    parts.append(f"ETA {format_duration(overall.eta_s)}")
    parts.append(f"elapsed {format_duration(last.at)}")
    parts.append(f"spent ${last.spent_usd:.4f}")
    parts.append(f"retries {last.retries}")
    parts.append(f"failed {last.failed}")
    return " ".join(parts)


class LineView:
    """One plain timestamped line per sample (the runner samples at the interval)."""

    def __init__(self, stream: IO[str], clock: Callable[[], float] = time.time) -> None:
        self.stream = stream
        self.clock = clock
        self.figures = Figures()

    def show(self, snapshot: Snapshot) -> None:
        self.figures.add(snapshot)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.clock()))
        self.stream.write(f"[{stamp}Z] {plain_line(self.figures)}\n")
        self.stream.flush()

    def close(self) -> None:
        """Nothing to tear down: every line is already written."""


class BarsView:
    """Rich progress bars: one per stage (its total grows as work is added) and a footer."""

    def __init__(self, console: Any = None) -> None:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.figures = Figures()
        self.bars = Progress(
            TextColumn("{task.description:>12}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]:>12}"),
            TextColumn("ETA {task.fields[eta]:>8}"),
            console=console,
            transient=False,
        )
        self.tasks: dict[str, Any] = {}
        self.bars.start()

    def show(self, snapshot: Snapshot) -> None:
        self.figures.add(snapshot)
        for s in self.figures.stages():
            name = s.name if s.name != "all" else self._footer(snapshot)
            rate = "--/s" if s.rate is None else f"{s.rate:.1f}/s"
            eta = format_duration(s.eta_s)
            if s.name not in self.tasks:
                self.tasks[s.name] = self.bars.add_task(name, total=s.total, rate=rate, eta=eta)
            self.bars.update(
                self.tasks[s.name],
                description=name,
                completed=s.done,
                total=s.total,
                rate=rate,
                eta=eta,
            )

    @staticmethod
    def _footer(snapshot: Snapshot) -> str:
        return (
            f"all (${snapshot.spent_usd:.4f}, retries {snapshot.retries}, failed {snapshot.failed})"
        )

    def close(self) -> None:
        self.bars.stop()


def snapshot_of(
    at: float,
    counts: Sequence[tuple[str, int, int, int]],
    spent_usd: float,
    retries: int,
) -> Snapshot:
    """A Snapshot from (stage, done, total, failed) tuples."""
    return Snapshot(at, tuple(StageCounts(n, d, t, f) for n, d, t, f in counts), spent_usd, retries)
