"""Bad budgets and names that would escape their folder are refused before anything is written."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from arena.cli import main
from tests.conftest import small_tournament


@pytest.mark.parametrize("amount", ["-1", "nan", "inf", "-0.5"])
@pytest.mark.parametrize("command", ["run", "retry-failed", "discuss"])
def test_a_bad_budget_exits_2_before_the_lock_or_any_write(
    tmp_path: Path, command: str, amount: str
) -> None:
    yaml_path = small_tournament(tmp_path)
    target = str(yaml_path) if command == "run" else str(tmp_path / "out")
    result = CliRunner().invoke(main, [command, target, "--budget", amount])
    assert result.exit_code == 2, result.output
    assert "not a budget" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "patch, key",
    [
        ({"name": "../../escaped"}, "name"),
        ({"name": ".."}, "name"),
        ({"models": {"../m0": {"provider": "sim"}, "m1": {"provider": "sim"}}}, "models"),
        ({"providers": {"a/b": {"type": "sim"}}}, "providers"),
        ({"budget_usd": -1}, "budget_usd"),
        ({"budget_usd": ".nan"}, "budget_usd"),
    ],
)
def test_names_that_escape_their_folder_and_bad_budgets_in_the_yaml_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, patch: dict[str, object], key: str
) -> None:
    yaml_path = small_tournament(tmp_path)
    cfg = yaml.safe_load(yaml_path.read_text())
    cfg.update(patch)
    del cfg["output"]  # the default, runs/<name>, is what a name could escape
    text = yaml.safe_dump(cfg).replace("'.nan'", ".nan")
    yaml_path.write_text(text)
    cwd = tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd)
    result = CliRunner().invoke(main, ["run", str(yaml_path)])
    assert result.exit_code == 2, result.output
    assert f"{yaml_path}: {key}" in result.output
    assert list(cwd.iterdir()) == [] and not (tmp_path / "escaped").exists()
