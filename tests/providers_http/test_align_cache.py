"""`sampling: {align: cache}` against the fake server's prompt cache, through `arena run`."""

from __future__ import annotations

import json
import os
import urllib.request
from pathlib import Path

import polars as pl
from click.testing import CliRunner

from arena.cli import main
from arena.fakeserver import FakeServer
from arena.store import RunLog
from tests.providers_http.conftest import KEY_ENV, KEYS, TYPES, write_tournament


def _expire_cache(server: FakeServer) -> None:
    """Move the server's clock past every entry's 5 minutes (the server is shared)."""
    body = json.dumps({"advance": 900.0}).encode()
    request = urllib.request.Request(
        server.url + "/fake/clock", body, headers={"Content-Type": "application/json"}
    )
    urllib.request.urlopen(request, timeout=5).read()


def _hit_rate(tmp_path: Path, server: FakeServer, align: str) -> tuple[float, int]:
    root = tmp_path / align
    root.mkdir()
    models = {"long_a": "p_openai", "long_b": "p_openai", "long_c": "p_openai"}
    extra = {
        "models": {m: {"provider": p, "max_tokens": 2000} for m, p in models.items()},
        "review": {"max_tokens": 200, "template": "cache_friendly"},
        "sampling": {"strategy": "uniform", "budget": 0.3, "align": align},
    }
    path = write_tournament(root, server, models=models, questions=8, extra=extra)
    env = dict(os.environ)
    env.update({KEY_ENV[t]: KEYS[t] for t in TYPES})
    _expire_cache(server)
    result = CliRunner(env=env).invoke(main, ["run", str(path)])
    assert result.exit_code == 0, result.output
    reviews = RunLog(root / "out").read("reviews").filter(pl.col("status") == "ok")
    hits = int((reviews["tokens_cache_read"].fill_null(0) > 0).sum())
    return hits / reviews.height, reviews.height


def test_align_cache_raises_the_share_of_reviews_read_from_the_cache(
    tmp_path: Path, server: FakeServer
) -> None:
    plain, n_plain = _hit_rate(tmp_path, server, "none")
    aligned, n_aligned = _hit_rate(tmp_path, server, "cache")
    assert n_plain == n_aligned  # the same number of review calls
    assert aligned >= plain + 0.2
