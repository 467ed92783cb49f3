"""Headless chromium driven over the DevTools protocol (websocket via aiohttp), for browser tests.

`Browser.launch()` starts the system's chromium (Debian's `chromium`;
`ARENA_CHROMIUM` names another binary) with a fresh profile; nothing is ever
downloaded. `page()` opens a tab whose console errors, uncaught exceptions
and failed loads are collected in `Page.errors`. `skip_without_chromium()`
skips a test module with a clear reason when there is no browser, or fails
it when ARENA_BROWSER_TESTS=required (.ci/run sets it).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import aiohttp
import pytest

REPO = Path(__file__).resolve().parent.parent
ARTIFACTS = REPO / "test-artifacts"

SKIP_REASON = (
    "chromium not found: browser tests skipped "
    "(install it with `apt-get install -y chromium` as root, as .ci/run does, "
    "or set ARENA_CHROMIUM to a chromium binary)"
)


def chromium_path() -> str | None:
    """The chromium binary to use, or None."""
    named = os.environ.get("ARENA_CHROMIUM")
    if named:
        return named if Path(named).exists() else None
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def skip_without_chromium() -> str:
    """The chromium binary, or skip the calling test module (fail it under .ci/run)."""
    path = chromium_path()
    if path is None:
        if os.environ.get("ARENA_BROWSER_TESTS") == "required":
            pytest.fail(SKIP_REASON, pytrace=False)
        pytest.skip(SKIP_REASON, allow_module_level=True)
    return path


class Page:
    """One tab, attached over a flat DevTools session."""

    def __init__(self, browser: Browser, session: str) -> None:
        self.browser = browser
        self.session = session
        self.errors: list[str] = []
        self.loaded = asyncio.Event()

    async def send(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.browser.send(method, params, session=self.session)

    def on_event(self, method: str, params: dict[str, Any]) -> None:
        if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
            args = params.get("args", [])
            self.errors.append(
                "console: " + " ".join(str(a.get("value", a.get("description"))) for a in args)
            )
        elif method == "Runtime.exceptionThrown":
            details = params.get("exceptionDetails", {})
            text = details.get("exception", {}).get("description") or details.get("text")
            self.errors.append(f"exception: {text}")
        elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
            entry = params["entry"]
            self.errors.append(
                f"log ({entry.get('source')}): {entry.get('text')} {entry.get('url', '')}"
            )
        elif method == "Page.loadEventFired":
            self.loaded.set()

    async def goto(self, url: str, timeout: float = 15) -> None:
        self.loaded.clear()
        result = await self.send("Page.navigate", {"url": url})
        if result.get("errorText"):
            raise AssertionError(f"cannot open {url}: {result['errorText']}")
        await asyncio.wait_for(self.loaded.wait(), timeout)

    async def eval(self, expression: str) -> Any:
        """The JSON value of a JavaScript expression (promises awaited)."""
        result = await self.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
        )
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression!r} threw: {result['exceptionDetails']}")
        return result["result"].get("value")

    async def wait_for(self, expression: str, timeout: float = 10) -> Any:
        """Poll a JavaScript expression until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while True:
            value = await self.eval(expression)
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {expression!r}")
            await asyncio.sleep(0.05)

    async def screenshot(self, name: str) -> Path:
        """Save a PNG of the whole page under test-artifacts/."""
        height = await self.eval("document.documentElement.scrollHeight")
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            {
                "width": 1280,
                "height": min(int(height), 8000),
                "deviceScaleFactor": 1,
                "mobile": False,
            },
        )
        shot = await self.send("Page.captureScreenshot", {"format": "png"})
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / name
        path.write_bytes(base64.b64decode(shot["data"]))
        await self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
        )
        return path


class Browser:
    """A headless chromium process and one DevTools websocket to it."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        profile: tempfile.TemporaryDirectory[str],
        endpoint: str,
    ) -> None:
        self.process = process
        self.profile = profile
        self.endpoint = endpoint
        self._ids = 0
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._pages: dict[str, Page] = {}
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._http: aiohttp.ClientSession | None = None
        self._reader: asyncio.Task[None] | None = None

    @classmethod
    def launch(cls, binary: str) -> Browser:
        """Start chromium headless with a fresh profile; waits for its DevTools endpoint."""
        profile = tempfile.TemporaryDirectory(prefix="arena-chromium-")
        process = subprocess.Popen(
            [
                binary,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--no-default-browser-check",
                "--disable-extensions",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--hide-scrollbars",
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--user-data-dir={profile.name}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its helper processes share its group: `close` ends them all
        )
        port_file = Path(profile.name) / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while True:
            if port_file.exists():
                lines = port_file.read_text().split()
                if len(lines) >= 2:
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                profile.cleanup()
                raise RuntimeError(f"{binary} did not start its DevTools endpoint")
            time.sleep(0.05)
        return cls(process, profile, f"ws://127.0.0.1:{lines[0]}{lines[1]}")

    def close(self) -> None:
        """Stop chromium and every helper process it started, then remove its profile.

        The helpers (renderer, crash handler) can outlive the browser process and
        still write into the profile, so the whole process group is stopped, and
        the removal is retried while a straggler finishes a write.
        """
        self._signal_group(signal.SIGTERM)
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._signal_group(signal.SIGKILL)
        deadline = time.monotonic() + 10
        while True:
            try:
                shutil.rmtree(self.profile.name)
                break
            except FileNotFoundError:
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        self.profile.cleanup()  # already gone: only marks the directory as removed

    def _signal_group(self, sig: signal.Signals) -> None:
        try:
            os.killpg(self.process.pid, sig)
        except ProcessLookupError:
            pass  # the whole group has exited

    async def send(
        self, method: str, params: dict[str, Any] | None = None, *, session: str | None = None
    ) -> dict[str, Any]:
        assert self._ws is not None
        self._ids += 1
        message: dict[str, Any] = {"id": self._ids, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[self._ids] = future
        await self._ws.send_str(json.dumps(message))
        return await asyncio.wait_for(future, 30)

    async def _read(self) -> None:
        assert self._ws is not None
        async for msg in self._ws:
            if msg.type != aiohttp.WSMsgType.TEXT:
                continue
            data = json.loads(msg.data)
            if "id" in data:
                future = self._waiting.pop(data["id"], None)
                if future is None or future.done():
                    continue
                if "error" in data:
                    future.set_exception(AssertionError(f"DevTools: {data['error']}"))
                else:
                    future.set_result(data.get("result", {}))
            else:
                page = self._pages.get(data.get("sessionId", ""))
                if page is not None:
                    page.on_event(data["method"], data.get("params", {}))

    @asynccontextmanager
    async def page(self) -> AsyncIterator[Page]:
        """A new tab (in this event loop), closed afterwards."""
        self._http = aiohttp.ClientSession()
        self._ws = await self._http.ws_connect(self.endpoint, max_msg_size=0)
        self._reader = asyncio.create_task(self._read())
        target = await self.send("Target.createTarget", {"url": "about:blank"})
        attached = await self.send(
            "Target.attachToTarget", {"targetId": target["targetId"], "flatten": True}
        )
        page = Page(self, attached["sessionId"])
        self._pages[page.session] = page
        try:
            for domain in ("Page", "Runtime", "Log"):
                await page.send(f"{domain}.enable")
            await page.send(
                "Emulation.setDeviceMetricsOverride",
                {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False},
            )
            yield page
        finally:
            await self.send("Target.closeTarget", {"targetId": target["targetId"]})
            self._pages.pop(page.session, None)
            await self._ws.close()
            self._reader.cancel()
            await self._http.close()
            self._ws = self._http = self._reader = None
