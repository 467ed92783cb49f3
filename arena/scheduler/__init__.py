"""The one place that waits: per-provider governors, retries, backoff and the budget."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.lazy import lazy_attributes as _lazy_attributes
from arena.scheduler._batch_table import BATCH_TABLE, jobs_in_flight

if TYPE_CHECKING:
    from arena.scheduler._batching import BatchDispatcher, BatchSettings, batch_custom_id
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

# Each public name -> its module, imported on first use (PEP 562); `_batch_table` is
# imported here: it registers the `batch_jobs` log table (`arena status` reads it
# without loading the dispatcher, asyncio and the batch clients).
_LAZY: dict[str, str] = {
    "BatchDispatcher": "arena.scheduler._batching",
    "BatchSettings": "arena.scheduler._batching",
    "batch_custom_id": "arena.scheduler._batching",
    "Budget": "arena.scheduler._budget",
    "PriceTable": "arena.scheduler._budget",
    "TokenPrices": "arena.scheduler._budget",
    "Governor": "arena.scheduler._governor",
    "GovernorClosed": "arena.scheduler._governor",
    "Permit": "arena.scheduler._governor",
    "DEFAULT_PRICES_FILE": "arena.scheduler._prices",
    "ModelPrice": "arena.scheduler._prices",
    "as_table": "arena.scheduler._prices",
    "library_price": "arena.scheduler._prices",
    "load_price_configs": "arena.scheduler._prices",
    "load_price_file": "arena.scheduler._prices",
    "model_prices": "arena.scheduler._prices",
    "price_table": "arena.scheduler._prices",
    "resolve_prices": "arena.scheduler._prices",
    "undated": "arena.scheduler._prices",
    "CallOutcome": "arena.scheduler._scheduler",
    "OutcomeStatus": "arena.scheduler._scheduler",
    "Scheduler": "arena.scheduler._scheduler",
}

__getattr__, __dir__ = _lazy_attributes(__name__, globals(), _LAZY)

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
