"""`arena check FILE`: validate a tournament YAML before the night's run, without paid calls.

Checks the schema (every unknown key, with "did you mean"), the files it
names (questions, answers, references, review template), the review
template's placeholders, that every provider is ready (its SDK installed, its
API key set), prices and the extra stages. With `--ping` it then makes one
minimal call per model (a one-word prompt, at most PING_TOKENS output tokens),
after printing what those calls may cost at most, to confirm the keys and the
provider-side model ids.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import sys
import types
import typing
from pathlib import Path
from typing import Any

import click
from pydantic import BaseModel

from arena.cli._common import Command, Exit
from arena.config import (
    ConfigError,
    Tournament,
    TournamentConfig,
    load_stage_sections,
    load_tournament,
    read_yaml,
    registered_section,
)

__all__ = ["PING_TOKENS", "check_cmd", "unknown_keys"]

PING_TOKENS = 8
_PING_PROMPT = "Reply with the single word: ok"


def _models_in(annotation: Any) -> tuple[type[BaseModel] | None, bool]:
    """The pydantic model inside an annotation, and whether it is a dict's value."""
    origin = typing.get_origin(annotation)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation, False
    if origin in (typing.Union, types.UnionType):
        for arg in typing.get_args(annotation):
            found, in_dict = _models_in(arg)
            if found is not None:
                return found, in_dict
    if origin is dict:
        args = typing.get_args(annotation)
        if len(args) == 2:
            found, _ = _models_in(args[1])
            return found, found is not None
    return None, False


