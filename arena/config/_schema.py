"""The tournament YAML's schema (pydantic): providers, models, prices, the whole document."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr, field_validator, model_validator

from arena.config._base import (
    MAX_ATTEMPTS,
    MAX_SECONDS,
    MAX_TOKENS,
    MIN_RATE_PER_MINUTE,
    _Strict,
    path_safe_name,
)
from arena.config._sections import (
    AlertsConfig,
    BatchEvalConfig,
    DiscussionConfig,
    ExamplesConfig,
    PlacementConfig,
    SamplingConfig,
)
from arena.config._sim import SimParams
from arena.types import Limits


class LimitsConfig(_Strict):
    """Per-provider rate limits; each optional."""

    max_concurrency: int | None = Field(default=None, ge=1)
    rpm: float | None = Field(default=None, ge=MIN_RATE_PER_MINUTE)
    tpm: float | None = Field(default=None, ge=MIN_RATE_PER_MINUTE)

    def to_limits(self) -> Limits:
        return Limits(max_concurrency=self.max_concurrency, rpm=self.rpm, tpm=self.tpm)


class BatchModeConfig(_Strict):
    """A provider's batch mode (docs/cost.md): calls go out as batch jobs at batch prices."""

    # Most requests in one job (the API's own limit applies too).
    max_requests: int = Field(default=10_000, ge=1)
    # Seconds to gather a stage's requests before a job goes out.
    max_wait: float = Field(default=1.0, ge=0, le=MAX_SECONDS)
    # Seconds between looks at a job in flight.
    poll_seconds: float = Field(default=30.0, gt=0, le=MAX_SECONDS)


BATCH_PROVIDER_TYPES = frozenset({"openai", "anthropic", "gemini"})


class ProviderConfig(_Strict):
    """One named provider entry."""

    type: str
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    base_url: str | None = None
    api_key_env: str | None = None
    timeout: float = Field(default=60.0, gt=0, le=MAX_SECONDS)
    # `type: replay`: the recorded judgments it answers review requests with
    # (relative to the YAML; any format `arena leaderboard --reviews` reads).
    judgments: str | list[str] | None = None
    # Batch mode: `true` or `{max_requests, max_wait, poll_seconds}` (openai, anthropic, gemini).
    batch: bool | BatchModeConfig = False

    def batch_mode(self) -> BatchModeConfig | None:
        """The provider's batch settings, None when it calls directly."""
        if isinstance(self.batch, BatchModeConfig):
            return self.batch
        return BatchModeConfig() if self.batch else None

    @model_validator(mode="after")
    def _batch_type(self) -> ProviderConfig:
        if self.batch_mode() is not None and self.type not in BATCH_PROVIDER_TYPES:
            raise ValueError(
                f"batch: provider type {self.type!r} has no batch API "
                f"(batch mode needs one of {', '.join(sorted(BATCH_PROVIDER_TYPES))})"
            )
        return self


ReasoningEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
# What each provider type accepts as `reasoning_effort` (sim: any, it is ignored).
REASONING_EFFORTS: dict[str, frozenset[str]] = {
    "openai": frozenset({"none", "minimal", "low", "medium", "high", "xhigh", "max"}),
    "anthropic": frozenset({"low", "medium", "high", "xhigh", "max"}),
    "gemini": frozenset({"minimal", "low", "medium", "high", "xhigh"}),
}


class ModelReviewConfig(_Strict):
    """A model's own settings as a reviewer; unset ones come from the `review:` section."""

    temperature: float | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=1, le=MAX_TOKENS)


_FILE_MODEL_KEYS = frozenset({"answers", "model"})


class ModelConfig(_Strict):
    """One named model: which provider serves it and how it is called.

    A model with `answers: PATH` is a contestant whose answers already exist
    in a file (FastChat, arena-hard, AlpacaEval or PRD shape); with a
    `provider` too, it answers from the file and reviews through the provider.
    `replay_as`: on a `type: replay` provider, the recorded reviewer whose
    judgments it replays (default: the model's name).
    """

    provider: str | None = None
    model: str | None = None  # provider-side id; defaults to the entry's name
    answers: str | None = None  # answers file, relative to the YAML
    temperature: float = Field(default=0.7, ge=0)
    max_tokens: int = Field(default=1024, ge=1, le=MAX_TOKENS)
    system: str | None = None  # system prompt of every call this model makes
    reasoning_effort: ReasoningEffort | None = None
    extra: dict[str, Any] = Field(default_factory=dict)  # provider-specific request parameters
    review: ModelReviewConfig = Field(default_factory=ModelReviewConfig)
    sim: SimParams | None = None
    # Any string; changing it forces new answers (a provider updated a floating alias).
    revision: str | None = None
    replay_as: str | None = None

    @model_validator(mode="after")
    def _provider_or_answers(self) -> ModelConfig:
        if self.answers is not None and self.provider is None:
            extra = sorted(self.model_fields_set - _FILE_MODEL_KEYS)
            if extra:
                raise ValueError(
                    f"a model with `answers` makes no calls: remove {', '.join(extra)}"
                )
        elif self.provider is None:
            raise ValueError("needs a `provider` (or `answers: PATH` for answers from a file)")
        return self


