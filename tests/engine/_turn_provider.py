"""A provider for the partial-answer tests: it can refuse every second turn, and counts requests."""

from __future__ import annotations

from typing import Any

from arena.providers import Provider
from arena.types import ErrorKind, GenerateRequest, GenerateResult, ProviderError, Usage

# Shared with the test: whether second turns fail, and the prompts' message counts.
STATE: dict[str, Any] = {"fail_second_turn": True, "messages": []}


class TurnTwoFails(Provider):
    """Answers every request (the text names its turn), refusing turn two while told to."""

    async def generate(self, request: GenerateRequest) -> GenerateResult:
        STATE["messages"].append(len(request.messages))
        turn = (len(request.messages) + 1) // 2
        if turn == 2 and STATE["fail_second_turn"]:
            raise ProviderError(ErrorKind.PERMANENT, "second turn refused", status=400)
        if "Verdict" in request.messages[-1].content:  # a review prompt
            return GenerateResult("Fine.\nVerdict: [[A]]", Usage(10, 5))
        return GenerateResult(f"{request.model} answer, turn {turn}", Usage(10, 5))
