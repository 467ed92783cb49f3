"""Tournament YAML: schema, loading and validation.

Everything a run needs is checked here, before any call is made. Errors name
the file, the key path and the problem (`ConfigError`).

One module per job: `_registry` (provider types), `_sim` (the simulator's
settings), `_base`, `_schema` and `_sections` (the pydantic schema),
`_validate` (checks past the schema), `_yaml` (bounded YAML reading),
`_load` (`load_tournament` and the files it reads), `_tournament` (the
`Tournament` view and `model_fingerprint`). Import from `arena.config`.
"""

from __future__ import annotations

from arena.config._base import MAX_TOKENS, path_safe_name
from arena.config._errors import ConfigError
from arena.config._examples import (
    EXAMPLE_VERDICTS,
    Example,
    ExamplePool,
    ScoredExample,
    load_example_pool,
)
from arena.config._load import (
    CONFIGS_DIR,
    DEFAULT_REVIEW_TEMPLATE,
    REVIEW_TEMPLATES,
    load_answer_files,
    load_questions,
    load_tournament,
    read_jsonl_objects,
    with_references,
)
from arena.config._registry import (
    FILE_PROVIDER,
    FREE_TYPES,
    REPLAY_TYPE,
    SIM_TYPE,
    provider_target,
    provider_type_names,
    register_provider_type,
)
from arena.config._schema import (
    REASONING_EFFORTS,
    REVIEW_TEMPLATE_TEMPERATURES,
    VERDICT_PRESETS,
    BatchModeConfig,
    BatchPriceConfig,
    LimitsConfig,
    ModelConfig,
    ModelReviewConfig,
    PriceConfig,
    ProviderConfig,
    ReasoningEffort,
    RetryConfig,
    ReviewConfig,
    TournamentConfig,
    declared_verdicts,
)
from arena.config._sections import (
    BATCHEVAL_PROCEDURES,
    COMPOSITION_ALIASES,
    AlertsConfig,
    BatchEvalConfig,
    CriterionConfig,
    DiscussionConfig,
    DiscussionTrigger,
    ExamplesConfig,
    PlacementConfig,
    SamplingConfig,
    ScaleConfig,
)
from arena.config._sim import SIM_RUN_ONLY, SimParams
from arena.config._templates import GENERAL_VARIANT, template_variants
from arena.config._tournament import Tournament, model_fingerprint
from arena.config._validate import check_models, parse_config, validate_document
from arena.config._yaml import MAX_YAML_BYTES, MAX_YAML_DEPTH, MAX_YAML_VALUES, NAME_MAX, read_yaml
from arena.formats import Question as Question  # re-exported: arena.config.Question

__all__ = [
    "GENERAL_VARIANT",
    "template_variants",
    "BATCHEVAL_PROCEDURES",
    "COMPOSITION_ALIASES",
    "REVIEW_TEMPLATE_TEMPERATURES",
    "VERDICT_PRESETS",
    "declared_verdicts",
    "BatchPriceConfig",
    "AlertsConfig",
    "BatchEvalConfig",
    "CONFIGS_DIR",
    "ConfigError",
    "CriterionConfig",
    "DEFAULT_REVIEW_TEMPLATE",
    "DiscussionConfig",
    "DiscussionTrigger",
    "EXAMPLE_VERDICTS",
    "Example",
    "ExamplePool",
    "ExamplesConfig",
    "ScoredExample",
    "load_example_pool",
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
    "Question",
    "REVIEW_TEMPLATES",
    "ProviderConfig",
    "BatchModeConfig",
    "REASONING_EFFORTS",
    "ReasoningEffort",
    "RetryConfig",
    "ReviewConfig",
    "SIM_RUN_ONLY",
    "SIM_TYPE",
    "SamplingConfig",
    "PlacementConfig",
    "ScaleConfig",
    "SimParams",
    "Tournament",
    "TournamentConfig",
    "check_models",
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
