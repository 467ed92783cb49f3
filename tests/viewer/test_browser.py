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


MARKDOWN = (
    "# Plan\n\nSome **bold** and *slanted* text, `code`, ~~gone~~.\n\n"
    "- one\n- two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n"
    "[safe](https://example.com/x) [bad](javascript:window.__pwned=5) "
    "[data](data:text/html,<script>window.__pwned=6</script>) ![img](https://example.com/i.png)\n\n"
)


def test_answers_render_as_sanitised_markdown(browser: Browser, tmp_path: Path) -> None:
    from arena.report import load_reviews_file
    from arena.viewer import RunData

    rows = [
        {"instruction": "Plan a trip", "output_1": MARKDOWN + PAYLOAD, "generator_1": "ref",
         "output_2": "plain <b>words</b>", "generator_2": "m1", "annotator": "judge",
         "preference": 1.25},
    ]  # fmt: skip
    source = tmp_path / "annotations.json"
    source.write_text(json.dumps(rows))
    data = RunData(source, judgments=load_reviews_file(source, keep_texts=True))
    server = ThreadedViewer(tmp_path, data=data)
    try:

        async def check() -> None:
            async with browser.page() as page:
                await page.goto(f"{server.url}?review=r1")
                await page.wait_for("document.body.dataset.battle === 'r1'")
                first = "document.querySelectorAll('#battle .answers .markdown')[0]"
                tags = await page.eval(
                    f"Array.from({first}.querySelectorAll('*')).map(e => e.tagName)"
                )
                for tag in ("H1", "STRONG", "EM", "CODE", "S", "UL", "LI", "TABLE", "TD", "A"):
                    assert tag in tags, tag
                # Only https links (the image as a link to it: nothing is loaded); no element
                # the payload tried to add.
                hrefs = await page.eval(
                    "Array.from(document.querySelectorAll('#battle a')).map(a => a.href)"
                )
                assert hrefs == ["https://example.com/x", "https://example.com/i.png"]
                assert (
                    await page.eval(
                        "document.querySelectorAll('#battle script, #battle img, #battle b, "
                        "[onerror], [onmouseover], #evil').length"
                    )
                    == 0
                )
                text = await page.eval("document.getElementById('battle').innerText")
                assert PAYLOAD in text and "plain <b>words</b>" in text
                assert "(share of the win to A: 0.75)" in text
                assert await page.eval(UNTOUCHED)
                assert page.errors == []
                # The page's own allow-list, should the server ever send raw HTML: only
                # allowed elements and safe links are kept. (Parsing such HTML makes
                # chromium log the handlers the CSP blocked; nothing runs.)
                raw = json.dumps(
                    PAYLOAD + '<p style="x" onclick="y">kept <a href="https://e.org/">link</a>'
                    '<svg onload="window.__pwned=7"></svg><iframe src="/"></iframe></p>'
                )
                cleaned = await page.eval(f"safeMarkdown({raw}).innerHTML")
                assert cleaned == (
                    '<a>click me</a>bold? &amp; "quotes"<p>kept <a href="https://e.org/" '
                    'rel="noopener noreferrer nofollow" target="_blank">link</a></p>'
                ), cleaned
                assert await page.eval(UNTOUCHED)
                assert all(
                    "violates the following Content Security Policy" in e for e in page.errors
                )

        asyncio.run(check())
    finally:
        server.close()
