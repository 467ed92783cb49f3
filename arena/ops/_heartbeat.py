"""A run's heartbeat: the metrics say a run is going, and an alert goes out once when it
goes on longer than `alerts.after_seconds`.

While a recorded run makes calls, every `interval` seconds the metrics file
(when the tournament names one) is written with `arena_run_in_progress 1`,
the run's start and the time its calls last advanced, beside the previous
run's gauges. A monitor can then tell a run that is working from one that
hangs (the last progress stands still) or was killed (the heartbeat stops,
`arena status` says killed). The final metrics of the run (in progress 0)
are written by `RunRecord.finish`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio

__all__ = ["HEARTBEAT_SECONDS", "Heartbeat"]

HEARTBEAT_SECONDS = 30.0  # between two writes of the metrics while a run works


@dataclass
class Heartbeat:
    """The heartbeat of one recorded run (`rec`: its `RunRecord`); `done()` counts the
    calls finished so far (a change is progress)."""

    rec: Any  # arena.ops.RunRecord
    done: Callable[[], int]
    interval: float = HEARTBEAT_SECONDS
    progress_unix: float = field(default_factory=time.time)
    last_done: int = -1
    overdue_sent: bool = False
    _task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Beat on the running event loop until the loop ends (or `stop`)."""
        import asyncio  # here: the commands that never run calls do not load it

        settings = self.rec.alert_settings_once()
        if settings.metrics_file is None and settings.after_seconds is None:
            return
        if settings.after_seconds is not None:  # notice the overrun soon after it happens
            self.interval = min(self.interval, max(0.5, settings.after_seconds / 4))
        self._task = asyncio.get_running_loop().create_task(self._beat())

    def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()

    async def _beat(self) -> None:
        import asyncio

        while True:
            self.beat()
            await asyncio.sleep(self.interval)

    def beat(self, now: float | None = None) -> None:
        """Write the heartbeat metrics; alert once past `after_seconds`. Never raises."""
        from arena.ops._runrecord import warn_problem

        moment = time.time() if now is None else now
        done = self.done()
        if done != self.last_done:
            self.last_done = done
            self.progress_unix = moment
        settings = self.rec.alert_settings_once()
        out = self.rec.output
        if settings.metrics_file is not None:
            try:
                self._metrics(settings, moment)
            except Exception as exc:  # noqa: BLE001 - a by-product
                warn_problem(out, f"metrics file {settings.metrics_file} not written: {exc}")
        after = settings.after_seconds
        if after is not None and not self.overdue_sent and moment - self.rec.started > after:
            self.overdue_sent = True
            self._overdue(settings, moment - self.rec.started)

    def _metrics(self, settings: Any, moment: float) -> None:
        from arena.ops._alerts import write_metrics
        from arena.rundir import read_ops_state

        previous: dict[str, Any] = {}
        if self.rec.previous is not None:
            data = json.loads(self.rec.previous)
            if isinstance(data, dict) and data.get("exit_code") is not None:
                previous = data
        out = self.rec.output
        state = read_ops_state(out) if out is not None else {}
        running = {
            "started_unix": self.rec.started,
            "progress_unix": self.progress_unix,
            "output": None if out is None else str(out),
        }
        write_metrics(settings.metrics_file, previous, state, moment, running=running)

    def _overdue(self, settings: Any, age: float) -> None:
        """The alert of a run past `after_seconds`, sent from a thread (the calls go on)."""
        from arena.ops._alerts import deliver_alert

        record = self.rec.running_record()
        record["alert"] = {
            "reason": f"the run has gone on for {age:.0f} s, longer than alerts.after_seconds "
            f"({settings.after_seconds:g} s); last progress "
            f"{time.time() - self.progress_unix:.0f} s ago"
        }
        if settings.alerting:
            import asyncio

            loop = asyncio.get_running_loop()
            loop.run_in_executor(None, deliver_alert, settings, record, self.rec.output)
