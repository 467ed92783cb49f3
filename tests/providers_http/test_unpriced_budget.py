"""A budget binds every model: one without a price is refused at preflight (issue 23).

Before, `budget_usd` counted an unpriced model's calls at $0 and never
stopped: a whole tournament was paid over a $0.01 budget without a word.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from arena.cli import main
from arena.fakeserver import FakeServer
from tests.providers_http.conftest import set_keys, write_tournament

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)


def _arena(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _requests(server: FakeServer) -> int:
    return int(server.stats()["counts"].get("requests", 0))


@pytest.mark.parametrize("where", ["yaml", "flag"])
def test_a_budget_with_an_unpriced_model_is_refused_before_any_call(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    set_keys(monkeypatch)
    extra: dict[str, Any] = {"prices": {"alpha": {"input": 100.0, "output": 200.0}}}
    if where == "yaml":
        extra["budget_usd"] = 0.01
    path = write_tournament(tmp_path, server, extra=extra)
    before = _requests(server)
    flag = ["--budget", "0.01"] if where == "flag" else []
    result = _arena("run", str(path), *flag)
    assert result.exit_code == 2, result.output
    budget = "budget_usd: 0.01" if where == "yaml" else "--budget 0.01"
    for name in ("beta", "gamma"):  # alpha has its price
        assert (
            f"models.{name}: no price for model '{name}' (provider 'p_" in result.stderr
            and f"so {budget} would count its calls as $0" in result.stderr
        )
    assert "models.alpha" not in result.stderr
    assert "or set `unpriced: allow` to run it uncounted" in result.stderr
    assert _requests(server) == before
    assert not (tmp_path / "out").exists()


def test_prices_make_the_budget_bind_and_unpriced_allow_runs_uncounted(
    tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    set_keys(monkeypatch)
    prices = {m: {"input": 100.0, "output": 200.0} for m in ("alpha", "beta", "gamma")}
    priced = write_tournament(tmp_path, server, extra={"prices": prices, "budget_usd": 0.01})
    result = _arena("run", str(priced), "--json")
    assert result.exit_code == 4, result.output  # the budget stops the run
    assert json.loads(result.stdout.splitlines()[-1])["budget_stopped"]

    other = tmp_path / "allowed"
    other.mkdir()
    allowed = write_tournament(other, server, extra={"budget_usd": 0.01, "unpriced": "allow"})
    result = _arena("run", str(allowed), "--json")
    assert result.exit_code == 0, result.output
    for name in ("alpha", "beta", "gamma"):
        assert f"arena: warning: no price for model '{name}'" in result.stderr


def test_unpriced_takes_error_or_allow(tmp_path: Path, server: FakeServer) -> None:
    path = write_tournament(tmp_path, server, extra={"unpriced": "yes"})
    result = _arena("plan", str(path))
    assert result.exit_code == 2
    assert "t.yaml: unpriced: Input should be 'error' or 'allow'" in result.stderr
