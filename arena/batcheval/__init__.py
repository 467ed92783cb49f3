"""BatchEval: per-answer quality scores, many answers per prompt, over several rounds.

See docs/batcheval.md for the method (the paper's protocol by default, arena's
variants as options), the YAML section and the `arena batcheval` command.
Importing this package registers the `batcheval` log table with the store; its
other names load on first use, from their modules (the stage itself is
`arena.batcheval._stage`, which `arena.stages` imports without the rest).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.batcheval._schema import SCORES_FILE, TABLE, TABLE_SCHEMA
from arena.lazy import lazy_attributes as _lazy_attributes

if TYPE_CHECKING:
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
    from arena.batcheval._diagnostics import batch_diagnostics, logged_batches, score_entropy
    from arena.batcheval._human import (
        ALL_SCORERS,
        HumanScores,
        human_agreement,
        human_by_round,
        load_human_scores,
    )
    from arena.batcheval._parse import one_generation, parse_scores
    from arena.batcheval._planner import (
        Batch,
        BatchEvalPlanner,
        SampleScore,
        Scorer,
        StageSummary,
        batch_id,
    )
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
    from arena.batcheval._scores import SCORES_SCHEMA, read_scores, scores_frame, write_scores
    from arena.batcheval._stage import BATCHEVAL_STAGE, BatchEvalCalls, batch_tokens
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
        TournamentBatchEvalPlanner,
        batcheval_planner,
        batcheval_preflight,
        tournament_samples,
    )
    from arena.config import BatchEvalConfig, CriterionConfig, ScaleConfig

# Each public name -> its module, imported on first use (PEP 562): a command that
# needs the stage's hooks (arena.stages) does not load the whole package.
_LAZY: dict[str, str] = {
    "bootstrap_ci": "arena.batcheval._aggregate",
    "correlations": "arena.batcheval._aggregate",
    "mean_and_spread": "arena.batcheval._aggregate",
    "running_means": "arena.batcheval._aggregate",
    "win_rates": "arena.batcheval._aggregate",
    "COMPOSITIONS": "arena.batcheval._compose",
    "COMPOSITION_ALIASES": "arena.batcheval._compose",
    "Composition": "arena.batcheval._compose",
    "STRATEGIES": "arena.batcheval._compose",
    "Strategy": "arena.batcheval._compose",
    "compose_round": "arena.batcheval._compose",
    "ordering_scores": "arena.batcheval._compose",
    "BATCHEVAL_STAGE": "arena.batcheval._stage",
    "BatchEvalCalls": "arena.batcheval._stage",
    "batch_tokens": "arena.batcheval._stage",
    "batch_diagnostics": "arena.batcheval._diagnostics",
    "logged_batches": "arena.batcheval._diagnostics",
    "score_entropy": "arena.batcheval._diagnostics",
    "ALL_SCORERS": "arena.batcheval._human",
    "HumanScores": "arena.batcheval._human",
    "human_agreement": "arena.batcheval._human",
    "human_by_round": "arena.batcheval._human",
    "load_human_scores": "arena.batcheval._human",
    "one_generation": "arena.batcheval._parse",
    "parse_scores": "arena.batcheval._parse",
    "DEFAULT_TEMPLATES": "arena.batcheval._prompt",
    "PROCEDURE_PLACEHOLDERS": "arena.batcheval._prompt",
    "REQUIRED_PLACEHOLDERS": "arena.batcheval._prompt",
    "integer_score_format": "arena.batcheval._prompt",
    "integer_template": "arena.batcheval._prompt",
    "load_template": "arena.batcheval._prompt",
    "render_prompt": "arena.batcheval._prompt",
    "sample_format": "arena.batcheval._prompt",
    "score_format": "arena.batcheval._prompt",
    "Sample": "arena.batcheval._samples",
    "load_samples": "arena.batcheval._samples",
    "SCORES_SCHEMA": "arena.batcheval._scores",
    "read_scores": "arena.batcheval._scores",
    "scores_frame": "arena.batcheval._scores",
    "write_scores": "arena.batcheval._scores",
    "Batch": "arena.batcheval._planner",
    "BatchEvalPlanner": "arena.batcheval._planner",
    "SampleScore": "arena.batcheval._planner",
    "Scorer": "arena.batcheval._planner",
    "StageSummary": "arena.batcheval._planner",
    "batch_id": "arena.batcheval._planner",
    "BatchEvalFileConfig": "arena.batcheval._standalone",
    "BatchEvalSetup": "arena.batcheval._standalone",
    "load_setup": "arena.batcheval._standalone",
    "preflight": "arena.batcheval._standalone",
    "run_standalone": "arena.batcheval._standalone",
    "BATCHEVAL_SCHEMA": "arena.batcheval._states",
    "batches_outside": "arena.batcheval._states",
    "batcheval_states": "arena.batcheval._states",
    "batcheval_summary": "arena.batcheval._summary",
    "contestant_scores": "arena.batcheval._summary",
    "run_human_scores": "arena.batcheval._summary",
    "TournamentBatchEvalPlanner": "arena.batcheval._tournament",
    "batcheval_preflight": "arena.batcheval._tournament",
    "batcheval_planner": "arena.batcheval._tournament",
    "tournament_samples": "arena.batcheval._tournament",
    "BatchEvalConfig": "arena.config",
    "CriterionConfig": "arena.config",
    "ScaleConfig": "arena.config",
}


__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)


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
    "BatchEvalCalls",
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
    "TournamentBatchEvalPlanner",
    "batch_diagnostics",
    "batch_id",
    "batch_tokens",
    "batcheval_preflight",
    "batcheval_states",
    "batches_outside",
    "batcheval_planner",
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
    "logged_batches",
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
    "score_entropy",
    "score_format",
    "scores_frame",
    "tournament_samples",
    "win_rates",
    "write_scores",
]
