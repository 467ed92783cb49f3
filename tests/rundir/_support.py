"""Helpers of the nightly tests: the CLI in process, YAML edits, plan ids."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner, Result

from arena.cli import main
from arena.config import load_tournament
from arena.pipeline import build_plan


def cli(*args: str) -> Result:
    """Run an `arena` command in this process."""
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def run(yaml_path: Path, *extra: str) -> dict[str, Any]:
    """`arena run --json`; the summary with `exit_code`."""
    result = cli("run", str(yaml_path), "--json", *extra)
    summary: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["exit_code"] == result.exit_code
    return summary


def as_json(*args: str) -> dict[str, Any]:
    """An `arena` command with `--json` that must exit 0; its JSON output."""
    result = cli(*args, "--json")
    assert result.exit_code == 0, result.output
    data: dict[str, Any] = json.loads(result.stdout)
    return data


def board_cli(*args: str) -> Result:
    """`arena leaderboard` in this process."""
    return cli("leaderboard", *args)


def edit_yaml(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Load the tournament YAML, let `change` edit it, write it back."""
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def add_model(name: str, skill: float) -> Callable[[dict[str, Any]], None]:
    """A YAML edit adding a sim contestant."""

    def change(data: dict[str, Any]) -> None:
        data["models"][name] = {"provider": "sim", "sim": {"skill": skill}}
        data["contestants"].append(name)

    return change


def plan_ids(yaml_path: Path) -> tuple[set[str], set[str]]:
    """Answer ids and review ids of the tournament's current plan."""
    plan = build_plan(load_tournament(yaml_path))
    return {a.id for a in plan.answers}, {r.id for r in plan.reviews}


def full_size(contestants: int, reviewers: int, questions: int) -> int:
    """Calls of a full tournament: answers plus all-pairs reviews (both orders)."""
    return questions * (contestants + contestants * (contestants - 1) * reviewers)


def validate_record(record: Any) -> dict[str, Any]:
    """Check a run's status record against the JSON Schema shipped with arena; the record."""
    import jsonschema

    from arena.ops import RECORD_SCHEMA_PATH

    schema = json.loads(RECORD_SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(record)
    assert isinstance(record, dict)
    return record


def priced(models: int = 3, usd: float = 100.0) -> dict[str, Any]:
    """A YAML `prices:` section that makes every sim model's call cost money."""
    return {"prices": {f"m{i}": {"input": usd, "output": usd} for i in range(models)}}