# A named template's review temperature when `review.temperature` is not set
# (three_class: the PRD paper's 0.2).
REVIEW_TEMPLATE_TEMPERATURES = {"three_class": 0.2}


# Verdict token sets `review.verdicts` may name: FastChat's pair-v2 prompt
# (MT-bench: `[[C]]` a tie) and arena-hard's five-grade scale (a strong
# verdict weighs 3, as in arena-hard's own results).
VERDICT_PRESETS: dict[str, dict[str, tuple[float, float]]] = {
    "mt-bench": {"[[A]]": (1.0, 1.0), "[[B]]": (0.0, 1.0), "[[C]]": (0.5, 1.0)},
    "arena-hard": {
        "[[A>>B]]": (1.0, 3.0),
        "[[A>B]]": (1.0, 1.0),
        "[[A=B]]": (0.5, 1.0),
        "[[B>A]]": (0.0, 1.0),
        "[[B>>A]]": (0.0, 3.0),
    },
}


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if number == number and abs(number) != float("inf") else None


def _verdict_grade(token: str, value: Any) -> tuple[float, float]:
    """One declared token's (p_a, weight): a number in [0, 1], or {p_a, weight}."""
    if isinstance(value, dict):
        unknown = sorted(set(value) - {"p_a", "weight"})
        if unknown or "p_a" not in value:
            raise ValueError(
                f"{token!r}: expected a share in [0, 1] or {{p_a, weight}}, "
                f"not keys {sorted(value)}"
            )
        p_a, weight = _finite(value["p_a"]), _finite(value.get("weight", 1.0))
        if weight is None or weight <= 0:
            raise ValueError(
                f"{token!r}: weight must be a positive number, not {value.get('weight')!r}"
            )
    else:
        p_a, weight = _finite(value), 1.0
    if p_a is None or not 0.0 <= p_a <= 1.0:
        shown = value.get("p_a") if isinstance(value, dict) else value
        raise ValueError(f"{token!r}: the share credited to A must be in [0, 1], not {shown!r}")
    return p_a, weight


def declared_verdicts(value: str | dict[str, Any] | None) -> dict[str, tuple[float, float]] | None:
    """`review.verdicts` as token -> (p_a, weight); None: the default `[[A]]`/`[[B]]`/`[[tie]]`."""
    if value is None:
        return None
    if isinstance(value, str):
        return dict(VERDICT_PRESETS[value])
    return {token: _verdict_grade(token, grade) for token, grade in value.items()}


class ReviewConfig(_Strict):
    """How reviews are prompted."""

    template: str | None = None
    temperature: float = Field(default=0.0, ge=0)
    max_tokens: int = Field(default=1024, ge=1, le=MAX_TOKENS)
    # The template's verdict tokens: token -> share of a win credited to A (or
    # {p_a, weight}), or a preset name (VERDICT_PRESETS). None: `[[A]]`,
    # `[[B]]`, `[[tie]]` (any case), as the shipped templates ask.
    verdicts: Any = None

    @field_validator("verdicts")
    @classmethod
    def _check_verdicts(cls, v: Any) -> Any:
        if v is None:
            return v
        if isinstance(v, str):
            if v not in VERDICT_PRESETS:
                known = ", ".join(VERDICT_PRESETS)
                raise ValueError(f"unknown verdict preset {v!r} (known: {known}, or a mapping)")
            return v
        if not isinstance(v, dict) or not v:
            raise ValueError("expected a preset name or a mapping of verdict tokens to shares")
        if not all(isinstance(token, str) for token in v):
            raise ValueError("every verdict token must be a string")
        declared = declared_verdicts(v) or {}
        blank = [t for t in declared if not t.strip()]
        if blank:
            raise ValueError("a verdict token must not be empty")
        if not any(p > 0.5 for p, _ in declared.values()):
            raise ValueError("no token credits A (needs one with a value above 0.5)")
        if not any(p < 0.5 for p, _ in declared.values()):
            raise ValueError("no token credits B (needs one with a value below 0.5)")
        return v

    @model_validator(mode="after")
    def _template_temperature(self) -> ReviewConfig:
        # A named template may carry its method's temperature (three_class: 0.2).
        named = REVIEW_TEMPLATE_TEMPERATURES.get(self.template or "")
        if named is not None and "temperature" not in self.model_fields_set:
            self.temperature = named
        return self


