"""Tournament YAML: schema, loading and validation.

Everything a run needs is checked here, before any call is made. Errors name
the file, the key path and the problem (`ConfigError`).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictFloat,
    StrictInt,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from arena.formats import AnswerFile, FormatError, read_answer_file, read_questions
from arena.formats import Question as Question  # re-exported: arena.config.Question
from arena.formats import read_records as _read_records
from arena.types import Limits

__all__ = [
    "BatchPriceConfig",
    "AlertsConfig",
    "BATCHEVAL_PROCEDURES",
    "BatchEvalConfig",
    "COMPOSITION_ALIASES",
    "CONFIGS_DIR",
    "ConfigError",
    "CriterionConfig",
    "DEFAULT_REVIEW_TEMPLATE",
    "DiscussionConfig",
    "DiscussionTrigger",
    "FILE_PROVIDER",
    "FREE_TYPES",
    "REPLAY_TYPE",
    "LimitsConfig",
    "MAX_TOKENS",
    "MAX_YAML_BYTES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_VALUES",
    "ModelConfig",
    "NAME_MAX",
    "ModelReviewConfig",
    "PriceConfig",
    "REVIEW_TEMPLATES",
    "REVIEW_TEMPLATE_TEMPERATURES",
    "ProviderConfig",
    "REASONING_EFFORTS",
    "ReasoningEffort",
    "RetryConfig",
    "ReviewConfig",
    "SIM_RUN_ONLY",
    "SIM_TYPE",
    "SamplingConfig",
    "ScaleConfig",
    "SimParams",
    "Tournament",
    "TournamentConfig",
    "VERDICT_PRESETS",
    "check_models",
    "declared_verdicts",
    "load_answer_files",
    "load_questions",
    "load_tournament",
    "model_fingerprint",
    "parse_config",
    "path_safe_name",
    "provider_target",
    "provider_type_names",
    "read_jsonl_objects",
    "read_yaml",
    "register_provider_type",
    "validate_document",
    "with_references",
]

# Repository-level folder of shipped prompt templates and presets.
CONFIGS_DIR = Path(__file__).resolve().parent.parent / "configs"
DEFAULT_REVIEW_TEMPLATE = CONFIGS_DIR / "prompts" / "review.txt"
# Shipped review templates `review.template` may name instead of a file.
# `cache_friendly` puts every instruction before the question and the answers,
# so reviews of one question share the longest prefix (docs/cost.md).
# `three_class` has the structure of the prompt behind PRD's published ranking
# (in arena's words): a 3-class verdict on helpfulness, relevance, accuracy and
# level of detail, with coding and math variants picked by the question's
# category; its reviews default to the paper's temperature.
REVIEW_TEMPLATES = {
    "default": DEFAULT_REVIEW_TEMPLATE,
    "cache_friendly": CONFIGS_DIR / "prompts" / "review_cache_friendly.txt",
    "three_class": CONFIGS_DIR / "prompts" / "review_three_class.txt",
}
# A named template's review temperature when `review.temperature` is not set.
REVIEW_TEMPLATE_TEMPERATURES = {"three_class": 0.2}


class ConfigError(Exception):
    """Bad input: names the file, the key path and the problem."""

    def __init__(self, file: str | Path, key: str, problem: str) -> None:
        self.file = str(file)
        self.key = key
        self.problem = problem
        where = f"{self.file}: {key}" if key else self.file
        super().__init__(f"{where}: {problem}")


# --- provider types: the one registry (arena.providers creates the instances) --

# type name -> "module:attribute", imported lazily by `arena.providers` so a
# missing optional SDK only matters when a tournament uses that provider type.
_PROVIDER_TYPES: dict[str, str] = {
    "sim": "arena.providers.sim:SimProvider",
    "openai": "arena.providers.openai:OpenAIProvider",
    "anthropic": "arena.providers.anthropic:AnthropicProvider",
    "gemini": "arena.providers.gemini:GeminiProvider",
    "replay": "arena.providers.replay:ReplayProvider",
}
SIM_TYPE = "sim"  # the simulator: the only type whose models take a `sim:` block
REPLAY_TYPE = "replay"  # answers review requests with recorded judgments (arena.providers.replay)


def register_provider_type(type_name: str, target: str) -> None:
    """Make `type_name` a valid provider type, served by 'module:ClassName'."""
    _PROVIDER_TYPES[type_name] = target


def provider_target(type_name: str) -> str | None:
    """The 'module:ClassName' registered for a provider type (None when unknown)."""
    return _PROVIDER_TYPES.get(type_name)


def provider_type_names() -> list[str]:
    """Every registered provider type, sorted."""
    return sorted(_PROVIDER_TYPES)


# The most output tokens a call may ask for: far above any model's limit (a
# typo such as 1e21 is refused, not sent to a provider or priced).
MAX_TOKENS = 1_000_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LimitsConfig(_Strict):
    """Per-provider rate limits; each optional."""

    max_concurrency: int | None = Field(default=None, ge=1)
    rpm: float | None = Field(default=None, gt=0)
    tpm: float | None = Field(default=None, gt=0)

    def to_limits(self) -> Limits:
        return Limits(max_concurrency=self.max_concurrency, rpm=self.rpm, tpm=self.tpm)


class ProviderConfig(_Strict):
    """One named provider entry."""

    type: str
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    base_url: str | None = None
    api_key_env: str | None = None
    timeout: float = Field(default=60.0, gt=0)
    # `type: replay`: the recorded judgments it answers review requests with
    # (relative to the YAML; any format `arena leaderboard --reviews` reads).
    judgments: str | list[str] | None = None


class SimParams(_Strict):
    """Simulation parameters of a sim model (as contestant and as reviewer)."""

    skill: float = 0.0
    answer_noise: float = Field(default=0.5, ge=0)
    style: str | None = None
    answer_words: int = Field(default=60, ge=1)
    # Verbosity varies by answer: words = answer_words * exp(spread * N(0, 1)).
    answer_words_spread: float = Field(default=0.0, ge=0)
    latency_mean: float = Field(default=0.0, ge=0)
    latency_sd: float = Field(default=0.0, ge=0)
    failure_rate: float = Field(default=0.0, ge=0, le=1)
    judge_noise: float = Field(default=0.5, ge=0)
    position_bias: float = 0.0
    self_preference: float = 0.0
    # As a reviewer: added to the perceived gap in favour of the longer answer,
    # per unit of relative length difference (L_A - L_B) / mean(L_A, L_B).
    length_bias: float = 0.0
    tie_band: float = Field(default=0.1, ge=0)
    malformed_rate: float = Field(default=0.0, ge=0, le=1)
    # BatchEval scoring (arena/providers/_sim_batcheval.py): noise of seeing one
    # sample's quality, the per-call drift of the absolute scale, and the share
    # of a score that is relative to the batch (weak batch inflates, strong deflates).
    score_noise: float = Field(default=0.3, ge=0)
    score_drift: float = Field(default=0.5, ge=0)
    batch_context: float = Field(default=0.4, ge=0, le=1)
    # PeerDiscussion (arena/providers/_sim_discuss.py): the chance to hold an
    # opinion whatever the argument, and how much clearer a discussion's look at
    # the answers is than one review's (noise judge_noise / (1 + insight)).
    stubbornness: float = Field(default=0.5, ge=0, le=1)
    insight: float = Field(default=1.0, ge=0)
    # Built-in gains the benchmarks switch off to show figures without them:
    # a discussant's fresh look free of position bias and sharper by `insight`,
    # and a batch's spread anchoring the scale (a lone sample drifts most).
    fresh_look: bool = True
    batch_anchoring: bool = True


# Sim settings that do not change what a call returns: not part of any id.
SIM_RUN_ONLY = frozenset({"latency_mean", "latency_sd", "failure_rate"})
# Sim parameters added after logs were first written (default 0: no effect).
_LATER_SIM_PARAMS = frozenset({"answer_words_spread", "length_bias"})

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


# Provider types whose calls cost nothing (no price needed).
FREE_TYPES = frozenset({SIM_TYPE, REPLAY_TYPE})
# The `provider` of a contestant whose answers come from a file (logs, plan, status).
FILE_PROVIDER = "(file)"
# Keys a model with `answers:` may have besides it.
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

    max_attempts: int = Field(default=5, ge=1)
    backoff_base: float = Field(default=0.5, ge=0)
    backoff_max: float = Field(default=30.0, ge=0)
    # A retry hint longer than this (a daily quota, say) defers the provider's
    # remaining calls: the run ends partial and resumable (exit 3).
    max_retry_after: float = Field(default=300.0, gt=0)


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


class ScaleConfig(_Strict):
    """A BatchEval score scale: decimals from `low` (worst) to `high` (best)."""

    low: float = 1.0
    high: float = 5.0

    @model_validator(mode="after")
    def _ordered(self) -> ScaleConfig:
        if self.low >= self.high:
            raise ValueError(f"low must be below high (got low={self.low:g}, high={self.high:g})")
        return self


class CriterionConfig(_Strict):
    """One BatchEval criterion: what is judged, on which scale, with anchor texts."""

    name: str = Field(min_length=1)
    description: str
    scale: ScaleConfig = Field(default_factory=ScaleConfig)
    anchors: dict[float, str] = Field(default_factory=dict)

    @field_validator("description")
    @classmethod
    def _description_not_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("a criterion needs a description")
        return v

    @model_validator(mode="after")
    def _anchors_on_scale(self) -> CriterionConfig:
        for point in self.anchors:
            if not self.scale.low <= point <= self.scale.high:
                raise ValueError(
                    f"anchor {point:g} is outside the scale "
                    f"[{self.scale.low:g}, {self.scale.high:g}]"
                )
        return self


# The earlier names of the compositions: `paper` named the released code's
# rule, although the paper's own Algorithm 1 orders by all rounds' scores.
COMPOSITION_ALIASES = {"paper": "previous-round", "arena": "running-mean"}
# `stages:` and the `procedure:` it names.
BATCHEVAL_PROCEDURES: dict[Literal[1, 2, 3], Literal["one-stage", "two-stage", "three-stage"]] = {
    1: "one-stage",
    2: "two-stage",
    3: "three-stage",
}


class BatchEvalConfig(_Strict):
    """The `batcheval:` section: per-answer scores, many answers per prompt."""

    scorers: list[str] = Field(min_length=1)
    criteria: list[CriterionConfig] = Field(min_length=1)
    batch_size: int = Field(default=10, ge=1)
    rounds: int = Field(default=5, ge=1)
    temperature: float = Field(default=0.2, ge=0)
    max_tokens: int = Field(default=2048, ge=1, le=MAX_TOKENS)
    strategy: Literal["heterogeneous", "random", "homogeneous"] = "heterogeneous"
    # previous-round: the released code's batching (the previous round's scores
    # order the samples, n mod B set aside as a short last batch); running-mean:
    # the mean over all rounds so far orders them (the paper's Algorithm 1),
    # even batch sizes. `paper` and `arena`, the earlier names, are aliases.
    composition: Literal["previous-round", "running-mean"] = "previous-round"
    # stages: 1 one-stage, 2 two-stage (analyse all, then score all), 3 three-stage
    # (analyse all, compare them in a ranking, then score all); `procedure` is
    # the earlier spelling of the same choice.
    stages: Literal[1, 2, 3] = 2
    procedure: Literal["one-stage", "two-stage", "three-stage"] = "two-stage"
    scores: Literal["decimal", "integer"] = "decimal"
    template: str | None = None  # default: configs/prompts/batcheval_<procedure>.txt

    @field_validator("composition", mode="before")
    @classmethod
    def _composition_alias(cls, v: object) -> object:
        return COMPOSITION_ALIASES.get(v, v) if isinstance(v, str) else v

    @model_validator(mode="after")
    def _stages_and_procedure(self) -> BatchEvalConfig:
        named = BATCHEVAL_PROCEDURES[self.stages]
        if "stages" in self.model_fields_set:
            if "procedure" in self.model_fields_set and self.procedure != named:
                raise ValueError(
                    f"stages: {self.stages} and procedure: {self.procedure} disagree "
                    "(give one of them)"
                )
            self.procedure = named
        else:
            self.stages = next(k for k, v in BATCHEVAL_PROCEDURES.items() if v == self.procedure)
        return self

    @model_validator(mode="after")
    def _integer_scale(self) -> BatchEvalConfig:
        if self.scores != "integer":
            return self
        for c in self.criteria:
            if not (float(c.scale.low).is_integer() and float(c.scale.high).is_integer()):
                raise ValueError(
                    f"scores: integer needs whole-number scale ends; criterion '{c.name}' "
                    f"has [{c.scale.low:g}, {c.scale.high:g}]"
                )
        return self

    @model_validator(mode="after")
    def _unique_names(self) -> BatchEvalConfig:
        names = [c.name for c in self.criteria]
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f"duplicate criterion name '{name}'")
        for scorer in self.scorers:
            if self.scorers.count(scorer) > 1:
                raise ValueError(f"duplicate scorer '{scorer}'")
        return self


# --- PeerDiscussion (docs/discussion.md): the optional `discussion:` section --

DiscussionTrigger = Literal["tie", "disagreement", "inconsistent"]


def _default_triggers() -> list[DiscussionTrigger]:
    return ["tie", "inconsistent"]


class DiscussionConfig(_Strict):
    """The `discussion:` section: two reviewers discuss disputed battles to a shared verdict."""

    trigger: list[DiscussionTrigger] = Field(default_factory=_default_triggers, min_length=1)
    tie_margin: float = Field(default=0.0, ge=0, lt=1)  # |mean score| <= margin is a tie
    disagreement: float = Field(default=0.3, gt=0, le=1)  # share off the most common verdict
    # inconsistent: more than this share of the reviewers contradict themselves
    # under position swap (0: any one reviewer is enough).
    inconsistent_share: float = Field(default=0.0, ge=0, lt=1)
    discussants: str | list[str] | dict[str, list[str]] = "top2"
    leader: str = "random"  # random | alternate | a model name
    max_turns: int = Field(default=4, ge=1)
    stop_on_agreement: bool = False  # the paper always runs max_turns turns
    allow_contestants: bool = False  # may a battle's contestants discuss it?
    temperature: float = Field(default=0.2, ge=0)
    temperatures: dict[str, Annotated[float, Field(ge=0)]] = Field(default_factory=dict)
    max_tokens: int = Field(default=1024, ge=1, le=MAX_TOKENS)
    outcome: Literal["replace", "add"] = "replace"
    weight: int = Field(default=1, ge=1)  # `add`: the verdict counts as this many reviews
    template: str | None = None  # default: configs/prompts/discussion.txt
    role_template: str | None = None  # default: configs/prompts/discussion_role.txt

    @field_validator("trigger", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @field_validator("discussants")
    @classmethod
    def _discussants_shape(
        cls, v: str | list[str] | dict[str, list[str]]
    ) -> str | list[str] | dict[str, list[str]]:
        if isinstance(v, str):
            if v != "top2":
                raise ValueError(
                    f"unknown discussant '{v}' (use two model names, top2 "
                    "or {all-pairs: [names]})"
                )
        elif isinstance(v, list):
            if len(v) != 2 or v[0] == v[1]:
                raise ValueError("name exactly two different models")
        elif list(v) != ["all-pairs"]:
            raise ValueError("the only mapping form is {all-pairs: [names]}")
        elif len(v["all-pairs"]) < 2 or len(set(v["all-pairs"])) != len(v["all-pairs"]):
            raise ValueError("all-pairs needs at least two different model names")
        return v

    def named_discussants(self) -> list[str]:
        """The model names the section lists (none for top2)."""
        if isinstance(self.discussants, str):
            return []
        if isinstance(self.discussants, list):
            return list(self.discussants)
        return list(self.discussants["all-pairs"])


class SamplingConfig(_Strict):
    """Which review calls of the full plan a run makes (docs/sampling.md)."""

    strategy: Literal["full", "uniform", "adaptive"] = "full"
    # A float in (0, 1]: that share of the full plan's review calls; an
    # integer: that number of review calls. Required unless strategy is full.
    budget: StrictInt | StrictFloat | None = Field(default=None, validate_default=True)
    # Adaptive only: rounds after the seed round, the seed round's share of the
    # budget, and whether to stop once every adjacent pair is separated.
    rounds: int = Field(default=5, ge=1, le=100)
    seed_share: float = Field(default=0.3, gt=0, le=1)
    stop_when_separated: bool = False

    @field_validator("budget")
    @classmethod
    def _budget_fits_strategy(
        cls, budget: int | float | None, info: ValidationInfo
    ) -> int | float | None:
        strategy = info.data.get("strategy", "full")
        if strategy == "full":
            if budget is not None:
                raise ValueError("only a sampled strategy (uniform, adaptive) takes a budget")
            return budget
        if budget is None:
            raise ValueError(f"strategy {strategy} needs a budget (a share or a number of calls)")
        if isinstance(budget, float):
            if not (0.0 < budget <= 1.0):
                raise ValueError(
                    f"a share must be in (0, 1], got {budget} "
                    "(write an integer for a number of review calls)"
                )
        elif budget < 2:
            raise ValueError(f"a number of review calls must be at least 2, got {budget}")
        return budget


def path_safe_name(name: str) -> str:
    """`name` if it can name a file or folder without leaving its parent; else ValueError."""
    if name.strip() in ("", ".", "..") or any(c in name for c in "/\\\0"):
        raise ValueError(
            "must not be empty, '.' or '..', nor contain '/', '\\' or NUL "
            "(it names a folder or file and must stay inside its directory)"
        )
    return name


class AlertsConfig(_Strict):
    """`alerts:`: where the status record of a run goes when it needs attention
    (docs/nightly.md). Alerts fire on exit 1, 2 and 74, on a budget stop (4),
    on the Nth partial or locked night in a row (3, 75), and on the first
    success after an alert."""

    webhook: str | None = Field(default=None, pattern=r"^https?://\S+$")  # POST of the record
    command: str | None = Field(default=None, min_length=1)  # run with the record on stdin
    after_partial_nights: int = Field(default=3, ge=1)
    timeout: float = Field(default=10.0, gt=0, le=300, allow_inf_nan=False)


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
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)
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


@dataclass(frozen=True)
class Tournament:
    """A validated tournament: config plus everything it refers to, loaded."""

    path: Path
    config: TournamentConfig
    questions: tuple[Question, ...]
    review_template: str
    review_template_path: Path
    output_dir: Path
    # Contestants whose answers come from a file: model name -> the file's answers.
    answer_files: dict[str, AnswerFile] = field(default_factory=dict)
    # (K, N) when this is shard K of N (`arena run --shard K/N`, see arena.shard):
    # `questions` then holds only that shard's questions.
    shard: tuple[int, int] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def contestants(self) -> list[str]:
        return list(self.config.contestants)

    @property
    def reviewers(self) -> list[str]:
        return list(self.config.reviewers or self.config.contestants)

    def model(self, name: str) -> ModelConfig:
        return self.config.models[name]

    def provider_model_id(self, name: str) -> str:
        return self.config.models[name].model or name

    def provider_of(self, name: str) -> str:
        """The provider entry serving a model (FILE_PROVIDER for answers from a file)."""
        return self.config.models[name].provider or FILE_PROVIDER

    def from_file(self, name: str) -> bool:
        """Whether a model's answers come from a file (it makes no calls)."""
        return self.config.models[name].answers is not None

    def used_models(self) -> list[str]:
        """Models that call a provider: contestants, reviewers, BatchEval scorers, named
        discussants, each once, in config order (contestants from a file make no calls)."""
        scorers = self.config.batcheval.scorers if self.config.batcheval else []
        discussants = self.config.discussion.named_discussants() if self.config.discussion else []
        names = dict.fromkeys(self.contestants + self.reviewers + scorers + discussants)
        return [n for n in names if self.config.models[n].provider is not None]

    def model_fingerprint(self, name: str) -> dict[str, Any]:
        """What a model's outputs depend on: provider type, model id, params."""
        return model_fingerprint(name, self.config.models, self.config.providers, self.config.seed)

    def review_settings(self, name: str) -> tuple[float, int]:
        """(temperature, max_tokens) of a model's reviews: its own `review:`, else the section's."""
        own = self.config.models[name].review
        section = self.config.review
        return (
            section.temperature if own.temperature is None else own.temperature,
            section.max_tokens if own.max_tokens is None else own.max_tokens,
        )

    def limited(self, n: int) -> Tournament:
        """The same tournament on its first `n` questions (`arena run --limit N`)."""
        return replace(self, questions=self.questions[:n])

    def answer_file_problems(self) -> list[str]:
        """One line per contestant whose file lacks a usable answer to some question."""
        lines: list[str] = []
        for name, found in self.answer_files.items():
            asked = [q.id for q in self.questions if q.id in found.problems]
            if not asked:
                continue
            shown = "; ".join(f"{qid}: {found.problems[qid]}" for qid in asked[:5])
            more = f"; and {len(asked) - 5} more" if len(asked) > 5 else ""
            lines.append(
                f"models.{name}: {len(asked)} question(s) without a usable answer in "
                f"{found.path}: {shown}{more} (logged as failed answers)"
            )
        return lines

    def config_hash(self) -> str:
        """Hash of the whole resolved config (for snapshots and history)."""
        config = self.config.model_dump()
        if config["review"].get("verdicts") is None:  # undeclared: the hash of older configs
            del config["review"]["verdicts"]
        blob = json.dumps({"config": config, "template": self.review_template}, sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def model_fingerprint(
    name: str, models: dict[str, ModelConfig], providers: dict[str, ProviderConfig], seed: int
) -> dict[str, Any]:
    """What a model's outputs depend on: provider type, model id, params.

    Only a simulated model's outputs depend on its sim parameters and the seed;
    a real provider's never do, so changing `seed` never re-runs (and pays
    again for) a real model's calls.
    """
    m = models[name]
    if m.provider is None:  # answers from a file: the answer ids add the text itself
        return {"name": name, "provider_type": "file"}
    prov = providers[m.provider]
    fp: dict[str, Any] = {
        "name": name,
        "provider_type": prov.type,
        "model": m.model or name,
        "temperature": m.temperature,
        "max_tokens": m.max_tokens,
    }
    if m.revision is not None:
        fp["revision"] = m.revision
    if prov.type == SIM_TYPE:
        # Newer parameters enter only when set, so older logs stay current; latency and
        # failures change when a call ends, never what it returns.
        fp["sim"] = {
            k: v
            for k, v in (m.sim or SimParams()).model_dump().items()
            if not (k in _LATER_SIM_PARAMS and v == 0) and k not in SIM_RUN_ONLY
        }
        fp["seed"] = seed
    # Only when set, so that the ids of tournaments written before these existed stay.
    if m.system is not None:
        fp["system"] = m.system
    if m.reasoning_effort is not None:
        fp["reasoning_effort"] = m.reasoning_effort
    if m.extra:
        fp["extra"] = m.extra
    return fp


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
        raise ConfigError(file, key, msg) from None


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
            found = [_resolve(Path(file), path) for path in given]  # read at preflight
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
    """Validate a parsed YAML document; raise ConfigError on the first problem."""
    cfg = validate_document(TournamentConfig, data, file)
    _check_references(cfg, file)
    return cfg


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
    if d.leader not in ("random", "alternate"):
        pool = d.named_discussants() or (cfg.reviewers or cfg.contestants)
        if d.leader not in pool:
            raise ConfigError(
                file,
                "discussion.leader",
                f"'{d.leader}' is not random, alternate or one of the "
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
# bytes, how deep its collections nest, and how many values it holds once
# every alias is expanded (a "billion laughs" file of 1 KB expands to 10^9).
MAX_YAML_BYTES = 512 * 1024
# The longest file or folder name (bytes) the usual file systems allow.
NAME_MAX = 255
MAX_YAML_DEPTH = 100
MAX_YAML_VALUES = 100_000


class _UniqueKeyLoader(yaml.SafeLoader):
    """A YAML loader that rejects duplicate keys (duplicate model names etc.) and bounds
    nesting depth (the composer recurses once per level)."""

    _depth = 0

    def fetch_flow_collection_start(self, TokenClass: Any) -> None:  # noqa: N803 - PyYAML's name
        # `[[[[...` is refused while scanning: the scanner slows down with every open level.
        if self.flow_level >= MAX_YAML_DEPTH:
            raise yaml.scanner.ScannerError(
                None, None, f"nested deeper than {MAX_YAML_DEPTH} levels", self.get_mark()
            )
        super().fetch_flow_collection_start(TokenClass)

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]
                raise yaml.composer.ComposerError(
                    None, None, f"nested deeper than {MAX_YAML_DEPTH} levels", mark
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _AliasCycle(Exception):
    """An alias inside the value it names (`&a [*a]`): it would expand forever."""

    def __init__(self, mark: Any) -> None:
        super().__init__(mark)
        self.mark = mark


def _expanded_size(root: yaml.Node) -> int:
    """How many values the document holds with every alias expanded (no recursion: the
    node graph is walked once, each shared node's size computed once)."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()  # entered, not yet sized: met again below itself = a cycle
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        if not children_done:
            if id(node) in open_nodes:
                raise _AliasCycle(node.start_mark)
            open_nodes.add(id(node))
        children: list[yaml.Node] = []
        if isinstance(node, yaml.SequenceNode):
            children = list(node.value)
        elif isinstance(node, yaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        if children_done:
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in children)
            continue
        stack.append((node, True))
        stack.extend((c, False) for c in children if id(c) not in sizes)
    return sizes[id(root)]


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode) -> dict[Any, Any]:
    mapping: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node)
        if key in mapping:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key '{key}'", key_node.start_mark
            )
        mapping[key] = loader.construct_object(value_node)
    return mapping


_UniqueKeyLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _construct_mapping,
)


def read_yaml(path: Path) -> Any:
    """Read a YAML file, turning syntax errors into ConfigError."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_YAML_BYTES + 1)
        text = raw.decode("utf-8")
    except FileNotFoundError:
        raise ConfigError(path, "", "file not found") from None
    except OSError as exc:
        raise ConfigError(path, "", f"cannot read: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(path, "", f"not UTF-8 text: {exc.reason} at byte {exc.start}") from None
    if len(raw) > MAX_YAML_BYTES:
        raise ConfigError(
            path,
            "",
            f"larger than {MAX_YAML_BYTES // 1024} KiB, the most a YAML of settings may be",
        )
    loader = _UniqueKeyLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        size = _expanded_size(node)
        if size > MAX_YAML_VALUES:
            raise ConfigError(
                path,
                "",
                f"holds more than {MAX_YAML_VALUES:,} values once its aliases (*name) are "
                "expanded: write the values out, or use fewer nested aliases",
            )
        return loader.construct_document(node)
    except _AliasCycle as exc:
        where = f"line {exc.mark.line + 1}, column {exc.mark.column + 1}"
        raise ConfigError(path, where, "an alias inside the value it names") from None
    except RecursionError:
        raise ConfigError(path, "", f"nested deeper than {MAX_YAML_DEPTH} levels") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "syntax"
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(path, where, f"invalid YAML: {problem}") from None
    finally:
        loader.dispose()


def read_jsonl_objects(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(`line N`, object) for each non-blank line of a JSONL file; ConfigError names the line."""
    try:
        return _read_records(path, allow_array=False)
    except FormatError as exc:
        raise ConfigError(exc.file, exc.where, exc.problem) from None


def load_questions(path: Path, config_file: Path) -> tuple[Question, ...]:
    """Read a questions file in any of the supported shapes (arena.formats)."""
    if not path.is_file():
        raise ConfigError(config_file, "questions", f"questions file not found: {path}")
    try:
        return read_questions(path)
    except FormatError as exc:
        raise ConfigError(exc.file, exc.where, exc.problem) from None


def _resolve(yaml_path: Path, value: str) -> Path:
    p = Path(value)
    return p if p.is_absolute() else yaml_path.parent / p


def load_answer_files(
    cfg: TournamentConfig, yaml_path: Path, questions: tuple[Question, ...]
) -> dict[str, AnswerFile]:
    """The answers of every contestant with `answers: PATH`, matched to the questions."""
    files: dict[str, AnswerFile] = {}
    for name in cfg.contestants:
        model = cfg.models[name]
        if model.answers is None:
            continue
        path = _resolve(yaml_path, model.answers)
        if not path.is_file():
            raise ConfigError(
                yaml_path, f"models.{name}.answers", f"answers file not found: {path}"
            )
        try:
            files[name] = read_answer_file(path, questions, select=model.model or name)
        except FormatError as exc:
            raise ConfigError(exc.file, exc.where, exc.problem) from None
    return files


def with_references(
    cfg: TournamentConfig, yaml_path: Path, questions: tuple[Question, ...]
) -> tuple[Question, ...]:
    """The questions with the `references:` file's answers as their references."""
    if cfg.references is None:
        return questions
    path = _resolve(yaml_path, cfg.references)
    if not path.is_file():
        raise ConfigError(yaml_path, "references", f"references file not found: {path}")
    try:
        found = read_answer_file(path, questions)
    except FormatError as exc:
        raise ConfigError(exc.file, exc.where, exc.problem) from None
    return tuple(
        replace(q, reference=found.answers[q.id]) if q.id in found.answers else q for q in questions
    )


def _check_variants(p: Path, tpath: Path, template: str) -> None:
    """A review template with `{variant: ...}` lines: every variant complete."""
    from arena.review import template_variants  # arena.review imports this module

    try:
        variants = template_variants(template)
    except ValueError as exc:
        raise ConfigError(p, "review.template", f"template {tpath}: {exc}") from None
    for name, body in (variants or {}).items():
        for placeholder in ("{question}", "{answer_a}", "{answer_b}"):
            if placeholder not in body:
                raise ConfigError(
                    p,
                    "review.template",
                    f"template {tpath}: variant '{name}' lacks the placeholder {placeholder}",
                )


def load_tournament(path: str | Path, output: str | Path | None = None) -> Tournament:
    """Load and validate a tournament YAML and everything it refers to."""
    p = Path(path)
    cfg = parse_config(read_yaml(p), p)
    qpath = Path(cfg.questions)
    if not qpath.is_absolute():
        qpath = p.parent / qpath
    questions = with_references(cfg, p, load_questions(qpath, p))
    answer_files = load_answer_files(cfg, p, questions)
    if cfg.review.template in REVIEW_TEMPLATES:
        tpath = REVIEW_TEMPLATES[cfg.review.template]
    elif cfg.review.template:
        tpath = Path(cfg.review.template)
        if not tpath.is_absolute():
            tpath = p.parent / tpath
        if not tpath.is_file():
            raise ConfigError(p, "review.template", f"template file not found: {tpath}")
    else:
        tpath = DEFAULT_REVIEW_TEMPLATE
    try:
        template = tpath.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(p, "review.template", f"cannot read {tpath}: {exc}") from None
    for placeholder in ("{question}", "{answer_a}", "{answer_b}"):
        if placeholder not in template and placeholder.upper() not in template:
            raise ConfigError(
                p, "review.template", f"template {tpath} lacks the placeholder {placeholder}"
            )
    _check_variants(p, tpath, template)
    for token in declared_verdicts(cfg.review.verdicts) or {}:
        if token not in template:
            raise ConfigError(
                p,
                "review.verdicts",
                f"the token {token!r} does not occur in the template {tpath}: a reviewer "
                "would never be asked for it",
            )
    out = Path(output) if output is not None else Path(cfg.output or f"runs/{cfg.name}")
    key = "--out" if output is not None else "output" if cfg.output else "name"
    long = [part for part in out.parts if len(os.fsencode(part)) > NAME_MAX]
    if long:
        fix = "shorten it" if key != "name" else "shorten it or set `output:` (or --out)"
        raise ConfigError(
            p,
            key,
            f"the output directory {str(out)[:80]}... has a name of "
            f"{len(os.fsencode(long[0]))} bytes; a file system allows {NAME_MAX}: {fix}",
        )
    for folder in (out, *out.parents):  # the output directory, or what would hold it
        if folder.exists():
            if not folder.is_dir():
                raise ConfigError(
                    p, key if key != "name" else "output", f"not a directory: {folder}"
                )
            break
    return Tournament(
        path=p,
        config=cfg,
        questions=questions,
        review_template=template,
        review_template_path=tpath,
        output_dir=out,
        answer_files=answer_files,
    )
