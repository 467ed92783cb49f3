"""How the simulator answers a grading prompt: the answer's simulated quality as a grade."""

from __future__ import annotations

import math

from arena.config import SimParams
from arena.providers.sim import find_signatures
from arena.types import GenerateRequest

PROMPT_HEAD = "Grade this answer from 1 to 5."


def grade_reply(
    seed: int, model: str, params: SimParams, request: GenerateRequest, key: str, attempt: int
) -> str | None:
    """`GRADE: n`, n from the quality the answer's signature carries (None: not a grading)."""
    text = request.messages[-1].content
    if not text.startswith(PROMPT_HEAD):
        return None
    signed = find_signatures(text)
    quality = signed[0].quality if signed else 0.0
    return f"GRADE: {1 + round(4 / (1 + math.exp(-quality)))}"
