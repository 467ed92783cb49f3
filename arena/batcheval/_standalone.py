"""`arena batcheval`: score any samples with a BatchEval config, outside a tournament.

The config file is either a BatchEval file (`providers`, `models`, `batcheval`,
optional `name`, `seed`, `retry`, `output`, `examples`) or a tournament YAML
with a `batcheval:` section (its questions and contestants are then not used;
its `examples:` section is used when its `apply_to` lists batcheval). In a
BatchEval file, `examples:` applies to BatchEval unless `apply_to` says
otherwise.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from arena.batcheval._planner import BatchEvalPlanner, ProgressFn, Scorer, StageSummary
from arena.batcheval._prompt import check_pool, load_template
from arena.batcheval._samples import Sample
from arena.batcheval._schema import SCORES_FILE, TABLE
from arena.batcheval._scores import write_scores
from arena.config import (
    BatchEvalConfig,
    ConfigError,
    ExamplePool,
    ExamplesConfig,
    ModelConfig,
    ProviderConfig,
    RetryConfig,
    check_models,
    load_example_pool,
    model_fingerprint,
    parse_config,
    read_yaml,
    validate_document,
)
from arena.providers import Provider, ProviderUnavailable, create_provider
from arena.scheduler import Scheduler, as_table, model_prices
from arena.session import RunSetup, run_planners
from arena.store import RunLog

__all__ = ["BatchEvalFileConfig", "BatchEvalSetup", "load_setup", "preflight", "run_standalone"]


class BatchEvalFileConfig(BaseModel):
    """A standalone BatchEval config file, as written by the user."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(default="batcheval", min_length=1)
    providers: dict[str, ProviderConfig] = Field(min_length=1)
    models: dict[str, ModelConfig] = Field(min_length=1)
    batcheval: BatchEvalConfig
    retry: RetryConfig = Field(default_factory=RetryConfig)
    seed: int = 0
    output: str | None = None
    examples: ExamplesConfig | None = None  # scored items shown in the batch prompts


@dataclass(frozen=True)
class BatchEvalSetup:
    """A validated standalone job: the section, its template, scorers and providers."""

    path: Path
    name: str
    config: BatchEvalConfig
    template: str
    providers: dict[str, ProviderConfig]
    models: dict[str, ModelConfig]
    retry: RetryConfig
    seed: int
    output_dir: Path
    examples: ExamplePool | None = None  # the `examples:` pool, when it applies to BatchEval

    def provider_of(self, name: str) -> str:
        """A scorer's provider entry (loading refused scorers without one)."""
        provider = self.models[name].provider
        assert provider is not None, f"scorer {name} has no provider"
        return provider

    def fingerprint(self, name: str) -> dict[str, Any]:
        """What a scorer's outputs depend on (as `Tournament.model_fingerprint`)."""
        return model_fingerprint(name, self.models, self.providers, self.seed)

    def scorers(self) -> list[Scorer]:
        """The scorers of the section, resolved to provider and model id."""
        return [
            Scorer(n, self.provider_of(n), self.models[n].model or n, self.fingerprint(n))
            for n in self.config.scorers
        ]

    def used_providers(self) -> list[str]:
        """Provider entries the scorers need, sorted."""
        return sorted({self.provider_of(n) for n in self.config.scorers})

    def make_providers(self) -> dict[str, Provider]:
        """One provider instance per provider entry the scorers use."""
        out: dict[str, Provider] = {}
        for pname in self.used_providers():
            models = {m.model or n: m for n, m in self.models.items() if m.provider == pname}
            out[pname] = create_provider(pname, self.providers[pname], models, self.seed)
        return out


def _parse_file(data: dict[str, Any], path: Path) -> BatchEvalFileConfig:
    cfg = validate_document(BatchEvalFileConfig, data, path)
    check_models(cfg.providers, cfg.models, path)
    for i, scorer in enumerate(cfg.batcheval.scorers):
        if scorer not in cfg.models:
            raise ConfigError(path, f"batcheval.scorers[{i}]", f"undefined model '{scorer}'")
    if cfg.examples is not None:
        if "apply_to" not in cfg.examples.model_fields_set:
            cfg.examples = cfg.examples.model_copy(update={"apply_to": ["batcheval"]})
        elif "batcheval" not in cfg.examples.apply_to:
            raise ConfigError(
                path, "examples.apply_to", "a BatchEval file's examples must apply to batcheval"
            )
    return cfg


