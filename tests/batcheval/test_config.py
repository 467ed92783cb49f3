"""The `batcheval:` section of the tournament YAML: defaults and bad input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from arena.config import ConfigError, load_tournament
from tests.conftest import small_tournament

SECTION: dict[str, Any] = {
    "scorers": ["m0"],
    "criteria": [{"name": "helpfulness", "description": "Helps?", "scale": {"low": 1, "high": 3}}],
}


def _load(tmp_path: Path, section: dict[str, Any] | None) -> Any:
    extra = {"batcheval": section} if section is not None else {}
    return load_tournament(small_tournament(tmp_path, extra=extra))


def test_off_by_default(tmp_path: Path) -> None:
    t = _load(tmp_path, None)
    assert t.config.batcheval is None
    assert "batcheval" not in str(t.used_models())


def test_defaults(tmp_path: Path) -> None:
    cfg = _load(tmp_path, SECTION).config.batcheval
    assert (cfg.batch_size, cfg.rounds, cfg.temperature) == (10, 5, 0.2)
    assert (cfg.strategy, cfg.procedure) == ("heterogeneous", "two-stage")


def test_scorers_are_used_models(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, extra={"batcheval": {**SECTION, "scorers": ["judge"]}})
    data = yaml.safe_load(path.read_text())
    data["models"]["judge"] = {"provider": "sim"}
    path.write_text(yaml.safe_dump(data))
    assert load_tournament(path).used_models()[-1] == "judge"


def _crit(**kw: Any) -> dict[str, Any]:
    return {**SECTION, "criteria": [{**SECTION["criteria"][0], **kw}]}


@pytest.mark.parametrize(
    ("section", "key", "problem"),
    [
        ({**SECTION, "batch_size": 0}, "batcheval.batch_size", "greater than or equal to 1"),
        ({**SECTION, "rounds": 0}, "batcheval.rounds", "greater than or equal to 1"),
        (
            _crit(scale={"low": 3, "high": 3}),
            "batcheval.criteria[0].scale",
            "low must be below high",
        ),
        (
            _crit(scale={"low": 5, "high": 1}),
            "batcheval.criteria[0].scale",
            "low must be below high",
        ),
        (
            {**SECTION, "criteria": [{"name": "x"}]},
            "batcheval.criteria[0].description",
            "required key is missing",
        ),
        (_crit(description="  "), "batcheval.criteria[0].description", "needs a description"),
        (_crit(anchors={7: "too high"}), "batcheval.criteria[0]", "outside the scale"),
        ({**SECTION, "strategy": "clustered"}, "batcheval.strategy", "heterogeneous"),
        ({**SECTION, "procedure": "four-stage"}, "batcheval.procedure", "three-stage"),
        ({**SECTION, "stages": 4}, "batcheval.stages", "3"),
        ({**SECTION, "stages": 1, "procedure": "two-stage"}, "batcheval", "disagree"),
        ({**SECTION, "scores": "fractional"}, "batcheval.scores", "integer"),
        ({**SECTION, "composition": "mine"}, "batcheval.composition", "running-mean"),
        (
            {**_crit(scale={"low": 0.5, "high": 3}), "scores": "integer"},
            "batcheval",
            "whole-number scale ends",
        ),
        ({**SECTION, "scorers": ["nobody"]}, "batcheval.scorers[0]", "undefined model 'nobody'"),
        ({**SECTION, "scorers": []}, "batcheval.scorers", "at least 1"),
        ({**SECTION, "criteria": SECTION["criteria"] * 2}, "batcheval", "duplicate criterion"),
        ({**SECTION, "colour": "red"}, "batcheval.colour", "unknown key"),
    ],
)
def test_bad_section(tmp_path: Path, section: dict[str, Any], key: str, problem: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(tmp_path, section)
    assert info.value.key == key
    assert problem in info.value.problem
