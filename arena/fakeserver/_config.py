"""The fake server's YAML: accepted keys, per-key limits, sim models, faults."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from arena.config import ConfigError, SimParams, read_yaml

# Fault kinds in the order a request's single draw walks through them.
FAULT_KINDS = (
    "error_500",
    "error_503",
    "error_529",
    "rate_limit",
    "drop",
    "hang",
    "malformed",
    "empty",
    "slow",
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class FaultConfig(_Strict):
    """Shares of requests that meet each fault (one draw per request, sum <= 1)."""

    error_500: float = Field(default=0.0, ge=0, le=1)
    error_503: float = Field(default=0.0, ge=0, le=1)
    error_529: float = Field(default=0.0, ge=0, le=1)
    rate_limit: float = Field(default=0.0, ge=0, le=1)  # a 429 whatever the limits say
    retry_after: float = Field(default=1.0, ge=0)  # seconds hinted by an injected 429
    drop: float = Field(default=0.0, ge=0, le=1)  # connection closed without a response
    hang: float = Field(default=0.0, ge=0, le=1)  # never answers (client timeout)
    malformed: float = Field(default=0.0, ge=0, le=1)  # 200 with a body that is not JSON
    empty: float = Field(default=0.0, ge=0, le=1)  # 200 with empty content
    slow: float = Field(default=0.0, ge=0, le=1)  # answers after slow_seconds
    slow_seconds: float = Field(default=2.0, ge=0)
    # A request (same key, model and body) meets a fault at most this many
    # times; later attempts succeed. None: every attempt draws afresh.
    recover_after: int | None = Field(default=None, ge=0)

    @model_validator(mode="after")
    def _shares_fit(self) -> FaultConfig:
        total = sum(getattr(self, k) for k in FAULT_KINDS)
        if total > 1.0 + 1e-9:
            raise ValueError(f"fault shares add up to {total:g}, more than 1")
        return self

    def share(self, kind: str) -> float:
        """The share of requests meeting one fault kind."""
        return float(getattr(self, kind))


class ServerLimits(_Strict):
    """Limits the server enforces per API key (token buckets)."""

    rpm: float | None = Field(default=None, gt=0)
    tpm: float | None = Field(default=None, gt=0)
    # Bucket capacity in seconds of the rate: how large a burst is accepted.
    burst_seconds: float = Field(default=1.0, gt=0)


class CacheConfig(_Strict):
    """The prompt cache each API emulates (arena/fakeserver/_cache.py)."""

    enabled: bool = True
    ttl_seconds: float = Field(default=300.0, gt=0)  # 5 minutes, renewed by each hit
    min_tokens: int | None = Field(default=None, ge=1)  # None: each model's own minimum


class BatchConfig(_Strict):
    """How batch jobs of the three APIs progress (on the server's clock)."""

    # Seconds from submission until the last line is done (lines finish evenly
    # spread over them); 0: every line is done at the first look.
    delay_seconds: float = Field(default=0.0, ge=0)
    # Share of lines that fail on their own (HTTP 500 in the line's result).
    line_failure: float = Field(default=0.0, ge=0, le=1)
    # Lines not done this long after submission expire, and so does the job.
    expire_seconds: float = Field(default=86400.0, gt=0)


class FakeModel(SimParams):
    """A served model: simulator parameters, optionally its own faults."""

    faults: FaultConfig | None = None  # replaces the server-wide faults for this model

    def sim_params(self) -> SimParams:
        """The simulator parameters alone."""
        return SimParams(**self.model_dump(exclude={"faults"}))


class FakeServerConfig(_Strict):
    """The fake server's configuration; every field optional."""

    seed: int = 0
    keys: list[str] | None = None  # accepted keys; None: any non-empty key
    forbidden_keys: list[str] = Field(default_factory=list)  # known, without permission: 403
    limits: ServerLimits = Field(default_factory=ServerLimits)  # per key
    # Requests answered at a time (over every key), like a local server with K
    # slots; the rest wait in a queue. None: no limit.
    serve_concurrency: int | None = Field(default=None, ge=1)
    # Answers without token usage, as many local servers send them (OpenAI
    # and Gemini APIs; Anthropic's always carries usage).
    omit_usage: bool = False
    key_limits: dict[str, ServerLimits] = Field(default_factory=dict)
    models: dict[str, FakeModel] = Field(default_factory=dict)  # empty: any model id
    faults: FaultConfig = Field(default_factory=FaultConfig)
    # false: no rate-limit headers, like many local OpenAI-compatible servers.
    rate_headers: bool = True
    cache: CacheConfig = Field(default_factory=CacheConfig)
    batch: BatchConfig = Field(default_factory=BatchConfig)

    def limits_for(self, key: str) -> ServerLimits:
        """The limits of one key."""
        return self.key_limits.get(key, self.limits)

    def faults_for(self, model: str) -> FaultConfig:
        """The faults of one model."""
        entry = self.models.get(model)
        if entry is not None and entry.faults is not None:
            return entry.faults
        return self.faults


def load_fake_config(path: str | Path | None) -> FakeServerConfig:
    """Read and validate a fake server YAML (None: the defaults)."""
    if path is None:
        return FakeServerConfig()
    p = Path(path)
    data = read_yaml(p)
    if data is None:
        return FakeServerConfig()
    if not isinstance(data, dict):
        raise ConfigError(p, "", "the document must be a mapping of keys to values")
    try:
        return FakeServerConfig.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        key = ".".join(str(x) for x in err["loc"])
        msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"]
        raise ConfigError(p, key, msg) from None
