"""BatchEval: per-answer quality scores, many answers per prompt, over several rounds.

See docs/batcheval.md for the YAML section and the `arena batcheval` command,
and ../shared/ALGORITHMS.md ("BatchEval") for the method.
"""

from arena.batcheval._aggregate import (
    bootstrap_ci,
    correlations,
    mean_and_spread,
    running_means,
    win_rates,
)
from arena.batcheval._compose import STRATEGIES, Strategy, compose_round
from arena.batcheval._parse import parse_scores
from arena.batcheval._prompt import (
    DEFAULT_TEMPLATES,
    REQUIRED_PLACEHOLDERS,
    load_template,
    render_prompt,
    score_format,
)
from arena.batcheval._samples import Sample, load_samples
from arena.batcheval._schema import SCORES_FILE, TABLE, TABLE_SCHEMA
from arena.batcheval._scores import SCORES_SCHEMA, read_scores, scores_frame, write_scores
from arena.batcheval._stage import (
    Batch,
    BatchEvalPlanner,
    BatchEvalStage,
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
from arena.batcheval._summary import batcheval_summary, contestant_scores
from arena.batcheval._tournament import (
    TournamentBatchEval,
    batcheval_preflight,
    batcheval_stage,
    tournament_samples,
)
from arena.config import BatchEvalConfig, CriterionConfig, ScaleConfig

__all__ = [
    "DEFAULT_TEMPLATES",
    "REQUIRED_PLACEHOLDERS",
    "SCORES_FILE",
    "SCORES_SCHEMA",
    "STRATEGIES",
    "TABLE",
    "TABLE_SCHEMA",
    "Batch",
    "BatchEvalConfig",
    "BatchEvalFileConfig",
    "BatchEvalPlanner",
    "BatchEvalSetup",
    "BatchEvalStage",
    "CriterionConfig",
    "Sample",
    "SampleScore",
    "ScaleConfig",
    "Scorer",
    "StageSummary",
    "Strategy",
    "TournamentBatchEval",
    "batch_id",
    "batcheval_preflight",
    "batcheval_stage",
    "batcheval_summary",
    "bootstrap_ci",
    "compose_round",
    "contestant_scores",
    "correlations",
    "load_samples",
    "load_setup",
    "load_template",
    "mean_and_spread",
    "parse_scores",
    "preflight",
    "read_scores",
    "render_prompt",
    "run_standalone",
    "running_means",
    "score_format",
    "scores_frame",
    "tournament_samples",
    "win_rates",
    "write_scores",
]
