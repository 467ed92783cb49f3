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

from typing import TYPE_CHECKING

from arena.config._errors import ConfigError
from arena.lazy import lazy_attributes as _lazy_attributes

if TYPE_CHECKING:
    from arena.config._base import MAX_TOKENS, path_safe_name
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
    from arena.config._stage_sections import (
        StageSection,
        load_stage_sections,
        register_section,
        registered_section,
    )
    from arena.config._templates import GENERAL_VARIANT, template_variants
    from arena.config._tournament import Tournament, model_fingerprint
    from arena.config._validate import check_models, parse_config, validate_document
    from arena.config._yaml import (
        MAX_YAML_BYTES,
        MAX_YAML_DEPTH,
        MAX_YAML_VALUES,
        NAME_MAX,
        read_yaml,
    )
    from arena.formats import Question as Question

# Each public name -> its module, imported on first use (PEP 562): a command that
# only catches ConfigError (the leaderboard, status) loads neither pydantic nor
# the YAML reader; one that loads a tournament loads what `load_tournament` uses.
_LAZY: dict[str, str] = {
    "MAX_TOKENS": "arena.config._base",
    "path_safe_name": "arena.config._base",
    "EXAMPLE_VERDICTS": "arena.config._examples",
    "Example": "arena.config._examples",
    "ExamplePool": "arena.config._examples",
    "ScoredExample": "arena.config._examples",
    "load_example_pool": "arena.config._examples",
    "CONFIGS_DIR": "arena.config._load",
    "DEFAULT_REVIEW_TEMPLATE": "arena.config._load",
    "REVIEW_TEMPLATES": "arena.config._load",
    "load_answer_files": "arena.config._load",
    "load_questions": "arena.config._load",
    "load_tournament": "arena.config._load",
    "read_jsonl_objects": "arena.config._load",
    "with_references": "arena.config._load",
    "FILE_PROVIDER": "arena.config._registry",
    "FREE_TYPES": "arena.config._registry",
    "REPLAY_TYPE": "arena.config._registry",
    "SIM_TYPE": "arena.config._registry",
    "provider_target": "arena.config._registry",
    "provider_type_names": "arena.config._registry",
    "register_provider_type": "arena.config._registry",
    "StageSection": "arena.config._stage_sections",
    "load_stage_sections": "arena.config._stage_sections",
    "register_section": "arena.config._stage_sections",
    "registered_section": "arena.config._stage_sections",
    "REASONING_EFFORTS": "arena.config._schema",
    "REVIEW_TEMPLATE_TEMPERATURES": "arena.config._schema",
    "VERDICT_PRESETS": "arena.config._schema",
    "BatchModeConfig": "arena.config._schema",
    "BatchPriceConfig": "arena.config._schema",
    "LimitsConfig": "arena.config._schema",
    "ModelConfig": "arena.config._schema",
    "ModelReviewConfig": "arena.config._schema",
    "PriceConfig": "arena.config._schema",
    "ProviderConfig": "arena.config._schema",
    "ReasoningEffort": "arena.config._schema",
    "RetryConfig": "arena.config._schema",
    "ReviewConfig": "arena.config._schema",
    "TournamentConfig": "arena.config._schema",
    "declared_verdicts": "arena.config._schema",
    "BATCHEVAL_PROCEDURES": "arena.config._sections",
    "COMPOSITION_ALIASES": "arena.config._sections",
    "AlertsConfig": "arena.config._sections",
    "BatchEvalConfig": "arena.config._sections",
    "CriterionConfig": "arena.config._sections",
    "DiscussionConfig": "arena.config._sections",
    "DiscussionTrigger": "arena.config._sections",
    "ExamplesConfig": "arena.config._sections",
    "PlacementConfig": "arena.config._sections",
    "SamplingConfig": "arena.config._sections",
    "ScaleConfig": "arena.config._sections",
    "SIM_RUN_ONLY": "arena.config._sim",
    "SimParams": "arena.config._sim",
    "GENERAL_VARIANT": "arena.config._templates",
    "template_variants": "arena.config._templates",
    "Tournament": "arena.config._tournament",
    "model_fingerprint": "arena.config._tournament",
    "check_models": "arena.config._validate",
    "parse_config": "arena.config._validate",
    "validate_document": "arena.config._validate",
    "MAX_YAML_BYTES": "arena.config._yaml",
    "MAX_YAML_DEPTH": "arena.config._yaml",
    "MAX_YAML_VALUES": "arena.config._yaml",
    "NAME_MAX": "arena.config._yaml",
    "read_yaml": "arena.config._yaml",
    "Question": "arena.formats",
}

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)

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
    "StageSection",
    "load_stage_sections",
    "register_section",
    "registered_section",
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
