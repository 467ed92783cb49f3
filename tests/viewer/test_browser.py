"""`arena view` in headless chromium over http://127.0.0.1: rows, filters, paging, no injection."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest

import arena
from tests._chromium import Browser, Page, skip_without_chromium
from tests.viewer._support import PAYLOAD, ThreadedViewer, shared_run

CHROMIUM = skip_without_chromium()

UNTOUCHED = "window.__pwned === undefined && document.title === 'arena view'"
ROWS = "document.querySelectorAll('#reviews tbody tr')"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    b = Browser.launch(CHROMIUM)
    yield b
    b.close()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_run(tmp_path_factory)


@pytest.fixture(scope="module")
def viewer(run: Path) -> Iterator[ThreadedViewer]:
    server = ThreadedViewer(run)
    yield server
    server.close()


async def _cells(page: Page, column: int) -> list[str]:
    value = await page.eval(f"Array.from({ROWS}).map(tr => tr.children[{column}].textContent)")
    assert isinstance(value, list)
    return [str(v) for v in value]


async def _choose(page: Page, name: str, value: str) -> None:
    before = await page.eval("document.body.dataset.loaded")
    await page.eval(
        f"(() => {{ const s = document.getElementById('f-{name}'); s.value = {json.dumps(value)};"
        " s.dispatchEvent(new Event('change')); })()"
    )
    await page.wait_for(f"document.body.dataset.loaded !== {json.dumps(before)}")


def test_browse_filter_page_and_read_a_battle(
    browser: Browser, viewer: ThreadedViewer, run: Path
) -> None:
    reviews = arena.open_log(run).read("reviews")
    crafted = reviews.filter(pl.col("text").str.contains("<script>", literal=True))["id"][0]

    async def check() -> None:
        async with browser.page() as page:
            await page.goto(viewer.url)
            await page.wait_for(f"{ROWS}.length > 0")
            # 72 reviews, 50 a page.
            assert await page.eval(f"{ROWS}.length") == 50
            assert "page 1 of 2 (72 reviews)" in await page.eval(
                "document.getElementById('page-info').textContent"
            )
            await page.eval("document.getElementById('next').click()")
            await page.wait_for(f"{ROWS}.length === 22")
            assert await page.eval("document.getElementById('next').disabled")
            await page.eval("document.getElementById('prev').click()")
            await page.wait_for(f"{ROWS}.length === 50")

            # Filters: each row shown matches, and they combine.
            await _choose(page, "model", "m2")
            models = list(zip(await _cells(page, 2), await _cells(page, 3), strict=True))
            assert len(models) == 48 and all("m2" in pair for pair in models)
            await _choose(page, "reviewer", "m0")
            assert set(await _cells(page, 4)) == {"m0"} and len(await _cells(page, 4)) == 16
            await _choose(page, "category", "math")
            assert set(await _cells(page, 1)) == {"math"} and len(await _cells(page, 1)) == 8
            await _choose(page, "verdict", "B")
            verdicts = await _cells(page, 5)
            assert verdicts and set(verdicts) == {"B"}
            assert "?model=m2&reviewer=m0&verdict=B&category=math" in await page.eval(
                "window.location.search"
            )
            await page.screenshot("viewer-filtered.png")

            # The crafted review, opened from a link: shown as text, nothing runs.
            await page.goto(f"{viewer.url}?review={crafted}")
            await page.wait_for(f"document.body.dataset.battle === {json.dumps(crafted)}")
            text = await page.eval("document.getElementById('battle').innerText")
            assert PAYLOAD in text
            assert "Explain " + PAYLOAD not in text  # q0's battle, not q3's question
            assert (
                await page.eval(
                    "document.querySelectorAll('#battle script, #battle img, #battle a, "
                    "[onerror], [onmouseover]').length"
                )
                == 0
            )
            assert await page.eval("document.querySelectorAll('#battle .review').length") == 6
            assert (
                await page.eval("document.querySelector('#battle .review.focus').dataset.id")
                == crafted
            )
            await page.screenshot("viewer-battle.png")

            # The question crafted the same way, through the category filter.
            await _choose(page, "category", "danger")
            await page.eval(f"{ROWS}[0].click()")
            await page.wait_for("document.getElementById('battle').innerText.includes('Explain')")
            assert "Explain " + PAYLOAD in await page.eval(
                "document.getElementById('battle').innerText"
            )
            assert await page.eval(UNTOUCHED)
            assert page.errors == []

    asyncio.run(check())
