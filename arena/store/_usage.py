"""Token totals of a run directory's log: plain, cached and reasoning tokens, as billed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from arena.store._schema import TABLES, USAGE_DETAIL_COLUMNS

if TYPE_CHECKING:
    from arena.store._log import RunLog

# What `token_totals` adds up: the input and output columns, then the details.
TOKEN_COLUMNS = ("tokens_in", "tokens_out", *USAGE_DETAIL_COLUMNS)


def token_totals(log: RunLog) -> dict[str, int | None]:
    """Every billed token of every table of calls (each row counts its own attempts).

    A detail column (cache read, cache write, reasoning) is None when no row
    reported it: a provider that does not say, or a log older than the column.
    """
    totals: dict[str, int | None] = dict.fromkeys(TOKEN_COLUMNS)
    totals["tokens_in"] = totals["tokens_out"] = 0
    for table, schema in list(TABLES.items()):
        if "tokens_in" not in schema.names or "cost_usd" not in schema.names:
            continue
        # The columns that tell two writes apart, as `RunLog.spent_usd` reads them;
        # the log is read a few parts at a time (`RunLog.sum_all`).
        sums = log.sum_all(table, TOKEN_COLUMNS, distinct=["started_at", "finished_at", "run_id"])
        for column in TOKEN_COLUMNS:
            if not sums.count(column):
                continue
            totals[column] = (totals[column] or 0) + int(sums.total(column))
    return totals


def describe_tokens(totals: dict[str, int | None]) -> str:
    """One line: 'tokens: in N (cache read R, cache write W), out M (reasoning T)'."""
    cache = [
        f"{label} {totals[column]}"
        for column, label in (
            ("tokens_cache_read", "cache read"),
            ("tokens_cache_write", "cache write"),
        )
        if totals.get(column) is not None
    ]
    line = f"tokens: in {totals['tokens_in']}" + (f" ({', '.join(cache)})" if cache else "")
    line += f", out {totals['tokens_out']}"
    if totals.get("tokens_reasoning") is not None:
        line += f" (reasoning {totals['tokens_reasoning']})"
    return line
