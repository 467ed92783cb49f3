"""docs/cost.md's invoice queries, run by duckdb over a real run's log."""

from __future__ import annotations

import re
from pathlib import Path

import duckdb
import polars as pl
from click.testing import CliRunner

from arena.cli import main
from arena.store import RunLog
from tests.conftest import small_tournament

COST_MD = Path(__file__).resolve().parents[1] / "docs" / "cost.md"
PRICES = {f"m{i}": {"input": 1.0 + i, "output": 4.0 + i} for i in range(3)}


def _queries() -> list[str]:
    text = COST_MD.read_text()
    section = text.split("## Checking arena's spend against an invoice", 1)[1]
    return re.findall(r"```sql\n(.*?)```", section, re.S)


def _sql(query: str) -> pl.DataFrame:
    relation = duckdb.sql(query)
    assert relation is not None
    frame: pl.DataFrame = relation.pl()
    return frame


def test_the_invoice_queries_sum_every_billed_row(tmp_path: Path) -> None:
    path = small_tournament(tmp_path, models=3, questions=3, extra={"prices": PRICES})
    assert CliRunner().invoke(main, ["run", str(path)]).exit_code == 0
    out = tmp_path / "out"
    log = RunLog(out)
    calls = pl.concat(
        [
            log.read_all(table).select("provider", "tokens_in", "tokens_out", "cost_usd")
            for table in ("answers", "reviews")
        ]
    )
    by_provider, by_model = _queries()
    rows = _sql(by_provider.replace("runs/NAME/", f"{out}/"))
    assert rows["usd"].sum() == round(log.spent_usd(), 4) > 0
    assert rows["tokens_in"].sum() == calls["tokens_in"].sum()
    assert rows["tokens_out"].sum() == calls["tokens_out"].sum()
    models = _sql(by_model.replace("runs/NAME/", f"{out}/"))
    assert set(models["model"]) == set(PRICES)
    assert abs(float(models["usd"].sum()) - log.spent_usd()) < 1e-3
    answers = log.read_all("answers").group_by("model").agg(pl.col("tokens_out").sum())
    reviews = log.read_all("reviews").group_by("reviewer").agg(pl.col("tokens_out").sum())
    for model, out_tokens in models.select("model", "tokens_out").iter_rows():
        expected = int(answers.filter(pl.col("model") == model)["tokens_out"].sum())
        expected += int(reviews.filter(pl.col("reviewer") == model)["tokens_out"].sum())
        assert out_tokens == expected
