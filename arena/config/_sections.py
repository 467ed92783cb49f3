"""The optional sections of a tournament: `batcheval:`, `discussion:`, `sampling:`, `alerts:`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, StrictFloat, StrictInt, ValidationInfo, field_validator, model_validator

from arena.config._base import MAX_ROUNDS, MAX_TOKENS, _Strict
from arena.config._example_ids import check_example_ids


class ScaleConfig(_Strict):
    """A BatchEval score scale: decimals from `low` (worst) to `high` (best)."""

    low: float = 1.0
    high: float = 5.0

    @model_validator(mode="after")
    def _ordered(self) -> ScaleConfig:
        if self.low >= self.high:
            raise ValueError(f"low must be below high (got low={self.low:g}, high={self.high:g})")
        return self


class CriterionConfig(_Strict):
    """One BatchEval criterion: what is judged, on which scale, with anchor texts."""

    name: str = Field(min_length=1)
    description: str
    scale: ScaleConfig = Field(default_factory=ScaleConfig)
    anchors: dict[float, str] = Field(default_factory=dict)

    @field_validator("description")
    @classmethod
    def _description_not_empty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("a criterion needs a description")
        return v

    @model_validator(mode="after")
    def _anchors_on_scale(self) -> CriterionConfig:
        for point in self.anchors:
            if not self.scale.low <= point <= self.scale.high:
                raise ValueError(
                    f"anchor {point:g} is outside the scale "
                    f"[{self.scale.low:g}, {self.scale.high:g}]"
                )
        return self


# The earlier names of the compositions: `paper` named the released code's
# rule, although the paper's own Algorithm 1 orders by all rounds' scores.
COMPOSITION_ALIASES = {"paper": "previous-round", "arena": "running-mean"}
# `stages:` and the `procedure:` it names.
BATCHEVAL_PROCEDURES: dict[Literal[1, 2, 3], Literal["one-stage", "two-stage", "three-stage"]] = {
    1: "one-stage",
    2: "two-stage",
    3: "three-stage",
}


class BatchEvalConfig(_Strict):
    """The `batcheval:` section: per-answer scores, many answers per prompt."""

    scorers: list[str] = Field(min_length=1)
    criteria: list[CriterionConfig] = Field(min_length=1)
    batch_size: int = Field(default=10, ge=1)
    rounds: int = Field(default=5, ge=1, le=MAX_ROUNDS)
    temperature: float = Field(default=0.2, ge=0)
    max_tokens: int = Field(default=2048, ge=1, le=MAX_TOKENS)
    strategy: Literal["heterogeneous", "random", "homogeneous"] = "heterogeneous"
    # previous-round: the released code's batching (the previous round's scores
    # order the samples, n mod B set aside as a short last batch); running-mean:
    # the mean over all rounds so far orders them (the paper's Algorithm 1),
    # even batch sizes. `paper` and `arena`, the earlier names, are aliases.
    composition: Literal["previous-round", "running-mean"] = "previous-round"
    # stages: 1 one-stage, 2 two-stage (analyse all, then score all), 3 three-stage
    # (analyse all, compare them in a ranking, then score all); `procedure` is
    # the earlier spelling of the same choice.
    stages: Literal[1, 2, 3] = 2
    procedure: Literal["one-stage", "two-stage", "three-stage"] = "two-stage"
    scores: Literal["decimal", "integer"] = "decimal"
    template: str | None = None  # default: configs/prompts/batcheval_<procedure>.txt

    @field_validator("composition", mode="before")
    @classmethod
    def _composition_alias(cls, v: object) -> object:
        return COMPOSITION_ALIASES.get(v, v) if isinstance(v, str) else v

    @model_validator(mode="after")
    def _stages_and_procedure(self) -> BatchEvalConfig:
        named = BATCHEVAL_PROCEDURES[self.stages]
        if "stages" in self.model_fields_set:
            if "procedure" in self.model_fields_set and self.procedure != named:
                raise ValueError(
                    f"stages: {self.stages} and procedure: {self.procedure} disagree "
                    "(give one of them)"
                )
            self.procedure = named
        else:
            self.stages = next(k for k, v in BATCHEVAL_PROCEDURES.items() if v == self.procedure)
        return self

    @model_validator(mode="after")
    def _integer_scale(self) -> BatchEvalConfig:
        if self.scores != "integer":
            return self
        for c in self.criteria:
            if not (float(c.scale.low).is_integer() and float(c.scale.high).is_integer()):
                raise ValueError(
                    f"scores: integer needs whole-number scale ends; criterion '{c.name}' "
                    f"has [{c.scale.low:g}, {c.scale.high:g}]"
                )
        return self

    @model_validator(mode="after")
    def _unique_names(self) -> BatchEvalConfig:
        names = [c.name for c in self.criteria]
        for name in names:
            if names.count(name) > 1:
                raise ValueError(f"duplicate criterion name '{name}'")
        for scorer in self.scorers:
            if self.scorers.count(scorer) > 1:
                raise ValueError(f"duplicate scorer '{scorer}'")
        return self


# --- PeerDiscussion (docs/discussion.md): the optional `discussion:` section --

DiscussionTrigger = Literal["tie", "disagreement", "inconsistent"]


def _default_triggers() -> list[DiscussionTrigger]:
    return ["tie", "inconsistent"]


class DiscussionConfig(_Strict):
    """The `discussion:` section: two reviewers discuss disputed battles to a shared verdict."""

    trigger: list[DiscussionTrigger] = Field(default_factory=_default_triggers, min_length=1)
    tie_margin: float = Field(default=0.0, ge=0, lt=1)  # |mean score| <= margin is a tie
    disagreement: float = Field(default=0.3, gt=0, le=1)  # share off the most common verdict
    # inconsistent: more than this share of the reviewers contradict themselves
    # under position swap (0: any one reviewer is enough).
    inconsistent_share: float = Field(default=0.0, ge=0, lt=1)
    discussants: str | list[str] | dict[str, list[str]] = "top2"
    # disputed: the battles the triggers select; all: every battle (the paper's protocol)
    battles: Literal["disputed", "all"] = "disputed"
    leader: str = "random"  # random | alternate | both | a model name
    max_turns: int = Field(default=4, ge=1, le=MAX_ROUNDS)
    stop_on_agreement: bool = False  # the paper always runs max_turns turns
    allow_contestants: bool = False  # may a battle's contestants discuss it?
    temperature: float = Field(default=0.2, ge=0)
    temperatures: dict[str, Annotated[float, Field(ge=0)]] = Field(default_factory=dict)
    max_tokens: int = Field(default=1024, ge=1, le=MAX_TOKENS)
    outcome: Literal["replace", "add"] = "replace"
    weight: int = Field(default=1, ge=1)  # `add`: the verdict counts as this many reviews
    template: str | None = None  # default: configs/prompts/discussion.txt
    role_template: str | None = None  # default: configs/prompts/discussion_role.txt

    @field_validator("trigger", mode="before")
    @classmethod
    def _one_or_many(cls, v: Any) -> Any:
        return [v] if isinstance(v, str) else v

    @field_validator("discussants")
    @classmethod
    def _discussants_shape(
        cls, v: str | list[str] | dict[str, list[str]]
    ) -> str | list[str] | dict[str, list[str]]:
        if isinstance(v, str):
            if v != "top2":
                raise ValueError(
                    f"unknown discussant '{v}' (use two model names, top2 "
                    "or {all-pairs: [names]})"
                )
        elif isinstance(v, list):
            if len(v) != 2 or v[0] == v[1]:
                raise ValueError("name exactly two different models")
        elif list(v) != ["all-pairs"]:
            raise ValueError("the only mapping form is {all-pairs: [names]}")
        elif len(v["all-pairs"]) < 2 or len(set(v["all-pairs"])) != len(v["all-pairs"]):
            raise ValueError("all-pairs needs at least two different model names")
        return v

    def named_discussants(self) -> list[str]:
        """The model names the section lists (none for top2)."""
        if isinstance(self.discussants, str):
            return []
        if isinstance(self.discussants, list):
            return list(self.discussants)
        return list(self.discussants["all-pairs"])


# --- Few-shot scored examples (the DSTC11 paper): the optional `examples:` section --


ExamplesTarget = Literal["reviews", "batcheval"]


def _default_targets() -> list[ExamplesTarget]:
    return ["reviews"]


class ExamplesConfig(_Strict):
    """The `examples:` section: k human-judged items of a pool shown in each review or
    BatchEval prompt (`apply_to`)."""

    # JSONL. Review items: id, question_id, question, answer_a, answer_b, verdict
    # (A | B | tie); BatchEval items: id, question_id (optional), context, text,
    # criterion, score. One pool may hold both kinds.
    pool: str
    k: int = Field(default=2, ge=1)
    # seeded: the first k of one seeded random order; fixed: the items `ids` lists
    # (hand-picked); retrieved: the k nearest by TF-IDF (arena/config/_examples.py)
    select: Literal["seeded", "fixed", "retrieved"] = "seeded"
    ids: list[str] | None = Field(default=None, min_length=1)
    exclude: Literal["same-question", "fold"] = "same-question"
    folds: int = Field(default=5, ge=2)  # exclude: fold, the number of folds
    apply_to: list[ExamplesTarget] = Field(default_factory=_default_targets, min_length=1)

    @model_validator(mode="after")
    def _ids_fit_select(self) -> ExamplesConfig:
        check_example_ids(self.select, self.ids, self.k, "k" in self.model_fields_set)
        return self


class SamplingConfig(_Strict):
    """Which review calls of the full plan a run makes (docs/sampling.md)."""

    strategy: Literal["full", "uniform", "adaptive", "baseline"] = "full"
    # A float in (0, 1]: that share of the full plan's review calls; an
    # integer: that number of review calls. Required for uniform and adaptive.
    budget: StrictInt | StrictFloat | None = Field(default=None, validate_default=True)
    # Baseline only: the contestant every other contestant meets (and no one else).
    baseline: str | None = Field(default=None, min_length=1)
    # Adaptive only: rounds after the seed round, the seed round's share of the
    # budget, and whether to stop once every adjacent pair is separated.
    rounds: int = Field(default=5, ge=1, le=100)
    seed_share: float = Field(default=0.3, gt=0, le=1)
    stop_when_separated: bool = False
    # Sampled only: `cache` places each round's units so that a reviewer's
    # units sharing a contestant land on the same question (shared cached
    # prefixes); the units per pair are unchanged. `none` keeps the default.
    align: Literal["none", "cache"] = "none"
    # Adaptive only: how the refitted rounds choose a pair's reviewers: by their
    # measured reliability, or by reliability per dollar (what their reviews have
    # cost so far), which sends most units to judges that are cheap and reliable.
    reviewers: Literal["reliability", "per_dollar"] = "reliability"

    @field_validator("budget")
    @classmethod
    def _budget_fits_strategy(
        cls, budget: int | float | None, info: ValidationInfo
    ) -> int | float | None:
        strategy = info.data.get("strategy", "full")
        if strategy in ("full", "baseline"):
            if budget is not None:
                raise ValueError("only a sampled strategy (uniform, adaptive) takes a budget")
            return budget
        if budget is None:
            raise ValueError(f"strategy {strategy} needs a budget (a share or a number of calls)")
        if isinstance(budget, float):
            if not (0.0 < budget <= 1.0):
                raise ValueError(
                    f"a share must be in (0, 1], got {budget} "
                    "(write an integer for a number of review calls)"
                )
        elif budget < 2:
            raise ValueError(f"a number of review calls must be at least 2, got {budget}")
        return budget

    @model_validator(mode="after")
    def _baseline_fits_strategy(self) -> SamplingConfig:
        if self.strategy == "baseline" and self.baseline is None:
            raise ValueError("strategy baseline needs `baseline: MODEL` (a contestant)")
        if self.strategy != "baseline" and self.baseline is not None:
            raise ValueError("only strategy baseline takes a baseline model")
        if self.align != "none" and self.strategy not in ("uniform", "adaptive"):
            raise ValueError("only a sampled strategy (uniform, adaptive) takes align")
        if self.reviewers != "reliability" and self.strategy != "adaptive":
            raise ValueError("only the adaptive strategy chooses reviewers (reviewers: per_dollar)")
        return self


class PlacementConfig(_Strict):
    """`placement:`: how a run places a contestant new to a ranked tournament
    (docs/sampling.md). `search` meets its likely neighbours in the last
    ranking first and stops when its rank interval is as narrow as theirs or
    the budget is spent; `all-pairs` meets every contestant."""

    strategy: Literal["search", "all-pairs"] = "search"
    # A float in (0, 1]: that share of the review calls all pairs would cost
    # for the new model; an integer: that number of review calls.
    budget: StrictInt | StrictFloat = 0.3
    # Review calls per opponent probed (at least one unit: two calls); None: one
    # unit per question.
    per_opponent: int | None = Field(default=None, ge=2)

    @field_validator("budget")
    @classmethod
    def _budget_positive(cls, budget: int | float) -> int | float:
        if isinstance(budget, float):
            if not (0.0 < budget <= 1.0):
                raise ValueError(
                    f"a share must be in (0, 1], got {budget} "
                    "(write an integer for a number of review calls)"
                )
        elif budget < 2:
            raise ValueError(f"a number of review calls must be at least 2, got {budget}")
        return budget


class AlertsConfig(_Strict):
    """`alerts:`: where the status record of a run goes when it needs attention
    (docs/nightly.md). Alerts fire on exit 1, 2 and 74, on a budget stop (4),
    on the Nth partial night in a row (3), once when a run goes on longer than
    `after_seconds`, and on the first success after an alert."""

    webhook: str | None = Field(default=None, pattern=r"^https?://\S+$")  # POST of the record
    command: str | None = Field(default=None, min_length=1)  # run with the record on stdin
    after_partial_nights: int = Field(default=3, ge=1)
    timeout: float = Field(default=10.0, gt=0, le=300, allow_inf_nan=False)
    # alert once when a run goes on longer than this (a hung or slow night)
    after_seconds: float | None = Field(default=None, gt=0, allow_inf_nan=False)

    @field_validator("command")
    @classmethod
    def _command_splits(cls, v: str | None) -> str | None:
        """The command is split as a shell would (no shell runs it): it must split."""
        if v is None:
            return v
        import shlex

        try:
            words = shlex.split(v)
        except ValueError as exc:
            raise ValueError(f"cannot be split into words as a shell would: {exc}") from None
        if not words:
            raise ValueError("names no program")
        return v
