"""numba, loaded without the probes arena has no use for: every compiled kernel of arena
imports `njit` here.

Readying numba (importing it, and the first kernel a process calls, even from
the cache) probes for two optional things arena's kernels never use:

- a BLAS, for `np.dot` and `np.linalg` in compiled code, by importing
  `scipy.linalg` (about half a second: SciPy's array API layer, `numpy.f2py`);
- CFFI, to call C functions declared through it, by importing `cffi` (about
  0.1 s: its C parser builds its tables).

Both probes are answered "none" while numba's modules import, in this thread
only: `scipy.linalg` or `cffi` imported by anyone else (here afterwards, or in
another thread meanwhile) is untouched. A kernel that called a BLAS routine
would fail to compile, which the tests of every kernel would show.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Sequence
from types import ModuleType

__all__ = ["njit"]


class _Hidden(importlib.abc.MetaPathFinder):
    """Refuses a few modules to the imports of one thread (the one readying numba)."""

    def __init__(self, names: frozenset[str]) -> None:
        self.names = names
        self.thread = threading.get_ident()

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None,
        target: ModuleType | None = None,
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname in self.names and threading.get_ident() == self.thread:
            raise ModuleNotFoundError(f"not loaded for numba: {fullname}", name=fullname)
        return None


def _no_blas() -> None:
    raise ImportError("arena's kernels use no BLAS: numba's probe for one is skipped")


def _ready() -> None:
    hidden = _Hidden(frozenset({"cffi"}))
    sys.meta_path.insert(0, hidden)
    try:
        import numba.core.typing.cffi_utils  # noqa: F401  (probes for cffi as it imports)
        import numba.np.linalg as linalg

        if "numba.np.arraymath" not in sys.modules:
            probe = linalg.ensure_blas
            linalg.ensure_blas = _no_blas  # numba.np.arraymath probes as it imports
            try:
                import numba.np.arraymath  # noqa: F401
            finally:
                linalg.ensure_blas = probe
    finally:
        sys.meta_path.remove(hidden)


_ready()

from numba import njit  # noqa: E402  (after `_ready`)
