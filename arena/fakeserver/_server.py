"""The fake provider server: three APIs over the simulator, with limits and faults.

Each request goes through the same steps: key check (401/403), body check
(400), model check (404), the key's rate limits (429 with the API's own retry
hint), then a wait for one of `serve_concurrency` serving slots (when set),
at most one injected fault, then the simulator's answer, its prompt-cache
use reported in its usage (`_cache.py`). Batch jobs of the three APIs are
served too (`_batch.py`); their lines go through the simulator and the cache
and count as requests. Stats are served at GET /fake/stats (`counts.requests`:
every request answered or refused, batch lines included; `counts.billed`:
those answered with usage); POST /fake/reset clears them, the buckets, the
cache and the jobs; POST /fake/clock {"advance": seconds} moves the server's
clock (cache lifetimes, batch progress) forward.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import socket
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any

from aiohttp import web

from arena.config import ModelConfig, ProviderConfig
from arena.fakeserver._batch import Job, add_batch_routes
from arena.fakeserver._cache import PrefixCache, rules_for
from arena.fakeserver._config import FAULT_KINDS, FakeServerConfig, FaultConfig
from arena.fakeserver._dialects import DIALECTS, BadRequest, Dialect, truncated_json
from arena.fakeserver._limits import KeyLimiter
from arena.providers.sim import SimProvider, rng_for
from arena.types import GenerateRequest, ProviderError, Usage, estimate_tokens

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# How long a "hang" fault holds a request when the client never gives up.
HANG_SECONDS = 3600.0

_SIM_PROVIDER = ProviderConfig(type="sim")


class FakeProviderServer:
    """The application state: config, simulator, per-key buckets, counters."""

    def __init__(self, config: FakeServerConfig) -> None:
        self.config = config
        models = {
            name: ModelConfig(provider="fake", sim=m.sim_params())
            for name, m in config.models.items()
        }
        self.sim = SimProvider("fake", _SIM_PROVIDER, models, config.seed)
        self._slots: asyncio.Semaphore | None = None  # made in the serving loop
        self.clock_offset = 0.0  # seconds POST /fake/clock moved the clock forward
        self.cache = PrefixCache(config.cache.ttl_seconds, self.now)
        self.jobs: dict[str, Job] = {}
        self.reset()

    def now(self) -> float:
        """The server's clock: epoch seconds, plus what POST /fake/clock added."""
        return time.time() + self.clock_offset

    def reset(self) -> None:
        """Forget counters, buckets, attempt numbers, the prompt cache and batch jobs."""
        self.cache.clear()
        self.jobs.clear()
        self.limiters: dict[str, KeyLimiter] = {}
        self.attempts: Counter[str] = Counter()
        self.faulted: Counter[str] = Counter()
        self.stats: Counter[str] = Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.queued = 0  # admitted requests waiting for a serving slot
        self.max_queued = 0
        self.serving = 0  # requests holding a serving slot
        self.max_serving = 0

    def app(self) -> web.Application:
        """The aiohttp application."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._route(DIALECTS["openai"]))
        app.router.add_post("/v1/messages", self._route(DIALECTS["anthropic"]))
        # google-genai 3.x calls /v1/...; older clients and the docs use /v1beta/...
        for version in ("v1beta", "v1"):
            app.router.add_post(
                f"/{version}/models/{{model}}:generateContent", self._route(DIALECTS["gemini"])
            )
        add_batch_routes(app, self)
        app.router.add_get("/fake/stats", self._stats)
        app.router.add_post("/fake/reset", self._reset)
        app.router.add_post("/fake/clock", self._advance_clock)
        return app

    async def _advance_clock(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
            seconds = float(body["advance"])
        except (ValueError, KeyError, TypeError):
            return web.json_response({"error": 'body must be {"advance": seconds}'}, status=400)
        if seconds < 0:
            return web.json_response({"error": "the clock only moves forward"}, status=400)
        self.clock_offset += seconds
        return web.json_response({"now": self.now()})

    def key_problem(
        self, dialect: Dialect, request: web.Request
    ) -> tuple[str, web.Response | None]:
        """The key a request sent and, when it is refused, the API's error response."""
        key = dialect.api_key(request)
        status = self._key_status(key)
        if status is not None or key is None:
            return key or "", dialect.auth_error(status or 401, has_key=bool(key), key=key or "")
        return key, None

    def count(self, *names: str) -> None:
        """Add one to each named counter."""
        self._count(*names)

    async def execute(
        self,
        dialect: Dialect,
        key: str,
        model: str,
        greq: GenerateRequest,
        body: Any,
        at: float | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """One batch line: counted as a request, answered by the simulator and the cache
        (as of `at`, the line's moment in its job; default: now)."""
        self._count(f"{dialect.name}.requests", "requests")
        if not self._known_model(model):
            message = f"The model `{model}` does not exist or you do not have access to it."
            return 404, dialect.error_body(404, message)
        try:
            text, usage, finished = await self._simulate(dialect, key, model, greq, body, at)
        except ProviderError as exc:
            return exc.status or 500, dialect.error_body(exc.status or 500, exc.message)
        self._count("billed", f"{dialect.name}.billed")
        return 200, dialect.success_body(model, text, usage, finished)

    async def _simulate(
        self,
        dialect: Dialect,
        key: str,
        model: str,
        greq: GenerateRequest,
        body: Any,
        at: float | None = None,
    ) -> tuple[str, Usage, bool]:
        """The simulator's answer (cut at max_tokens) with its prompt-cache use."""
        result = await self.sim.generate(greq)
        text, usage, finished = result.text, result.usage, True
        if usage.output_tokens > greq.max_tokens:
            text = text[: greq.max_tokens * 4]
            usage = Usage(usage.input_tokens, greq.max_tokens)
            finished = False
        return text, self._cached_usage(dialect, key, model, greq, body, usage, at), finished

    def _cached_usage(
        self,
        dialect: Dialect,
        key: str,
        model: str,
        greq: GenerateRequest,
        body: Any,
        usage: Usage,
        at: float | None = None,
    ) -> Usage:
        """`usage` with the tokens the prompt cache served and stored (when it is on)."""
        settings = self.config.cache
        if not settings.enabled:
            return usage
        rules = rules_for(dialect.name, model)
        if settings.min_tokens is not None:
            rules = replace(rules, min_tokens=settings.min_tokens)
        scope = f"{dialect.name}\x1f{key}\x1f{model}"
        use = self.cache.use(rules, scope, dialect.cache_segments(greq, body), at)
        read = min(use.read, usage.input_tokens)
        written = min(use.written, usage.input_tokens - read)
        if read:
            self._count("cache.hits", f"{dialect.name}.cache.hits")
        self.stats["cache.read_tokens"] += read
        self.stats["cache.write_tokens"] += written
        return replace(
            usage,
            cache_read_tokens=read,
            cache_write_tokens=written if rules.explicit else None,
        )

    async def _stats(self, request: web.Request) -> web.Response:
        return web.json_response(self.snapshot())

    async def _reset(self, request: web.Request) -> web.Response:
        self.reset()
        return web.json_response({"reset": True})

    def snapshot(self) -> dict[str, Any]:
        """Counters: requests per API, status and fault, and the peak concurrency."""
        return {
            "counts": dict(sorted(self.stats.items())),
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "queued": self.queued,
            "max_queued": self.max_queued,
            "max_serving": self.max_serving,
        }

    def _count(self, *names: str) -> None:
        for name in names:
            self.stats[name] += 1

    def _route(self, dialect: Dialect) -> Handler:
        async def handler(request: web.Request) -> web.StreamResponse:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            try:
                response = await self._handle(dialect, request)
            finally:
                self.in_flight -= 1
            self._count(f"{dialect.name}.status.{response.status}", f"status.{response.status}")
            return response

        return handler

    def _key_status(self, key: str | None) -> int | None:
        if not key:
            return 401
        if key in self.config.forbidden_keys:
            return 403
        if self.config.keys is not None and key not in self.config.keys:
            return 401
        return None

    def _limiter(self, key: str) -> KeyLimiter:
        limiter = self.limiters.get(key)
        if limiter is None:
            limiter = self.limiters[key] = KeyLimiter(self.config.limits_for(key))
        return limiter

    def _known_model(self, model: str) -> bool:
        if model in self.sim.models:
            return True
        if self.config.models:
            return False
        # No models configured: every model id is an average sim model.
        self.sim.models[model] = ModelConfig(provider="fake")
        return True

    async def _handle(self, dialect: Dialect, request: web.Request) -> web.StreamResponse:
        self._count(f"{dialect.name}.requests", "requests")
        key = dialect.api_key(request)
        status = self._key_status(key)
        if status is not None or key is None:
            return dialect.auth_error(status or 401, has_key=bool(key), key=key or "")
        raw = await request.read()
        try:
            body = json.loads(raw)
            model, greq = dialect.parse(request, body)
        except json.JSONDecodeError:
            return dialect.error(400, "We could not parse the JSON body of your request.")
        except BadRequest as exc:
            return dialect.error(400, str(exc))
        # Which request fields arrive (e.g. a model's extra params): /fake/stats counts them.
        self._count(*_body_fields(dialect.name, body))
        if not self._known_model(model):
            return dialect.error(
                404, f"The model `{model}` does not exist or you do not have access to it."
            )
        limiter = self._limiter(key)
        reserved = estimate_tokens(greq.prompt_chars()) + greq.max_tokens
        refusal = limiter.admit(reserved)
        if refusal is not None:
            self._count("rate_limited")
            return dialect.rate_limited(model, refusal.bucket, refusal.retry_after, limiter.state())
        used = 0
        try:
            async with self._serving_slot():
                response, used = await self._answer(
                    dialect, request, raw, body, key, model, greq, limiter
                )
            return response
        finally:
            # Settle what admit() took (clipped to the bucket) against the real usage.
            limiter.refund(limiter.taken(reserved) - used)

    @contextlib.asynccontextmanager
    async def _serving_slot(self) -> AsyncIterator[None]:
        """Hold one of `serve_concurrency` slots (queueing for it); no-op without a limit."""
        limit = self.config.serve_concurrency
        if limit is None:
            yield
            return
        if self._slots is None:
            self._slots = asyncio.Semaphore(limit)
        self.queued += 1
        self.max_queued = max(self.max_queued, self.queued)
        try:
            await self._slots.acquire()
        finally:
            self.queued -= 1
        self.serving += 1
        self.max_serving = max(self.max_serving, self.serving)
        try:
            yield
        finally:
            self.serving -= 1
            self._slots.release()

    def _draw_fault(self, key: str, model: str, raw: bytes, faults: FaultConfig) -> str | None:
        request_key = hashlib.blake2b(
            key.encode() + b"\x1f" + model.encode() + b"\x1f" + raw, digest_size=12
        ).hexdigest()
        self.attempts[request_key] += 1
        if faults.recover_after is not None and self.faulted[request_key] >= faults.recover_after:
            return None
        u = rng_for(self.config.seed, "fault", request_key, self.attempts[request_key]).random()
        edge = 0.0
        for kind in FAULT_KINDS:
            edge += faults.share(kind)
            if u < edge:
                self.faulted[request_key] += 1
                return kind
        return None

    async def _answer(
        self,
        dialect: Dialect,
        request: web.Request,
        raw: bytes,
        body: Any,
        key: str,
        model: str,
        greq: GenerateRequest,
        limiter: KeyLimiter,
    ) -> tuple[web.StreamResponse, int]:
        """The answer of an admitted request, and the tokens it used."""
        faults = self.config.faults_for(model)
        fault = self._draw_fault(key, model, raw, faults)
        if fault is not None:
            self._count(f"fault.{fault}")
        if fault in ("error_500", "error_503", "error_529"):
            status = int(fault[-3:])
            message = (
                "Overloaded"
                if status == 529
                else "The server had an error while processing your request. Sorry about that!"
            )
            return dialect.error(status, message), 0
        if fault == "rate_limit":
            return dialect.rate_limited(model, "requests", faults.retry_after, None), 0
        if fault == "drop":
            if request.transport is not None:
                request.transport.abort()
            await asyncio.sleep(HANG_SECONDS)  # cancelled when the connection is gone
            return web.Response(status=500), 0
        if fault == "hang":
            await asyncio.sleep(HANG_SECONDS)  # cancelled when the client gives up
            return web.Response(status=504), 0
        if fault == "slow":
            await asyncio.sleep(faults.slow_seconds)
        try:
            text, usage, finished = await self._simulate(dialect, key, model, greq, body)
        except ProviderError as exc:
            return dialect.error(exc.status or 500, exc.message), 0
        if fault == "empty":
            text, usage = "", replace(usage, output_tokens=0)
        if fault == "malformed":
            body = dialect.success_body(model, text, usage, finished)
            return web.Response(text=truncated_json(body), content_type="application/json"), 0
        state = limiter.state() if self.config.rate_headers else None
        response = dialect.success(
            model, text, usage, finished, state, omit_usage=self.config.omit_usage
        )
        self._count("billed", f"{dialect.name}.billed")
        return response, usage.total


def _body_fields(api: str, body: dict[str, Any]) -> list[str]:
    """Counter names of a request body's fields, one level of nesting: `openai.body.top_k`."""
    names: list[str] = []
    for key, value in body.items():
        names.append(f"{api}.body.{key}")
        if isinstance(value, dict):
            names.extend(f"{api}.body.{key}.{sub}" for sub in value)
    return names


def create_app(config: FakeServerConfig) -> web.Application:
    """The fake server as an aiohttp application."""
    return FakeProviderServer(config).app()


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket (port 0: a free port)."""
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.setblocking(False)
    return sock


async def start_site(app: web.Application, sock: socket.socket) -> web.AppRunner:
    """Serve `app` on `sock`; cancel handlers whose client went away (hangs, drops)."""
    # A short shutdown: requests held by a "hang" fault are not worth waiting for.
    runner = web.AppRunner(app, handler_cancellation=True, access_log=None, shutdown_timeout=1.0)
    await runner.setup()
    await web.SockSite(runner, sock).start()
    return runner


class FakeServer:
    """The fake server on a background thread: for tests, benchmarks and notebooks.

    `with FakeServer(config) as server:` starts it on a free port; `server.url`
    is its root URL (OpenAI clients use `server.url + "/v1"`).
    """

    def __init__(
        self, config: FakeServerConfig | None = None, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.state = FakeProviderServer(config or FakeServerConfig())
        self._sock = bind_socket(host, port)
        self.host = host
        self.port: int = self._sock.getsockname()[1]
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(
            target=self._loop.run_forever, daemon=True, name="arena-fake-server"
        )
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        """Root URL, e.g. http://127.0.0.1:PORT."""
        return f"http://{self.host}:{self.port}"

    def start(self) -> FakeServer:
        """Start serving (returns once the socket accepts requests)."""
        self._thread.start()
        future = asyncio.run_coroutine_threadsafe(
            start_site(self.state.app(), self._sock), self._loop
        )
        self._runner = future.result(timeout=10)
        return self

    def stats(self) -> dict[str, Any]:
        """The server's counters (see `FakeProviderServer.snapshot`)."""
        snapshot: dict[str, Any] = self._call(self.state.snapshot)
        return snapshot

    def reset(self) -> None:
        """Clear counters, buckets and attempt numbers."""
        self._call(self.state.reset)

    def _call(self, fn: Callable[[], Any]) -> Any:
        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result(timeout=10)

    def stop(self) -> None:
        """Stop serving and end the thread."""
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=10)
            self._runner = None
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        self._loop.close()

    def __enter__(self) -> FakeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
