"""What the `arena` program does to start a command quickly.

**The cyclic garbage collector.** CPython collects its youngest generation
after every 700 new container objects (functions, classes, dicts, lists...),
and its older generations every tenth time, walking every object they hold.
Loading a command creates tens of thousands of objects that live as long as
the process (the modules of polars, pydantic and arena, the classes of the
YAML's schema), and the collections that walk them find nothing to free: `arena status` on the demo
run made 155 collections in about 33 ms of its 0.57 s.

So the everyday commands (all but `arena run` and `arena retry-failed`) start
with the collector off and turn it on after `PAUSE_SECONDS`: a command that
ends sooner never collects (the process ends; the memory goes with it), and a
longer one collects as usual from then on. Raising the youngest generation's
threshold instead (10,000) saved less than half as much: each collection then
walks more objects. `arena run` and `arena retry-failed` keep CPython's
collector as it is: their memory at the end of a long run is what
`benchmarks/bench_scale.py` measures. A command called as a function
(`main([...])`: tests, scripts) changes nothing; the collector is the calling
program's. A collector already off (the user's choice) is left off.

**pydantic's plugins.** The first schema class pydantic builds looks for
plugins: it reads the entry points of every installed distribution (about
6 ms with 92 of them; more in a larger environment). pydantic's plugins watch
validation (observability tools); nothing of arena uses one, and the YAML's
validation is arena's own business. The program sets
`PYDANTIC_DISABLE_PLUGINS=__all__` (pydantic's own switch) unless the
environment sets it already: the user's value wins.
"""

from __future__ import annotations

import gc
import os
import threading

__all__ = [
    "PAUSE_SECONDS",
    "PYDANTIC_PLUGINS_VARIABLE",
    "RUN_COMMANDS",
    "pause_collector",
    "skip_pydantic_plugins",
]

# pydantic reads it when its first schema class is built ("__all__": no plugin).
PYDANTIC_PLUGINS_VARIABLE = "PYDANTIC_DISABLE_PLUGINS"

# Seconds an everyday command runs before the collector is turned on.
PAUSE_SECONDS = 1.0
# The commands that keep the collector as it is (their peak memory is measured with it).
RUN_COMMANDS = frozenset({"run", "retry-failed"})


def pause_collector(command: str, seconds: float = PAUSE_SECONDS) -> threading.Timer | None:
    """Turn the collector off for the first `seconds` of an everyday `command`; the
    timer that turns it on again, None when nothing was changed (a run command, or
    the collector already off)."""
    if command in RUN_COMMANDS or not gc.isenabled():
        return None
    gc.disable()
    timer = threading.Timer(seconds, gc.enable)
    timer.daemon = True  # never keeps the process alive
    timer.name = "arena-collector"
    timer.start()
    return timer


def skip_pydantic_plugins() -> bool:
    """Tell pydantic not to look for plugins, unless the environment says otherwise;
    True when this set it."""
    if PYDANTIC_PLUGINS_VARIABLE in os.environ:
        return False
    os.environ[PYDANTIC_PLUGINS_VARIABLE] = "__all__"
    return True
