"""The simulator's settings of a model (`sim:` blocks)."""

from __future__ import annotations

from pydantic import Field

from arena.config._base import MAX_ANSWER_WORDS, MAX_SECONDS, _Strict


class SimParams(_Strict):
    """Simulation parameters of a sim model (as contestant and as reviewer)."""

    skill: float = 0.0
    answer_noise: float = Field(default=0.5, ge=0)
    style: str | None = None
    answer_words: int = Field(default=60, ge=1, le=MAX_ANSWER_WORDS)
    # Verbosity varies by answer: words = answer_words * exp(spread * N(0, 1)).
    answer_words_spread: float = Field(default=0.0, ge=0, le=2)
    latency_mean: float = Field(default=0.0, ge=0, le=MAX_SECONDS)
    latency_sd: float = Field(default=0.0, ge=0, le=MAX_SECONDS)
    failure_rate: float = Field(default=0.0, ge=0, le=1)
    judge_noise: float = Field(default=0.5, ge=0)
    position_bias: float = 0.0
    self_preference: float = 0.0
    # As a reviewer: added to the perceived gap in favour of the longer answer,
    # per unit of relative length difference (L_A - L_B) / mean(L_A, L_B).
    length_bias: float = 0.0
    # As a reviewer: added in favour of an answer by a model with the same `style`
    # marker, itself included (a bloc of models that vote for each other); needs `style`.
    ally_preference: float = 0.0
    tie_band: float = Field(default=0.1, ge=0)
    malformed_rate: float = Field(default=0.0, ge=0, le=1)
    # BatchEval scoring (arena/providers/_sim_batcheval.py): noise of seeing one
    # sample's quality, the per-call drift of the absolute scale, and the share
    # of a score that is relative to the batch (weak batch inflates, strong deflates).
    score_noise: float = Field(default=0.3, ge=0)
    score_drift: float = Field(default=0.5, ge=0)
    batch_context: float = Field(default=0.4, ge=0, le=1)
    # PeerDiscussion (arena/providers/_sim_discuss.py): the chance to hold an
    # opinion whatever the argument, and how much clearer a discussion's look at
    # the answers is than one review's (noise judge_noise / (1 + insight)).
    stubbornness: float = Field(default=0.5, ge=0, le=1)
    insight: float = Field(default=1.0, ge=0)
    # Built-in gains the benchmarks switch off to show figures without them:
    # a discussant's fresh look free of position bias and sharper by `insight`,
    # and a batch's spread anchoring the scale (a lone sample drifts most).
    fresh_look: bool = True
    batch_anchoring: bool = True
    # The `examples:` section's gain, off unless set: a review or BatchEval prompt
    # that shows human-judged examples is judged with its noise (judge_noise;
    # score_noise and score_drift) divided by 1 + example_gain. A knob for
    # plumbing checks (benchmarks/bench_examples.py), not a model of real judges.
    example_gain: float = Field(default=0.0, ge=0)


# Sim settings that do not change what a call returns: not part of any id.
SIM_RUN_ONLY = frozenset({"latency_mean", "latency_sd", "failure_rate"})
# Sim parameters added after logs were first written (default 0: no effect).
_LATER_SIM_PARAMS = frozenset(
    {"answer_words_spread", "length_bias", "example_gain", "ally_preference"}
)
