"""`arena.rank.prefetch_kernels`: the Elo kernel readied in a thread for a big log, never for a
small one."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_small_hint_loads_nothing_and_a_big_one_readies_the_kernels() -> None:
    out = _run(
        """
        import sys
        from arena.rank import COMPILED_MIN_ROWS, prefetch_kernels
        prefetch_kernels(lambda: COMPILED_MIN_ROWS - 1).join()
        print("numba" in sys.modules)
        def broken():
            raise OSError("a part went away")
        prefetch_kernels(broken).join()  # only logged: the ranking loads them itself
        print("numba" in sys.modules)
        prefetch_kernels(lambda: COMPILED_MIN_ROWS).join()
        print("numba" in sys.modules, "arena.rank._elo_kernel" in sys.modules)
        """
    )
    assert out.splitlines() == ["False", "False", "True True"]
