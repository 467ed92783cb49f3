"""`arena.rank.prefetch_kernels`: numba readied in a thread for a big log, never for a small one."""

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
        print("numba" in sys.modules, "arena.rank._encode_kernel" in sys.modules)
        """
    )
    assert out.splitlines() == ["False", "False", "True True"]


def test_readying_numba_loads_neither_scipy_linalg_nor_cffi_yet_both_import_later() -> None:
    """numba's BLAS and CFFI probes (about 0.6 s of imports) are skipped: arena's kernels use
    neither. A kernel still compiles and runs, and both modules import normally afterwards."""
    out = _run(
        """
        import sys
        import numpy as np
        from arena.rank import COMPILED_MIN_ROWS, prefetch_kernels
        prefetch_kernels(lambda: COMPILED_MIN_ROWS).join()
        from arena.rank._encode_kernel import _warm
        print(_warm(1), "scipy.linalg" in sys.modules, "cffi" in sys.modules)
        import numba.np.arraymath
        print(numba.np.arraymath._HAVE_BLAS)
        import scipy.linalg
        print(float(scipy.linalg.det(np.eye(2))))
        """
    )
    assert out.splitlines() == ["2 False False", "False", "1.0"]
