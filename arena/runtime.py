"""What arena changes in its own process, each change for a measured reason.

Everything here acts on this process only, through in-process APIs: arena sets
no environment variable in the user's name (a child process starts as the
user's environment says). Figures: benchmarks/RESULTS.md.

- `pause_collector`: the everyday commands (all but `run` and `retry-failed`)
  start with CPython's cyclic garbage collector off and turn it on after
  `PAUSE_SECONDS`. Loading a command creates tens of thousands of objects that
  live as long as the process (polars', pydantic's and arena's modules), and the
  collections that walk them free nothing; a command that ends sooner never
  collects. Only the program does this (`arena ...`), never `main([...])` called
  by a test or a script, and a collector already off stays off.
- `release_memory_promptly`: a long run's peak is its end (the log read, coded
  and ranked), so `arena run` and `arena retry-failed` ask the allocators to
  hand freed memory back at once: pyarrow's default pool becomes the system
  allocator (its own pool, mimalloc, keeps freed memory for a while), and
  glibc's malloc maps every block of 128 KiB or more on its own, handed back
  when freed (`mallopt(M_MMAP_THRESHOLD)`; glibc would otherwise raise that
  threshold to the largest block freed so far, up to 32 MiB, and keep such
  arrays in its heap).
- `trim_heap`: small blocks freed inside glibc's heap stay there until the heap's
  top is free; `malloc_trim(0)` hands every free page back. `arena run` calls it
  between its phases (after the calls, after the history snapshot).

- `one_blas_thread`: ranking's linear algebra is many small solves and products
  (reliability sweeps, sandwich and style fits); OpenBLAS's threads spin between
  them and, on a machine of few cores, take the CPU from ranking's own threads
  (Elo's orders). Ranking holds BLAS to the calling thread and restores the
  user's setting after (`threadpoolctl`).

- signals: from its first moment the program notes SIGINT and SIGTERM rather than
  dying by them, so that a run ends with its `--json` line and its record whenever
  the signal comes (see the section at the end).

Where the C library is not glibc (no `mallopt` or `malloc_trim`), those do
nothing and return False. This module imports nothing of arena.
"""

from __future__ import annotations

import gc
import os
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: the program imports this module first of all
    import threading
    from types import FrameType

__all__ = [
    "MMAP_THRESHOLD",
    "one_blas_thread",
    "PAUSE_SECONDS",
    "RUN_COMMANDS",
    "SIGNAL_EXIT_CODES",
    "defer_signals",
    "fix_mmap_threshold",
    "pause_collector",
    "received_signals",
    "release_memory_promptly",
    "set_signal_listener",
    "signal_exit_code",
    "signals_deferred",
    "signals_end",
    "signals_for_command",
    "trim_heap",
]

# Seconds an everyday command runs before the collector is turned on.
PAUSE_SECONDS = 1.0
# The commands that keep the collector as it is (their peak memory is measured with it).
RUN_COMMANDS = frozenset({"run", "retry-failed"})
# glibc's own starting threshold for mapping a block on its own.
MMAP_THRESHOLD = 128 * 1024

_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


