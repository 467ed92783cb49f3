"""A model's system prompt, reasoning effort and extra fields join every request of it."""

from __future__ import annotations

from arena.config import ModelConfig
from arena.providers._settings import with_model_settings
from arena.types import GenerateRequest, Message

MODELS = {
    "m": ModelConfig(
        provider="p", system="Be terse.", reasoning_effort="low", extra={"top_k": 20, "x": 1}
    ),
    "plain": ModelConfig(provider="p"),
}


def test_settings_join_the_request() -> None:
    req = GenerateRequest("m", (Message("user", "hi"),), system="You lead.", extra={"x": 2})
    out = with_model_settings(req, MODELS)
    assert out.system == "Be terse.\n\nYou lead."  # the model's first, then the stage's
    assert out.reasoning_effort == "low"
    assert out.extra == {"top_k": 20, "x": 2}  # the request's own fields win
    assert with_model_settings(GenerateRequest("m", ()), MODELS).system == "Be terse."


def test_models_without_settings_and_unknown_ids_pass_unchanged() -> None:
    for model in ("plain", "other"):
        req = GenerateRequest(model, (Message("user", "hi"),), reasoning_effort="high")
        assert with_model_settings(req, MODELS) is req
