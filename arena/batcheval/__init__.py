"""BatchEval: per-answer quality scores, many answers per prompt, over several rounds.

See docs/batcheval.md for the method (the paper's protocol by default, arena's
variants as options), the YAML section and the `arena batcheval` command.
"""

from arena.batcheval._aggregate import (
    bootstrap_ci,
    correlations,
    mean_and_spread,
    running_means,
    win_rates,
)
from arena.batcheval._compose import (
    COMPOSITION_ALIASES,
    COMPOSITIONS,
    STRATEGIES,
    Composition,
    Strategy,
    compose_round,
    ordering_scores,
)
from arena.batcheval._hooks import BATCHEVAL_STAGE, BatchEvalHooks, batch_tokens
from arena.batcheval._human import (
    ALL_SCORERS,
    HumanScores,
    human_agreement,
    human_by_round,
    load_human_scores,
)
from arena.batcheval._parse import one_generation, parse_scores
from arena.batcheval._prompt import (
    DEFAULT_TEMPLATES,
    PROCEDURE_PLACEHOLDERS,
    REQUIRED_PLACEHOLDERS,
    integer_score_format,
    integer_template,
    load_template,
    render_prompt,
    sample_format,
    score_format,
)
from arena.batcheval._samples import Sample, load_samples
from arena.batcheval._schema import SCORES_FILE, TABLE, TABLE_SCHEMA
from arena.batcheval._scores import SCORES_SCHEMA, read_scores, scores_frame, write_scores
from arena.batcheval._stage import (
    Batch,
    BatchEvalPlanner,
    SampleScore,
    Scorer,
    StageSummary,
    batch_id,
)
from arena.batcheval._standalone import (
    BatchEvalFileConfig,
    BatchEvalSetup,
    load_setup,
    preflight,
    run_standalone,
)
from arena.batcheval._states import BATCHEVAL_SCHEMA, batches_outside, batcheval_states
from arena.batcheval._summary import batcheval_summary, contestant_scores, run_human_scores
from arena.batcheval._tournament import (
    TournamentBatchEval,
    batcheval_preflight,
    batcheval_stage,
    tournament_samples,
)
from arena.config import BatchEvalConfig, CriterionConfig, ScaleConfig

__all__ = [
    "ALL_SCORERS",
    "BATCHEVAL_SCHEMA",
    "BATCHEVAL_STAGE",
    "COMPOSITIONS",
    "COMPOSITION_ALIASES",
    "DEFAULT_TEMPLATES",
    "PROCEDURE_PLACEHOLDERS",
    "REQUIRED_PLACEHOLDERS",
    "SCORES_FILE",
    "SCORES_SCHEMA",
    "STRATEGIES",
    "TABLE",
    "TABLE_SCHEMA",
    "Batch",
    "BatchEvalConfig",
    "BatchEvalFileConfig",
    "BatchEvalHooks",
    "BatchEvalPlanner",
    "BatchEvalSetup",
    "Composition",
    "CriterionConfig",
    "HumanScores",
    "Sample",
    "SampleScore",
    "ScaleConfig",
    "Scorer",
    "StageSummary",
    "Strategy",
    "TournamentBatchEval",
    "batch_id",
    "batch_tokens",
    "batcheval_preflight",
    "batcheval_states",
    "batches_outside",
    "batcheval_stage",
    "batcheval_summary",
    "bootstrap_ci",
    "compose_round",
    "contestant_scores",
    "correlations",
    "human_agreement",
    "human_by_round",
    "integer_score_format",
    "integer_template",
    "load_samples",
    "load_human_scores",
    "load_setup",
    "load_template",
    "mean_and_spread",
    "one_generation",
    "ordering_scores",
    "parse_scores",
    "preflight",
    "read_scores",
    "render_prompt",
    "run_standalone",
    "run_human_scores",
    "running_means",
    "sample_format",
    "score_format",
    "scores_frame",
    "tournament_samples",
    "win_rates",
    "write_scores",
]
