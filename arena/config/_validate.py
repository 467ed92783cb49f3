"""Validation past the schema: references between sections, provider types, settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from arena.config._base import resolve_relative
from arena.config._errors import ConfigError
from arena.config._registry import REPLAY_TYPE, SIM_TYPE, provider_target, provider_type_names
from arena.config._schema import REASONING_EFFORTS, ModelConfig, ProviderConfig, TournamentConfig
from arena.config._sections import DiscussionConfig
from arena.config._sim import SimParams
from arena.config._stage_sections import load_stage_sections, registered_section
from arena.config._yaml import key_line


def _format_loc(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for item in loc:
        if isinstance(item, int):
            parts.append(f"[{item}]")
        else:
            parts.append(("." if parts else "") + str(item))
    return "".join(parts)


_Validated = TypeVar("_Validated", bound=BaseModel)


def validate_document(cls: type[_Validated], data: Any, file: str | Path) -> _Validated:
    """Validate a parsed YAML document against a schema; ConfigError names the first problem."""
    if not isinstance(data, dict):
        raise ConfigError(file, "", "the document must be a mapping of keys to values")
    try:
        return cls.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = _format_loc(tuple(err["loc"]))
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        elif err["type"] == "missing":
            msg = "required key is missing"
        raise ConfigError(file, key, msg, key_line(Path(file), tuple(err["loc"]))) from None


def check_models(
    providers: dict[str, ProviderConfig], models: dict[str, ModelConfig], file: str | Path
) -> None:
    """Check provider types and model references; give sim models without `sim:` the defaults.

    A `sim:` block on a model of any other provider type is refused: a real
    model has no simulated skill, and its call ids must not depend on the seed.
    """
    for name, prov in providers.items():
        if provider_target(prov.type) is None:
            raise ConfigError(
                file,
                f"providers.{name}.type",
                f"unknown provider type '{prov.type}' (known: {', '.join(provider_type_names())})",
            )
        if (prov.type == REPLAY_TYPE) != (prov.judgments is not None):
            raise ConfigError(
                file,
                f"providers.{name}.judgments",
                f"a `type: {REPLAY_TYPE}` provider needs `judgments: FILE`"
                if prov.type == REPLAY_TYPE
                else f"only a `type: {REPLAY_TYPE}` provider takes `judgments`",
            )
        if prov.judgments is not None:  # relative to the YAML, as every path in it
            given = [prov.judgments] if isinstance(prov.judgments, str) else prov.judgments
            if not given:
                raise ConfigError(file, f"providers.{name}.judgments", "names no file")
            found = [resolve_relative(Path(file), path) for path in given]  # read at preflight
            providers[name] = prov.model_copy(update={"judgments": [str(p) for p in found]})
    for name, model in models.items():
        if model.provider is None:  # answers from a file (ModelConfig checked the keys)
            continue
        if model.provider not in providers:
            raise ConfigError(
                file,
                f"models.{name}.provider",
                f"undefined provider '{model.provider}' (defined: {', '.join(sorted(providers))})",
            )
        ptype = providers[model.provider].type
        if model.replay_as is not None and ptype != REPLAY_TYPE:
            raise ConfigError(
                file,
                f"models.{name}.replay_as",
                f"only a model of a `type: {REPLAY_TYPE}` provider replays judgments",
            )
        if ptype == SIM_TYPE:
            if model.sim is None:  # a sim model without parameters is an average model
                models[name] = model.model_copy(update={"sim": SimParams()})
        elif model.sim is not None:
            raise ConfigError(
                file,
                f"models.{name}.sim",
                f"a sim block is only allowed on a model of a sim provider; provider "
                f"'{model.provider}' has type '{ptype}' (remove the sim block)",
            )


def parse_config(data: Any, file: str | Path) -> TournamentConfig:
    """Validate a parsed YAML document; raise ConfigError on the first problem.

    A top-level key of a stage's own section (`arena.config.StageSection`) is
    validated against the section's schema and kept in `cfg.section(key)`.
    """
    sections: dict[str, Any] = {}
    if isinstance(data, dict):
        if any(k not in TournamentConfig.model_fields and not registered_section(k) for k in data):
            load_stage_sections()  # a stage of the registry may declare it
        sections = {k: data[k] for k in data if registered_section(str(k)) is not None}
        data = {k: v for k, v in data.items() if k not in sections}
    cfg = validate_document(TournamentConfig, data, file)
    for key, value in sections.items():
        section = registered_section(key)
        assert section is not None
        cfg.set_section(key, _validate_section(section.schema, key, value, file))
    _check_references(cfg, file)
    for key in sections:
        section = registered_section(key)
        if section is not None and section.check is not None:
            section.check(cfg, cfg.section(key), file)
    return cfg


def _validate_section(cls: type[_Validated], key: str, data: Any, file: str | Path) -> _Validated:
    """A stage's section validated against its schema; ConfigError names `key.field`."""
    if not isinstance(data, dict):
        raise ConfigError(file, key, "must be a mapping of keys to values")
    try:
        return validate_document(cls, data, file)
    except ConfigError as exc:
        raise ConfigError(file, f"{key}.{exc.key}" if exc.key else key, exc.problem) from None


