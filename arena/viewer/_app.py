"""The `arena view` web app: a run directory's log, browsable in a browser (aiohttp).

Routes: `/` (the page), `/static/app.js`, `/static/app.css` (the page's own
files, shipped with arena), `/api/facets`, `/api/reviews` (one page of
reviews matching the filters) and `/api/battle/{review_id}`. Nothing else is
served: no file of the run directory is sent as a file, only the data read
from its log. Every response forbids inline scripts and any other origin
(Content-Security-Policy), and the page inserts all log text as text, but
for the answers' markdown (`/api/battle` gives each turn as HTML with raw
HTML escaped and unsafe links dropped, arena/viewer/_markdown.py), which it
copies through an allow-list of elements and link targets. A
request whose Host header names anything but this server (127.0.0.1,
localhost, ::1, the address it was reached on or the `--host` given, with its
port) gets 421: a page of another site whose name was rebound to this machine
(DNS rebinding) cannot read the run.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterable
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from arena.viewer._battles import VERDICTS, BattleFilter, RunData
from arena.viewer._markdown import render_markdown

__all__ = ["MAX_PER_PAGE", "PER_PAGE", "make_app"]

_LOG = logging.getLogger(__name__)

PER_PAGE = 50
MAX_PER_PAGE = 500
# A run being written changes the log all the time: reload it at most this often.
REFRESH_SECONDS = 1.0

_SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
        "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
_STATIC = {
    "index.html": "text/html",
    "app.js": "text/javascript",
    "app.css": "text/css",
}


class _Live:
    """The run's data, reloaded from the log in a worker thread while requests keep being served.

    A check for changes starts on a request, at most once per REFRESH_SECONDS
    and never sooner after a reload than twice the time that reload took (a
    large log being written all the time is not reread back to back); until
    it is done, requests see the previous snapshot (whole, never half-loaded).
    """

    def __init__(self, data: RunData) -> None:
        self.data = data
        self.next_check = time.monotonic() + REFRESH_SECONDS
        self.reload: asyncio.Task[None] | None = None

    def current(self) -> RunData:
        idle = self.reload is None or self.reload.done()
        if idle and time.monotonic() >= self.next_check:
            self.next_check = float("inf")
            self.reload = asyncio.create_task(self._refresh())
        return self.data

    async def _refresh(self) -> None:
        start = time.monotonic()
        try:
            await asyncio.to_thread(self.data.refresh)
        except Exception as exc:  # noqa: BLE001 - keep serving the last snapshot
            _LOG.warning("arena view: could not reload %s: %s", self.data.directory, exc)
        finally:
            took = time.monotonic() - start
            self.next_check = time.monotonic() + max(REFRESH_SECONDS - took, took)


_DATA = web.AppKey("data", _Live)
_HOSTS = web.AppKey("hosts", frozenset[str])
# Names that always mean this machine.
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


def _static(name: str) -> bytes:
    return resources.files("arena.viewer").joinpath("static", name).read_bytes()


@web.middleware
async def _secure(
    request: web.Request, handler: Any
) -> web.StreamResponse:  # handler: the next handler in the chain
    try:
        response: web.StreamResponse = await handler(request)
    except web.HTTPException as exc:
        exc.headers.update(_SECURITY_HEADERS)
        raise
    response.headers.update(_SECURITY_HEADERS)
    return response


def _host_problem(request: web.Request) -> str | None:
    """Why the request's Host header does not name this server (None when it does)."""
    raw = request.headers.get("Host")
    if not raw:
        return "no Host header"
    try:
        parts = urlsplit("//" + raw)
        name, port = parts.hostname, parts.port
    except ValueError:
        return f"malformed Host header {raw!r}"
    local = request.transport.get_extra_info("sockname") if request.transport else None
    local_ip, local_port = (str(local[0]), int(local[1])) if local else (None, None)
    allowed = request.app[_HOSTS] | ({local_ip.lower()} if local_ip else set())
    if name is None or name not in allowed:
        return f"Host {raw!r} is not this server (use http://127.0.0.1:{local_port}/)"
    if local_port is not None and (port if port is not None else 80) != local_port:
        return f"Host {raw!r} names another port than {local_port}"
    return None


@web.middleware
async def _check_host(
    request: web.Request, handler: Any
) -> web.StreamResponse:  # handler: the next handler in the chain
    problem = _host_problem(request)
    if problem is not None:
        raise web.HTTPMisdirectedRequest(text=problem)
    response: web.StreamResponse = await handler(request)
    return response


def _text(name: str) -> web.Response:
    return web.Response(body=_static(name), content_type=_STATIC[name], charset="utf-8")


async def _index(request: web.Request) -> web.Response:
    return _text("index.html")


async def _asset(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in _STATIC or name == "index.html":
        raise web.HTTPNotFound()
    return _text(name)


def _choice(request: web.Request, name: str, allowed: list[str] | tuple[str, ...]) -> str | None:
    value = request.query.get(name) or None
    if value is not None and value not in allowed:
        raise web.HTTPBadRequest(text=f"unknown {name} {value!r}")
    return value


def _int(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise web.HTTPBadRequest(text=f"{name} must be an integer") from None
    return min(max(value, low), high)


async def _facets(request: web.Request) -> web.Response:
    data = request.app[_DATA].current()
    return web.json_response(
        {"run": data.directory.name, "notes": list(data.notes), **data.facets()}
    )


async def _reviews(request: web.Request) -> web.Response:
    data = request.app[_DATA].current()
    where = BattleFilter(
        model=request.query.get("model") or None,
        reviewer=request.query.get("reviewer") or None,
        verdict=_choice(request, "verdict", VERDICTS),
        category=request.query.get("category") or None,
    )
    page = _int(request, "page", 1, 1, 10**9)
    per_page = _int(request, "per_page", PER_PAGE, 1, MAX_PER_PAGE)
    return web.json_response(data.page(where, page, per_page))


async def _battle(request: web.Request) -> web.Response:
    data = request.app[_DATA].current()
    battle = data.battle(request.match_info["review_id"])
    if battle is None:
        raise web.HTTPNotFound(text="no such review")
    for answer in battle["answers"]:  # each turn also as markdown (the page sanitises it again)
        if answer is not None:
            answer["html"] = [render_markdown(turn) for turn in answer["turns"]]
    return web.json_response(battle)


def make_app(data: RunData, hosts: Iterable[str] = ()) -> web.Application:
    """The viewer of one run directory's data.

    `hosts`: names besides the loopback ones (and the address a request came
    in on) that a request's Host header may give, such as `--host`.
    """
    app = web.Application(middlewares=[_secure, _check_host])
    app[_DATA] = _Live(data)
    names = {h.strip("[]").lower() for h in hosts if h}
    app[_HOSTS] = frozenset(LOOPBACK_NAMES | names)
    app.router.add_get("/", _index)
    app.router.add_get("/static/{name}", _asset)
    app.router.add_get("/api/facets", _facets)
    app.router.add_get("/api/reviews", _reviews)
    app.router.add_get("/api/battle/{review_id}", _battle)
    return app
