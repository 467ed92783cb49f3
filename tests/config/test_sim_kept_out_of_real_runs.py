"""The simulator stays out of real runs: no `sim:` block on a real model, no seed in real ids."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from arena.batcheval import load_setup
from arena.cli import main
from arena.config import ConfigError, load_tournament
from arena.pipeline import build_plan, review_context
from arena.providers import provider_types, register_provider
from tests.conftest import small_tournament


def _with_real_model(tmp: Path, **model: Any) -> Path:
    """The small sim tournament plus an OpenAI-type contestant `gpt`."""
    path = small_tournament(tmp)
    data = yaml.safe_load(path.read_text())
    data["providers"]["oa"] = {"type": "openai", "api_key_env": "ARENA_TEST_NO_SUCH_KEY"}
    data["models"]["gpt"] = {"provider": "oa", "model": "gpt-x", **model}
    data["contestants"].append("gpt")
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def test_a_sim_block_on_a_real_model_is_refused(tmp_path: Path) -> None:
    path = _with_real_model(tmp_path, sim={"skill": 3})
    with pytest.raises(ConfigError) as info:
        load_tournament(path)
    assert info.value.file == str(path)
    assert info.value.key == "models.gpt.sim"
    assert "only allowed on a model of a sim provider" in info.value.problem
    assert "'openai'" in info.value.problem


def test_arena_run_exits_2_before_any_call(tmp_path: Path) -> None:
    path = _with_real_model(tmp_path, sim={"skill": 3})
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code == 2
    assert f"{path}: models.gpt.sim:" in result.output
    assert not (tmp_path / "out" / "log").exists()


def test_the_standalone_batcheval_loader_refuses_it_too(tmp_path: Path) -> None:
    path = tmp_path / "be.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "providers": {"oa": {"type": "openai"}},
                "models": {"j": {"provider": "oa", "sim": {"skill": 1}}},
                "batcheval": {"scorers": ["j"], "criteria": [{"name": "c", "description": "d"}]},
            }
        )
    )
    with pytest.raises(ConfigError) as info:
        load_setup(path)
    assert info.value.key == "models.j.sim"


def _ids(path: Path, seed: int) -> tuple[set[str], set[str]]:
    data = yaml.safe_load(path.read_text())
    data["seed"] = seed
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    t = load_tournament(path)
    plan = build_plan(t)
    # The real model's answers, and what its reviews depend on besides the answers.
    real = {a.id for a in plan.answers if a.model == "gpt"} | {review_context(t, "gpt")}
    sim = {a.id for a in plan.answers if a.model != "gpt"}
    return real, sim


def test_real_call_ids_never_depend_on_the_seed(tmp_path: Path) -> None:
    path = _with_real_model(tmp_path)
    real_0, sim_0 = _ids(path, 0)
    real_1, sim_1 = _ids(path, 1)
    assert real_0 and real_0 == real_1
    assert sim_0.isdisjoint(sim_1)  # simulated answers do depend on it


def test_sim_models_without_a_block_get_the_seed_in_standalone_batcheval_too(
    tmp_path: Path,
) -> None:
    def scorer_fingerprint(seed: int) -> dict[str, Any]:
        path = tmp_path / f"be{seed}.yaml"
        path.write_text(
            yaml.safe_dump(
                {
                    "seed": seed,
                    "providers": {"s": {"type": "sim"}},
                    "models": {"j": {"provider": "s"}},
                    "batcheval": {
                        "scorers": ["j"],
                        "criteria": [{"name": "c", "description": "d"}],
                    },
                }
            )
        )
        return dict(load_setup(path).scorers()[0].fingerprint)

    assert scorer_fingerprint(0)["seed"] == 0 and scorer_fingerprint(5)["seed"] == 5
    assert scorer_fingerprint(0)["sim"] == scorer_fingerprint(5)["sim"]


def test_a_registered_provider_type_is_accepted_in_yaml(tmp_path: Path) -> None:
    path = small_tournament(tmp_path)
    data = yaml.safe_load(path.read_text())
    data["providers"]["sim"]["type"] = "sim-alias-for-test"
    for model in data["models"].values():
        del model["sim"]  # not a sim provider: no sim blocks
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(ConfigError, match="unknown provider type 'sim-alias-for-test'"):
        load_tournament(path)
    register_provider("sim-alias-for-test", "arena.providers.sim:SimProvider")
    assert "sim-alias-for-test" in provider_types()
    t = load_tournament(path)
    assert t.config.providers["sim"].type == "sim-alias-for-test"