class RetryConfig(_Strict):
    """Retry policy for transient provider errors."""

    max_attempts: int = Field(default=5, ge=1, le=MAX_ATTEMPTS)
    backoff_base: float = Field(default=0.5, ge=0, le=MAX_SECONDS)
    backoff_max: float = Field(default=30.0, ge=0, le=MAX_SECONDS)
    # A retry hint longer than this (a daily quota, say) defers the provider's
    # remaining calls: the run ends partial and resumable (exit 3).
    max_retry_after: float = Field(default=300.0, gt=0, le=24 * MAX_SECONDS)


class BatchPriceConfig(_Strict):
    """A model's batch API price: USD per million tokens (cache prices optional)."""

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    cache_read: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    cache_write: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class PriceConfig(_Strict):
    """A model's price: USD per million input and output tokens.

    Optional: `cache_read` and `cache_write` (prompt-cache input; default: as
    input) and `batch` (the batch API's prices; default: none known).
    """

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    cache_read: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    cache_write: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    batch: BatchPriceConfig | None = None


# --- BatchEval (docs/batcheval.md): the optional `batcheval:` section --------


class TournamentConfig(_Strict):
    """The tournament YAML, as written by the user."""

    name: str = Field(min_length=1)
    questions: str
    providers: dict[str, ProviderConfig] = Field(min_length=1)
    models: dict[str, ModelConfig] = Field(min_length=1)
    contestants: list[str] = Field(min_length=2)
    reviewers: list[str] | None = None
    review: ReviewConfig = Field(default_factory=ReviewConfig)
    retry: RetryConfig = Field(default_factory=RetryConfig)
    output: str | None = None
    seed: int = 0
    # Reference answers (any answer-file shape), shown to reviewers as {reference}.
    references: str | None = None
    batcheval: BatchEvalConfig | None = None  # off unless the section is present
    discussion: DiscussionConfig | None = None  # off unless the section is present
    examples: ExamplesConfig | None = None  # few-shot scored examples; off unless present
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)
    # A contestant new to a ranked tournament (docs/sampling.md); None: search, 30%.
    placement: PlacementConfig | None = None
    # Per provider-side model id; overrides configs/prices.yaml (arena.scheduler.price_table).
    prices: dict[str, PriceConfig] = Field(default_factory=dict)
    # Tournament budget: the most the output directory may spend over all its
    # runs (every billed attempt in its log); None: no limit.
    budget_usd: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    # Operations (docs/nightly.md): alerts on failures, a Prometheus textfile of metrics.
    alerts: AlertsConfig | None = None
    metrics_file: str | None = Field(default=None, min_length=1)
    # With a budget (budget_usd or --budget), a model of a real provider without a
    # price stops the run at preflight ("error"); "allow" runs it, its calls counted $0.
    unpriced: Literal["error", "allow"] = "error"
    # The sections of stages in packages of their own (arena.config.StageSection), by key.
    _stage_sections: dict[str, BaseModel] = PrivateAttr(default_factory=dict)

    def section(self, key: str) -> Any:
        """A registered stage's section (its schema's model), None when the YAML has none."""
        return self._stage_sections.get(key)

    def set_section(self, key: str, value: BaseModel) -> None:
        """Keep a registered stage's validated section (`parse_config`)."""
        self._stage_sections[key] = value

    def sections_json(self) -> dict[str, Any]:
        """The registered stages' sections as JSON (keys left at their defaults left out)."""
        return {
            k: v.model_dump(mode="json", exclude_defaults=True)
            for k, v in sorted(self._stage_sections.items())
        }

    @field_validator("name")
    @classmethod
    def _name_stays_in_its_folder(cls, v: str) -> str:
        return path_safe_name(v)

    @field_validator("models", "providers")
    @classmethod
    def _keys_stay_in_their_folder(cls, v: dict[str, Any]) -> dict[str, Any]:
        for key in v:
            try:
                path_safe_name(key)
            except ValueError as exc:
                raise ValueError(f"name {key!r}: {exc}") from None
        return v

    @field_validator("reviewers")
    @classmethod
    def _reviewers_not_empty(cls, v: list[str] | None) -> list[str] | None:
        if v is not None and len(v) == 0:
            raise ValueError("must list at least one reviewer (or be omitted)")
        return v
