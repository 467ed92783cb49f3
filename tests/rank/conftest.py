"""Every rank test runs twice: on the NumPy passes small logs use, and on the compiled kernels.

`arena.rank._plain.COMPILED_MIN_ROWS` decides which path a log takes; the
tests' logs are small, so without this only the NumPy path would be tested.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from arena.rank import _plain


@pytest.fixture(autouse=True, params=["numpy", "numba"])
def rank_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The path under test: "numpy" (the twins in _plain) or "numba" (the kernels)."""
    threshold = 10**18 if request.param == "numpy" else 0
    monkeypatch.setattr(_plain, "COMPILED_MIN_ROWS", threshold)
    yield str(request.param)
