"""The public surface of arena.batcheval is a contract."""

from __future__ import annotations

import arena.batcheval as batcheval


def test_public_names() -> None:
    assert set(batcheval.__all__) >= {
        "parse_scores",
        "compose_round",
        "render_prompt",
        "load_template",
        "batcheval_summary",
        "BatchEvalConfig",
        "CriterionConfig",
        "Sample",
        "load_samples",
        "run_standalone",
        "batcheval_planner",
        "BatchEvalPlanner",
        "bootstrap_ci",
        "correlations",
    }
    for name in batcheval.__all__:
        assert hasattr(batcheval, name), name
    assert sorted(batcheval.__all__) == sorted(set(batcheval.__all__))


def test_table_is_registered_with_the_store() -> None:
    from arena.store import TABLES

    assert TABLES[batcheval.TABLE] is batcheval.TABLE_SCHEMA
    assert batcheval.TABLE_SCHEMA.names[0] == "id"
