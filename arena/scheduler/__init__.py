"""The one place that waits: per-provider governors, retries, backoff and the budget."""

from arena.scheduler._batching import (
    BATCH_TABLE,
    BatchDispatcher,
    BatchSettings,
    batch_custom_id,
    jobs_in_flight,
)
from arena.scheduler._budget import Budget, PriceTable, TokenPrices
from arena.scheduler._governor import Governor, GovernorClosed, Permit
from arena.scheduler._prices import (
    DEFAULT_PRICES_FILE,
    ModelPrice,
    as_table,
    library_price,
    load_price_configs,
    load_price_file,
    model_prices,
    price_table,
    resolve_prices,
    undated,
)
from arena.scheduler._scheduler import CallOutcome, OutcomeStatus, Scheduler

__all__ = [
    "BATCH_TABLE",
    "BatchDispatcher",
    "BatchSettings",
    "Budget",
    "CallOutcome",
    "DEFAULT_PRICES_FILE",
    "Governor",
    "GovernorClosed",
    "ModelPrice",
    "OutcomeStatus",
    "Permit",
    "PriceTable",
    "Scheduler",
    "TokenPrices",
    "as_table",
    "batch_custom_id",
    "jobs_in_flight",
    "library_price",
    "load_price_configs",
    "load_price_file",
    "model_prices",
    "price_table",
    "resolve_prices",
    "undated",
]