def _check_references(cfg: TournamentConfig, file: str | Path) -> None:
    check_models(cfg.providers, cfg.models, file)
    for field_name in ("contestants", "reviewers"):
        names = getattr(cfg, field_name)
        if names is None:
            continue
        seen: set[str] = set()
        for i, n in enumerate(names):
            if n not in cfg.models:
                raise ConfigError(file, f"{field_name}[{i}]", f"undefined model '{n}'")
            if n in seen:
                raise ConfigError(file, f"{field_name}[{i}]", f"duplicate name '{n}'")
            seen.add(n)
    for i, n in enumerate(cfg.batcheval.scorers if cfg.batcheval else []):
        if n not in cfg.models:
            raise ConfigError(file, f"batcheval.scorers[{i}]", f"undefined model '{n}'")
    _check_model_settings(cfg, file)
    baseline = cfg.sampling.baseline
    if baseline is not None and baseline not in cfg.contestants:
        raise ConfigError(
            file,
            "sampling.baseline",
            f"'{baseline}' is not a contestant (contestants: {', '.join(cfg.contestants)})",
        )
    if cfg.discussion is not None:
        _check_discussion(cfg, cfg.discussion, file)


def _check_model_settings(cfg: TournamentConfig, file: str | Path) -> None:
    """Models from a file only answer; reasoning efforts their provider type accepts."""
    judges: list[tuple[str, list[str]]] = [("reviewers", cfg.reviewers or cfg.contestants)]
    if cfg.batcheval is not None:
        judges.append(("batcheval.scorers", cfg.batcheval.scorers))
    if cfg.discussion is not None:
        judges.append(("discussion.discussants", cfg.discussion.named_discussants()))
    for where, names in judges:
        for i, n in enumerate(names):
            model = cfg.models.get(n)
            if model is not None and model.provider is None:
                key = where if cfg.reviewers is None and where == "reviewers" else f"{where}[{i}]"
                raise ConfigError(
                    file,
                    key,
                    f"'{n}' takes its answers from a file and cannot judge without a "
                    "provider (give it a `provider`, or name reviewers that call one)",
                )
    _check_shared_ids(cfg, file)
    for name, model in cfg.models.items():
        if model.provider is None or model.reasoning_effort is None:
            continue
        ptype = cfg.providers[model.provider].type
        allowed = REASONING_EFFORTS.get(ptype)
        if allowed is not None and model.reasoning_effort not in allowed:
            raise ConfigError(
                file,
                f"models.{name}.reasoning_effort",
                f"'{model.reasoning_effort}' is not an effort {ptype} accepts "
                f"({', '.join(sorted(allowed))})",
            )


# What a provider applies per provider-side model id (arena/providers/_settings.py, sim).
_PER_ID_SETTINGS = ("system", "reasoning_effort", "extra", "sim")


def _check_shared_ids(cfg: TournamentConfig, file: str | Path) -> None:
    """Models of one provider entry sharing a model id must share the per-id settings."""
    first: dict[tuple[str, str], str] = {}
    for name, model in cfg.models.items():
        if model.provider is None:
            continue
        key = (model.provider, model.model or name)
        other = first.setdefault(key, name)
        if other == name:
            continue
        theirs = cfg.models[other]
        differ = [k for k in _PER_ID_SETTINGS if getattr(model, k) != getattr(theirs, k)]
        if differ:
            raise ConfigError(
                file,
                f"models.{name}",
                f"shares provider '{key[0]}' and model id '{key[1]}' with models.{other} but "
                f"not its {', '.join(differ)}: a provider entry applies one set per model id "
                "(give the variant a provider entry of its own)",
            )


def _check_discussion(cfg: TournamentConfig, d: DiscussionConfig, file: str | Path) -> None:
    where = "discussion.discussants" + (".all-pairs" if isinstance(d.discussants, dict) else "")
    for i, n in enumerate(d.named_discussants()):
        if n not in cfg.models:
            raise ConfigError(file, f"{where}[{i}]", f"'{n}' is not a configured model")
    reviewers = cfg.reviewers or cfg.contestants
    if d.discussants == "top2" and len(reviewers) < 2:
        raise ConfigError(file, "discussion.discussants", "top2 needs at least two reviewers")
    for name in d.temperatures:
        if name not in cfg.models:
            raise ConfigError(file, f"discussion.temperatures.{name}", "not a configured model")
    if d.leader not in ("random", "alternate", "both"):
        pool = d.named_discussants() or (cfg.reviewers or cfg.contestants)
        if d.leader not in pool:
            raise ConfigError(
                file,
                "discussion.leader",
                f"'{d.leader}' is not random, alternate, both or one of the "
                f"discussants ({', '.join(pool)})",
            )
    if not d.allow_contestants:
        _check_eligible(cfg, d, reviewers, file)


def _check_eligible(
    cfg: TournamentConfig, d: DiscussionConfig, reviewers: list[str], file: str | Path
) -> None:
    """A battle's contestants never discuss it: some battle must keep a pair of discussants."""
    if d.discussants == "top2":
        worst = len(reviewers) - min(2, len(set(reviewers) & set(cfg.contestants)))
        if worst < 2:
            raise ConfigError(
                file,
                "discussion.discussants",
                "top2 excludes a battle's contestants, which leaves some battles fewer "
                f"than two reviewers to discuss them ({len(reviewers)} reviewers); add "
                "reviewers, or set discussion.allow_contestants: true",
            )
        return
    pairs = (
        [d.discussants]
        if isinstance(d.discussants, list)
        else [
            [a, b]
            for i, a in enumerate(d.named_discussants())
            for b in d.named_discussants()[i + 1 :]
        ]
    )
    c = cfg.contestants
    battles = [(a, b) for i, a in enumerate(c) for b in c[i + 1 :]]
    if not any(not {x, y} & {a, b} for x, y in pairs for a, b in battles):
        raise ConfigError(
            file,
            "discussion.discussants",
            "a battle's contestants never discuss it, and every battle has one of these "
            "discussants as a contestant; name other discussants, or set "
            "discussion.allow_contestants: true",
        )


# Bounds on a YAML document, checked before any value is built: its size in
