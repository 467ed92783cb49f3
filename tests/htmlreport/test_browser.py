"""The report in headless chromium over file://: content present, no errors, nothing injected."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests._chromium import Browser, skip_without_chromium
from tests.viewer._support import PAYLOAD, cli, shared_run

CHROMIUM = skip_without_chromium()

# What the payload would do if it ran, checked after every page action.
UNTOUCHED = "window.__pwned === undefined && document.title.startsWith('arena report')"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    b = Browser.launch(CHROMIUM)
    yield b
    b.close()


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = shared_run(tmp_path_factory)
    out = tmp_path_factory.mktemp("report") / "report.html"
    result = cli(
        "report",
        str(run),
        "-o",
        str(out),
        "--bootstrap",
        "20",
        "--elo-orders",
        "5",
        "--battles",
        "50",
    )
    assert result.exit_code == 0, result.output
    return out


def test_report_opens_offline_and_runs_nothing(browser: Browser, report: Path) -> None:
    async def check() -> None:
        async with browser.page() as page:
            await page.goto(report.as_uri())
            assert await page.eval(UNTOUCHED)
            assert await page.eval("document.querySelectorAll('#leaderboard tbody tr').length") == 3
            # Rank intervals, and the ratings raw and style-controlled.
            header = await page.eval("document.querySelector('#leaderboard thead').innerText")
            assert "rank CI" in header and "BT style" in header
            # Charts: rating intervals (raw and style-controlled), win rates, Elo, the heatmap
            # (6 off-diagonal cells), the history lines.
            assert await page.eval("document.querySelectorAll('#ratings .point').length") == 6
            assert await page.eval("document.querySelectorAll('#ratings .whisker').length") == 6
            assert (
                await page.eval("document.querySelectorAll('#chart-win-rates .point').length") == 6
            )
            assert await page.eval("!!document.getElementById('style')")
            assert await page.eval("document.querySelectorAll('#heatmap .cell').length") == 6
            # The weighted heatmap and the Elo trajectory (a line per model).
            assert (
                await page.eval("document.querySelectorAll('#weighted-heatmap .cell').length") == 6
            )
            assert (
                await page.eval("document.querySelectorAll('#elo-trajectory .trajectory').length")
                == 3
            )
            assert await page.eval("document.querySelectorAll('#history .line').length") == 3
            for section in ("reviewers", "discussion", "batcheval", "calls-table", "battles"):
                assert await page.eval(f"!!document.getElementById('{section}')"), section
            # Open every battle: the crafted answer, review and question show as text.
            await page.eval("document.querySelectorAll('details').forEach(d => { d.open = true; })")
            text = await page.eval("document.body.innerText")
            assert PAYLOAD in text
            assert (
                await page.eval(
                    'document.querySelectorAll(\'script, img, iframe, a[href^="javascript"], '
                    "[onerror], [onmouseover]').length"
                )
                == 0
            )
            await page.eval("document.querySelectorAll('b, a').forEach(e => e.click())")
            await page.screenshot("report.png")
            assert await page.eval(UNTOUCHED)
            assert page.errors == []

    asyncio.run(check())


def test_heatmap_keeps_long_model_names_inside(browser: Browser, tmp_path: Path) -> None:
    from arena.htmlreport import heatmap

    names = ["a", "meta-llama/Llama-3.1-405B-Instruct-Turbo-2024-07-23", "wide" * 12]
    rates = {r: {c: 0.5 for c in names if c != r} for r in names}
    counts = {r: {c: 4 for c in names if c != r} for r in names}
    page_file = tmp_path / "heatmap.html"
    page_file.write_text(
        f"<!doctype html><html><body>{heatmap(names, rates, counts)}</body></html>"
    )

    async def check() -> None:
        async with browser.page() as page:
            await page.goto(page_file.as_uri())
            # Every label's box (the turned column labels included) lies within the chart.
            outside = await page.eval(
                "(() => { const svg = document.querySelector('svg').getBoundingClientRect();"
                " return Array.from(document.querySelectorAll('svg > text')).filter(t => {"
                " const b = t.getBoundingClientRect(); return b.left < svg.left - 0.5 ||"
                " b.top < svg.top - 0.5 || b.right > svg.right + 0.5 ||"
                " b.bottom > svg.bottom + 0.5; }).map(t => t.textContent); })()"
            )
            assert outside == []
            shown = await page.eval(
                "Array.from(document.querySelectorAll('svg > text')).map(t => t.textContent)"
            )
            assert shown.count(names[1]) == 2 and shown.count(names[2]) == 2

    asyncio.run(check())
