"""The one place that waits: per-provider governors, retries, backoff and the budget."""

from arena.scheduler._budget import Budget, PriceTable
from arena.scheduler._governor import Governor, GovernorClosed, Permit
from arena.scheduler._prices import DEFAULT_PRICES_FILE, load_price_file, price_table
from arena.scheduler._scheduler import CallOutcome, OutcomeStatus, Scheduler

__all__ = [
    "Budget",
    "CallOutcome",
    "DEFAULT_PRICES_FILE",
    "Governor",
    "GovernorClosed",
    "OutcomeStatus",
    "Permit",
    "PriceTable",
    "Scheduler",
    "load_price_file",
    "price_table",
]
