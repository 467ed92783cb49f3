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

Where the C library is not glibc (no `mallopt` or `malloc_trim`), those do
nothing and return False. This module imports nothing of arena.
"""

from __future__ import annotations

import ctypes
import gc
import threading
from typing import Any

__all__ = [
    "MMAP_THRESHOLD",
    "PAUSE_SECONDS",
    "RUN_COMMANDS",
    "fix_mmap_threshold",
    "pause_collector",
    "release_memory_promptly",
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
    gc.disable()
    timer = threading.Timer(PAUSE_SECONDS if seconds is None else seconds, gc.enable)
    timer.daemon = True  # never keeps the process alive
    timer.name = "arena-collector"
    timer.start()
    return timer


def release_memory_promptly() -> None:
    """Before a long run: pyarrow's default memory pool is the system allocator, and
    glibc maps big blocks on their own (see the module)."""
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
    fix_mmap_threshold(MMAP_THRESHOLD)


def _libc_function(name: str) -> Any:
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
    trim.argtypes = (ctypes.c_size_t,)
    trim.restype = ctypes.c_int
    return bool(trim(0))
