"""Models without a price are named before a budgeted run (they would count as $0)."""

from __future__ import annotations

from pathlib import Path

import yaml

from arena.config import load_tournament
from arena.engine import preflight, unpriced_budget_problems, unpriced_models
from tests.conftest import small_tournament


def test_unpriced_real_models_are_listed_and_sim_models_are_free(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=2)
    data = yaml.safe_load(path.read_text())
    data["providers"]["oa"] = {"type": "openai", "base_url": "http://127.0.0.1:9/v1"}
    data["models"]["mystery"] = {"provider": "oa", "model": "my-private-finetune"}
    data["models"]["priced"] = {"provider": "oa", "model": "my-other-finetune"}
    data["prices"] = {"my-other-finetune": {"input": 1.0, "output": 2.0}}
    data["contestants"] = ["m0", "m1", "mystery", "priced"]
    path.write_text(yaml.safe_dump(data))
    assert unpriced_models(load_tournament(path)) == ["mystery"]


def test_a_budget_over_sim_models_needs_no_price(tmp_path: Path) -> None:
    """Sim models are free: a budgeted demo tournament passes preflight and runs."""
    path = small_tournament(tmp_path, models=2, questions=2, extra={"budget_usd": 0.01})
    t = load_tournament(path)
    assert preflight(t, budget_usd=0.5) == []
    assert unpriced_budget_problems(t, 0.5) == []