def load_setup(path: str | Path, output: str | Path | None = None) -> BatchEvalSetup:
    """Load and validate a BatchEval (or tournament) config file; ConfigError if bad."""
    p = Path(path)
    data = read_yaml(p)
    if not isinstance(data, dict):
        raise ConfigError(p, "", "the document must be a mapping of keys to values")
    if "contestants" in data or "questions" in data:
        tournament = parse_config(data, p)
        if tournament.batcheval is None:
            raise ConfigError(p, "batcheval", "required key is missing")
        file_cfg = BatchEvalFileConfig(
            name=tournament.name,
            providers=tournament.providers,
            models=tournament.models,
            batcheval=tournament.batcheval,
            retry=tournament.retry,
            seed=tournament.seed,
            examples=(
                tournament.examples
                if tournament.examples is not None and "batcheval" in tournament.examples.apply_to
                else None
            ),
        )
        default_out = Path("runs") / f"{tournament.name}-batcheval"
    else:
        file_cfg = _parse_file(data, p)
        default_out = Path(file_cfg.output or Path("runs") / file_cfg.name)
    pool = None
    if file_cfg.examples is not None:
        pool = load_example_pool(file_cfg.examples, p, file_cfg.seed)
        check_pool(pool, file_cfg.batcheval)
    return BatchEvalSetup(
        path=p,
        name=file_cfg.name,
        config=file_cfg.batcheval,
        template=load_template(file_cfg.batcheval, p, examples=pool is not None),
        providers=file_cfg.providers,
        models=file_cfg.models,
        retry=file_cfg.retry,
        seed=file_cfg.seed,
        output_dir=Path(output) if output is not None else default_out,
        examples=pool,
    )


def preflight(setup: BatchEvalSetup) -> list[str]:
    """Every problem that would stop the job (missing SDK or key), before any call."""
    problems: list[str] = []
    for pname in setup.used_providers():
        try:
            provider = create_provider(pname, setup.providers[pname], {}, setup.seed)
        except ProviderUnavailable as exc:
            problems.append(str(exc))
            continue
        problems.extend(provider.check_ready())
    return problems


async def run_standalone(
    setup: BatchEvalSetup,
    samples: tuple[Sample, ...],
    *,
    budget_usd: float | None = None,
    progress: ProgressFn | None = None,
    on_scheduler: Callable[[Scheduler], None] | None = None,
    compact_every: int = 2000,
) -> StageSummary:
    """Score every sample (resuming from the log in the output directory); caller holds the lock."""
    log = RunLog(setup.output_dir)
    # Prices of the scorers (configs/prices.yaml, then genai-prices): without them
    # --budget would count $0.
    scorers = [(sc.model_id, setup.providers[sc.provider]) for sc in setup.scorers()]
    planner = BatchEvalPlanner(
        setup.config,
        setup.template,
        setup.scorers(),
        seed=setup.seed,
        samples=samples,
        logged=log.read(TABLE, columns=["status", "score"]),
        examples=setup.examples,
    )
    run = await run_planners(
        [planner],
        RunSetup(
            output_dir=setup.output_dir,
            make_providers=setup.make_providers,
            provider_configs=setup.providers,
            retry=setup.retry,
            prices=as_table(model_prices(scorers)),
        ),
        budget_usd=budget_usd,
        progress=progress,
        on_scheduler=on_scheduler,
        compact_every=compact_every,
        run_id=uuid.uuid4().hex[:12],
        raise_storage_errors=True,  # the scores file must not outlive rows the log lost
    )
    summary = planner.summary()
    summary.wall_seconds = run.wall_seconds
    write_scores(setup.output_dir / SCORES_FILE, summary.scores)
    return summary
