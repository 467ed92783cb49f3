"""How the `arena` program asks polars' and pyarrow's allocators to give memory back.

Both libraries allocate outside Python, and both keep memory they have freed
for a while before the kernel gets it back:

- polars allocates with jemalloc, which it configures to keep freed pages for
  500 ms (dirty) and then 1 s (muzzy). The end of a run frees and allocates
  hundreds of megabytes in that time (the log read a few parts at a time, then
  coded, then ranked), so freed pages of one step stand beside the next step's.
  `arena run` and `arena retry-failed` ask for 0 ms: freed pages are handed
  back at once. Other commands keep polars' setting: handing pages back and
  faulting them in again made `arena leaderboard` on a 1M-call log about
  0.8 s slower (4.9-5.2 s against 3.9-4.5 s), for about 60 MB less.
- pyarrow (which writes the log's Parquet parts) allocates from its own pool,
  mimalloc by default, which kept about 27 MB of freed memory through a
  255,360-call run; the system allocator (glibc malloc) did not.

Measured with `benchmarks/bench_scale.py` (docs/scale.md): the peak of a
1M-call run fell by about 60 MB and that of a 3M-call run by about 90-120 MB,
at the same calls per second.

- glibc's malloc (NumPy's arrays, pyarrow's system pool) raises its threshold
  for mapping a block on its own up to the largest block freed so far (32 MiB
  at most), so that after the first big arrays of the end-of-run ranking every
  later one comes from the heap, and memory freed inside the heap stays with the
  process. `arena run` and `arena retry-failed` fix the threshold at 128 KiB
  (glibc's own starting value, `mallopt(M_MMAP_THRESHOLD)`): every big array
  is mapped on its own and handed back when freed. Where the C library has no
  `mallopt` (not glibc), nothing is done.

The user's choice wins: a `_RJEM_MALLOC_CONF` (which polars appends to its
own settings) or `ARROW_DEFAULT_MEMORY_POOL` set in the environment is left
as it is, and so is glibc's threshold when `MALLOC_MMAP_THRESHOLD_` is set.
The settings must be in the environment before polars and pyarrow are
imported: `arena.cli` applies them when it loads a command's module (it
imports neither before), and processes the command starts inherit them (all
but glibc's threshold, which is set in this process).
"""

from __future__ import annotations

import os

from arena.memory import fix_mmap_threshold

# polars reads this (and appends it to its own jemalloc settings) when imported.
POLARS_ALLOCATOR_VARIABLE = "_RJEM_MALLOC_CONF"
POLARS_ALLOCATOR_SETTINGS = "dirty_decay_ms:0,muzzy_decay_ms:0"
# pyarrow reads this on first use of its default memory pool.
ARROW_POOL_VARIABLE = "ARROW_DEFAULT_MEMORY_POOL"
ARROW_POOL = "system"
# glibc reads this when the process starts; `mallopt` sets the same for a running one.
GLIBC_THRESHOLD_VARIABLE = "MALLOC_MMAP_THRESHOLD_"
GLIBC_THRESHOLD = 128 * 1024
# The commands whose peak is the end of a long run (the history snapshot).
LEAN_COMMANDS = frozenset({"run", "retry-failed"})


def give_memory_back(command: str) -> None:
    """Set the allocator settings above for `command` in this process's environment,
    each only where the environment does not set it already."""
    os.environ.setdefault(ARROW_POOL_VARIABLE, ARROW_POOL)
    if command in LEAN_COMMANDS:
        os.environ.setdefault(POLARS_ALLOCATOR_VARIABLE, POLARS_ALLOCATOR_SETTINGS)
        if GLIBC_THRESHOLD_VARIABLE not in os.environ:
            fix_mmap_threshold(GLIBC_THRESHOLD)