def unknown_keys(data: Any, model: type[BaseModel], where: str = "") -> list[str]:
    """Every key of `data` that `model` (recursively) does not know, each as
    "KEY: unknown key (did you mean 'X'?)" when a known key is close."""
    if not isinstance(data, dict):
        return []
    problems: list[str] = []
    fields = model.model_fields
    names = set(fields) | {f.alias for f in fields.values() if f.alias}
    for key, value in data.items():
        path = f"{where}.{key}" if where else str(key)
        if str(key) not in names and not where:  # a stage's own section (arena.config)
            load_stage_sections()
            section = registered_section(str(key))
            if section is not None:
                problems.extend(unknown_keys(value, section.schema, path))
                continue
        if str(key) not in names:
            close = difflib.get_close_matches(str(key), sorted(names), n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            problems.append(f"{path}: unknown key{hint}")
            continue
        info = fields.get(str(key))
        if info is None:
            continue
        inner, in_dict = _models_in(info.annotation)
        if inner is None:
            continue
        if in_dict and isinstance(value, dict):
            for name, entry in value.items():
                problems.extend(unknown_keys(entry, inner, f"{path}.{name}"))
        else:
            problems.extend(unknown_keys(value, inner, path))
    return problems


def _metrics_problems(t: Tournament) -> list[str]:
    value = t.config.metrics_file
    if value is None:
        return []
    path = Path(value) if Path(value).is_absolute() else t.path.parent / value
    from arena.ops import metrics_file_problem  # what `arena run` refuses to write

    problem = metrics_file_problem(path)
    if problem is not None:
        return [f"metrics_file: {problem}"]
    if not path.name.endswith(".prom"):
        return [f"metrics_file: {path.name}: node-exporter's textfile collector reads *.prom only"]
    return []


def _check(file: Path) -> tuple[Tournament | None, list[str], list[str]]:
    """(the tournament when it loads, problems, warnings)."""
    problems: list[str] = []
    warnings: list[str] = []
    try:
        data = read_yaml(file)
    except ConfigError as exc:
        return None, [str(exc)], []
    problems += [f"{file}: {p}" for p in unknown_keys(data, TournamentConfig)]
    try:
        t = load_tournament(file)
    except ConfigError as exc:
        if not problems or "unknown key" not in str(exc):
            problems.append(str(exc))
        return None, problems, warnings
    from arena.engine import preflight

    problems += preflight(t)
    warnings += t.answer_file_problems()
    warnings += [f"{file}: {w}" for w in _metrics_problems(t)]
    return t, problems, warnings


async def _ping(t: Tournament) -> list[dict[str, Any]]:
    """One minimal call per model of the tournament that calls a provider."""
    from arena.pipeline import make_providers
    from arena.scheduler import price_table
    from arena.types import GenerateRequest, Message, ProviderError

    prices = price_table(t)
    providers = make_providers(t)
    results: list[dict[str, Any]] = []
    try:
        for name in t.used_models():
            pname = t.provider_of(name)
            model_id = t.provider_model_id(name)
            request = GenerateRequest(
                model=model_id,
                messages=(Message("user", _PING_PROMPT),),
                temperature=0.0,
                max_tokens=PING_TOKENS,
            )
            entry: dict[str, Any] = {"model": name, "provider": pname, "model_id": model_id}
            try:
                result = await providers[pname].generate(request)
            except ProviderError as exc:
                entry.update(ok=False, error=str(exc)[:300])
            except Exception as exc:  # noqa: BLE001 - a ping reports, never crashes
                entry.update(ok=False, error=f"{type(exc).__name__}: {exc}"[:300])
            else:
                cost = prices.cost(model_id, result.usage) if model_id in prices else 0.0
                entry.update(ok=True, reply=result.text.strip()[:60], cost_usd=cost)
            results.append(entry)
    finally:
        for p in providers.values():
            await p.close()
    return results


def _ping_estimate(t: Tournament) -> tuple[int, float]:
    """Calls a ping makes and the most they may cost (unpriced models count $0)."""
    from arena.scheduler import price_table
    from arena.types import GenerateRequest, Message

    prices = price_table(t)
    total = 0.0
    names = list(t.used_models())
    for name in names:
        model_id = t.provider_model_id(name)
        if model_id in prices:
            request = GenerateRequest(
                model=model_id,
                messages=(Message("user", _PING_PROMPT),),
                max_tokens=PING_TOKENS,
            )
            total += prices.worst_case(model_id, request)
    return len(names), total


@click.command("check", cls=Command)
@click.argument("file", type=click.Path(path_type=Path))
@click.option(
    "--ping",
    is_flag=True,
    help=f"Then make one minimal call per model (at most {PING_TOKENS} output tokens) to "
    "confirm keys and model ids; what they may cost is printed first.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the findings as JSON.")
def check_cmd(file: Path, ping: bool, as_json: bool) -> None:
    """Check the tournament YAML FILE before a run, without any paid call.

    Reports every unknown key (with "did you mean"), a missing or unreadable
    file (questions, answers, references, template), template placeholders
    that are missing or unknown, providers without their SDK or API key, and
    prices. Exit 0 when the run can start, 2 otherwise (nothing is called).
    With --ping (and no problem found) one minimal call per model follows,
    after its cost; exit 3 when one of them fails.
    """
    t, problems, warnings = _check(file)
    report: dict[str, Any] = {
        "file": str(file),
        "ok": not problems,
        "problems": problems,
        "warnings": warnings,
        "ping": None,
    }
    if t is not None and not problems:
        from arena.pipeline import build_plan

        plan = build_plan(t)
        report["plan"] = {"answers": len(plan.answers), "reviews": len(plan.reviews)}
    code = Exit.OK if not problems else Exit.BAD_INPUT
    if ping and t is not None and not problems:
        calls, cost = _ping_estimate(t)
        report["ping"] = {"calls": calls, "max_cost_usd": cost, "results": []}
        if not as_json:
            click.echo(f"ping: {calls} call(s), at most ${cost:.6f} (priced models only)")
        results = asyncio.run(_ping(t))
        report["ping"]["results"] = results
        report["ping"]["cost_usd"] = sum(float(r.get("cost_usd", 0.0)) for r in results)
        if not all(r["ok"] for r in results):
            code = Exit.PARTIAL
    if as_json:
        click.echo(json.dumps(report))
    else:
        for line in problems:
            click.echo(f"arena: error: {line}", err=True)
        for line in warnings:
            click.echo(f"arena: warning: {line}", err=True)
        ping_report = report["ping"]
        for r in ping_report["results"] if ping_report else []:
            status = f"ok ({r['reply']!r}, ${r['cost_usd']:.6f})" if r["ok"] else r["error"]
            click.echo(f"ping {r['model']} ({r['provider']}, {r['model_id']}): {status}")
        if not problems:
            plan_info = report.get("plan", {})
            click.echo(
                f"{file}: ok ({plan_info.get('answers', 0)} answers and "
                f"{plan_info.get('reviews', 0)} reviews planned)"
            )
    sys.exit(int(code))