def pause_collector(command: str, seconds: float | None = None) -> threading.Timer | None:
    """Turn the collector off for the first `seconds` (`PAUSE_SECONDS`) of an everyday
    `command`; the timer that turns it on again, None when nothing was changed (a run
    command, or the collector already off)."""
    if command in RUN_COMMANDS or not gc.isenabled():
        return None
    import threading

    gc.disable()
    timer = threading.Timer(PAUSE_SECONDS if seconds is None else seconds, gc.enable)
    timer.daemon = True  # never keeps the process alive
    timer.name = "arena-collector"
    timer.start()
    return timer


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS (OpenBLAS, MKL) on the calling thread alone inside the block; the setting
    before it is restored after."""
    global _blas
    if _blas is None:
        from threadpoolctl import ThreadpoolController  # here: only ranking needs it

        _blas = ThreadpoolController()  # finds the loaded libraries once
    with _blas.limit(limits=1, user_api="blas"):
        yield


_blas: Any = None  # one_blas_thread's ThreadpoolController


def release_memory_promptly() -> None:
    """Before a long run: pyarrow's default memory pool is the system allocator, and
    glibc maps big blocks on their own (see the module)."""
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
    fix_mmap_threshold(MMAP_THRESHOLD)


def _libc_function(name: str) -> Any:
    import ctypes

    try:
        return getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        return None


def fix_mmap_threshold(size: int) -> bool:
    """Ask glibc's malloc to map every block of `size` bytes or more on its own (and so
    hand it back when freed), with no adjusting of that threshold; False where the C
    library has no `mallopt` or refuses."""
    mallopt = _libc_function("mallopt")
    if mallopt is None:
        return False
    import ctypes

    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, size))


def trim_heap() -> bool:
    """Hand the free pages of every malloc heap back to the kernel (`malloc_trim(0)`);
    True when some memory was released, False when none was or the C library has no
    `malloc_trim`."""
    trim = _libc_function("malloc_trim")
    if trim is None:
        return False
    import ctypes

    trim.argtypes = (ctypes.c_size_t,)
    trim.restype = ctypes.c_int
    return bool(trim(0))


# --- Signals -------------------------------------------------------------------------
#
# The program (`arena ...`, `python -m arena`) notes SIGINT and SIGTERM from its first
# moment to its exit instead of dying by them, so that every way a run ends prints its
# `--json` line and writes its record with the exit code it ends with (130 / 143):
# Python's defaults would print a traceback (SIGINT while modules import) or end the
# process with no record at all (SIGTERM outside the call loop). `defer_signals`
# installs the handler; what a signal then does depends on the phase:
#
# - while the CLI loads, and once a command's exit code is decided (`signals_end`):
#   noted only (a run then ends as interrupted before it starts; an ended command
#   keeps its code);
# - during a run command (`signals_for_command(recorded=True)`): the first is noted
#   (the run stops starting calls and ends with its record), the second raises
#   KeyboardInterrupt (stop now; the record still says 130 / 143);
# - during any other command: raises KeyboardInterrupt at once, as Python would;
# - inside a run's event loop (`set_signal_listener`): handed to the loop, which
#   stops the scheduler (the loop's own handlers would be reset to the defaults
#   when the loop closes, leaving the end of a run unguarded).

_received: list[int] = []
_listener: Callable[[int], bool] | None = None
_raise_after: int | None = None  # the count of signals at which one raises KeyboardInterrupt
_installed = False

SIGNAL_EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}


def received_signals() -> list[int]:
    """The signals the program noted so far, in order (the first decides the exit code).
    The list itself: a run's interrupt handling appends to it and reads it."""
    return _received


def signal_exit_code() -> int | None:
    """130 (SIGINT) or 143 (SIGTERM) after the first signal noted; None before any."""
    return SIGNAL_EXIT_CODES.get(signal.Signals(_received[0])) if _received else None


def signals_deferred() -> bool:
    """Whether this process notes its signals (the program, after `defer_signals`)."""
    return _installed


def defer_signals() -> None:
    """Note SIGINT and SIGTERM from now on (see the section); once per process. A signal
    the process was started with ignored (`nohup`, a shell's background job) stays
    ignored, as Python leaves it."""
    global _installed
    if _installed:
        return
    for sig in SIGNAL_EXIT_CODES:
        if signal.getsignal(sig) != signal.SIG_IGN:
            signal.signal(sig, _on_signal)
    _installed = True


def signals_for_command(*, recorded: bool) -> None:
    """The command starts: a run command (`recorded`) notes its first signal and stops
    at the second; any other command stops at the first (KeyboardInterrupt), also one
    noted while it loaded."""
    global _raise_after
    _raise_after = 2 if recorded else 1
    if not recorded and _received:
        raise KeyboardInterrupt


def signals_end() -> None:
    """The command's exit code is decided: later signals are noted only."""
    global _raise_after, _listener
    _raise_after = None
    _listener = None


def set_signal_listener(listener: Callable[[int], bool] | None) -> None:
    """Hand each signal to `listener` (a run's event loop) after noting it; the listener
    returns False when it can no longer act on it (its loop closed)."""
    global _listener
    _listener = listener


def _on_signal(signum: int, frame: FrameType | None) -> None:
    _received.append(signum)
    listener = _listener
    if listener is not None and listener(signum):
        return
    if len(_received) == 1:
        name = signal.Signals(signum).name
        _say(f"arena: interrupted ({name}): ending once what is under way is recorded\n")
    if _raise_after is not None and len(_received) >= _raise_after:
        raise KeyboardInterrupt


def _say(text: str) -> None:
    try:
        os.write(2, text.encode())
    except OSError:
        pass
