"""Asking glibc's malloc to hand memory back to the kernel during a long run.

NumPy's arrays, pyarrow's system pool and the interpreter's own large objects
come from the C library's malloc. Two things keep freed memory with the process:

- glibc raises its threshold for mapping a block on its own up to the largest
  block freed so far (32 MiB at most), after which big arrays come from the
  heap and freed ones stay in it. `fix_mmap_threshold` fixes the threshold
  (`mallopt(M_MMAP_THRESHOLD)`), so every big array is mapped on its own and
  handed back when freed.
- Small blocks freed inside the heap stay there until the heap's top is free.
  A run of millions of calls leaves tens of megabytes free but kept between
  blocks still in use (28 MB after a 3M-call simulated run, 16 MB after 1M:
  it grows with the run). `trim_heap` (`malloc_trim(0)`) hands every free page
  back, wherever it lies; `arena run` calls it between its phases (after the
  calls, after the history snapshot), so each phase starts from what is in use.

Where the C library is not glibc (no `mallopt` or `malloc_trim`), both do
nothing and return False. This module imports nothing of arena.
"""

from __future__ import annotations

import ctypes
from typing import Any

__all__ = ["fix_mmap_threshold", "trim_heap"]

_M_MMAP_THRESHOLD = -3  # mallopt's parameter number (malloc.h)


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
