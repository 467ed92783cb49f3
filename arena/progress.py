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
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

__all__ = [
    "BarsView",
    "Figures",
    "LineView",
    "RunProgress",
    "Snapshot",
    "StageCounts",
    "StageFigures",
    "format_duration",
    "plain_line",
    "RATE_WINDOW_S",
    "View",
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
    spent_usd: float | None = 0.0  # None: not known to this display
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
    parts.append("spent --" if last.spent_usd is None else f"spent ${last.spent_usd:.4f}")
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
        # Local time, as every other timestamped line arena and its nightly wrapper write.
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.clock()))
        self.stream.write(f"[{stamp}] {plain_line(self.figures)}\n")
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


class View(Protocol):
    """Shows snapshots (`LineView`, `BarsView`)."""

    def show(self, snapshot: Snapshot) -> None: ...

    def close(self) -> None: ...


class RunProgress:
    """The runner's progress callback: shows a snapshot at most once per `interval` seconds.

    The runner calls it as `progress(stage, done, total)` whenever a count
    changes; that only records the counts. With the run's stats bound
    (`bind_stats`, the runner does it: per stage planned, done and failed
    calls, and the retries) and its scheduler (`bind_scheduler`: the spend),
    each snapshot carries every figure. `close` shows the final one.
    """

    def __init__(
        self, view: View, *, interval: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.view = view
        self.interval = interval
        self.clock = clock
        self.started = clock()
        self.last: float | None = None
        self.counts: dict[str, tuple[int, int]] = {}
        self.stats: Any = None  # arena.runner.RunStats
        self.scheduler: Any = None  # arena.scheduler.Scheduler

    def bind_stats(self, stats: Any) -> None:
        self.stats = stats

    def bind_scheduler(self, scheduler: Any) -> None:
        self.scheduler = scheduler

    def __call__(self, stage: str, done: int, total: int) -> None:
        self.counts[stage] = (done, total)
        now = self.clock()
        if self.last is None or now - self.last >= self.interval:
            self.last = now
            self.view.show(self.snapshot(now))

    def snapshot(self, now: float | None = None) -> Snapshot:
        """Every stage's counts, the spend and the retries as of now."""
        at = (self.clock() if now is None else now) - self.started
        if self.stats is not None:
            stages = tuple(
                StageCounts(name, s.done, max(s.planned, s.done), s.failed)
                for name, s in self.stats.stages.items()
                if s.planned or s.done
            )
            retries = int(getattr(self.stats, "retries", 0))
        else:
            stages = tuple(StageCounts(n, d, t) for n, (d, t) in self.counts.items())
            retries = 0
        spent = float(self.scheduler.spent_usd) if self.scheduler is not None else None
        return Snapshot(at, stages, spent, retries)

    def close(self) -> None:
        """Show the final figures and release the view."""
        if self.counts or self.stats is not None:
            self.view.show(self.snapshot())
        self.view.close()
