"""A model's own request settings (tournament YAML), applied by the SDK providers.

Every stage builds its requests with the provider-side model id; the provider
adds that model's `system` prompt (before any system text the stage sends,
e.g. a discussion role), its `reasoning_effort` (unless the request has one)
and its `extra` fields (the request's own win). So answers, reviews,
discussions and BatchEval calls all carry them, whoever builds the request.
`arena.config` refuses two models of one provider entry that share a model
id but not these settings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from arena.config import ModelConfig
from arena.types import GenerateRequest


def with_model_settings(
    request: GenerateRequest, models: Mapping[str, ModelConfig]
) -> GenerateRequest:
    """`request` with its model's system prompt, reasoning effort and extra fields."""
    m = models.get(request.model)
    if m is None or (m.system is None and m.reasoning_effort is None and not m.extra):
        return request
    system = "\n\n".join(s for s in (m.system, request.system) if s) or None
    return replace(
        request,
        system=system,
        reasoning_effort=request.reasoning_effort or m.reasoning_effort,
        extra={**m.extra, **request.extra},
    )
