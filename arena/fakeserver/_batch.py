"""Batch jobs of the three APIs: OpenAI files + batches, Anthropic message batches, Gemini batch.

A job holds its lines (custom id, request) and moves on the server's clock:
its lines are done evenly spread over `batch.delay_seconds` after submission,
each when someone looks at the job (retrieve, list, results), through the
same simulator, prompt cache and counters as a direct request (the cache
as of the line's due time: lines far apart in a long job miss each other's
entries). A share of
lines fails on its own (`batch.line_failure`); lines not done within
`batch.expire_seconds` expire with the job; a cancelled job's lines not yet
done are cancelled. Tags: OpenAI keeps a batch's `metadata` and Gemini its
`displayName`, both listed; Anthropic keeps neither (as the real API).

POST /fake/batch/finish does what a real API does with every job it accepted,
whether anyone looks again or not: each job still running is worked through
to its end (as of its last line's due time) and its lines billed. Tests and
benchmarks call it before counting what a sequence of runs was billed.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from aiohttp import BodyPartReader, web

from arena.fakeserver._config import BatchConfig
from arena.fakeserver._dialects import DIALECTS, BadRequest, Dialect
from arena.providers.sim import rng_for
from arena.types import GenerateRequest

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

# Line states; a job's state is derived from its lines and its cancel and end times.
PENDING, SUCCEEDED, ERRORED, CANCELLED, EXPIRED = (
    "pending",
    "succeeded",
    "errored",
    "cancelled",
    "expired",
)


class LineRunner(Protocol):
    """What the batch endpoints need of the server."""

    config: Any
    jobs: dict[str, Job]

    def now(self) -> float: ...

    def key_problem(
        self, dialect: Dialect, request: web.Request
    ) -> tuple[str, web.Response | None]:
        """The key and, when it is refused, the error response."""
        ...

    def count(self, *names: str) -> None: ...

    async def execute(
        self,
        dialect: Dialect,
        key: str,
        model: str,
        greq: GenerateRequest,
        body: Any,
        at: float | None = None,
    ) -> tuple[int, dict[str, Any]]:
        """Answer one request (a batch line) as of `at`: status and the API's body."""
        ...


@dataclass
class Line:
    """One request of a job."""

    custom_id: str
    model: str
    body: Any
    request: GenerateRequest | None  # None: the line is not a valid request
    problem: str | None = None
    state: str = PENDING
    status: int = 0
    response: dict[str, Any] | None = None


@dataclass
class Job:
    """One batch job of one API and key."""

    id: str
    api: str
    key: str
    created: float
    lines: list[Line]
    tags: dict[str, str] = field(default_factory=dict)
    info: dict[str, Any] = field(default_factory=dict)  # API-specific fields
    cancel_at: float | None = None
    ended_at: float | None = None
    state: str = "running"  # running | ended | cancelled | expired

    def count(self, state: str) -> int:
        """Lines in one state."""
        return sum(1 for line in self.lines if line.state == state)


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def _new_id(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:24]}"


async def advance(server: LineRunner, job: Job, *, to_end: bool = False) -> None:
    """Do the lines that are due, and end the job when it is over (`to_end`: every line
    is due, as once the job's delay has passed)."""
    if job.ended_at is not None:
        return
    cfg: BatchConfig = server.config.batch
    now = server.now()
    if to_end:
        now = max(now, job.created + min(cfg.delay_seconds, cfg.expire_seconds))
    n = max(1, len(job.lines))
    expiry = job.created + cfg.expire_seconds
    for i, line in enumerate(job.lines):
        if line.state != PENDING:
            continue
        due = job.created + cfg.delay_seconds * (i + 1) / n
        if due > now or due > expiry or (job.cancel_at is not None and due > job.cancel_at):
            break
        await _run_line(server, job, line, due)
    pending = [line for line in job.lines if line.state == PENDING]
    if not pending:
        job.state = "ended"
    elif job.cancel_at is not None and now > job.cancel_at:
        for line in pending:
            line.state = CANCELLED
        job.state = "cancelled"
    elif now >= expiry:
        for line in pending:
            line.state = EXPIRED
        job.state = "expired"
    else:
        return
    job.ended_at = now
    server.count(f"{job.api}.batch.{job.state}")


async def _run_line(server: LineRunner, job: Job, line: Line, due: float) -> None:
    """Do one line as of its due time (its moment in the job's spread: the cache's clock)."""
    dialect = DIALECTS[job.api]
    if line.request is None:
        line.state, line.status = ERRORED, 400
        line.response = dialect.error_body(400, line.problem or "invalid request")
        return
    share = server.config.batch.line_failure
    if (
        share > 0
        and rng_for(server.config.seed, "batch-line", job.id, line.custom_id).random() < share
    ):
        server.count(
            "requests", f"{job.api}.requests", f"{job.api}.batch.lines", "fault.batch_line"
        )
        line.state, line.status = ERRORED, 500
        line.response = dialect.error_body(500, "The server had an error processing this request.")
        return
    server.count(f"{job.api}.batch.lines")
    status, body = await server.execute(dialect, job.key, line.model, line.request, line.body, due)
    line.status, line.response = status, body
    line.state = SUCCEEDED if status == 200 else ERRORED


def add_batch_routes(app: web.Application, server: LineRunner) -> None:
    """The batch endpoints of the three APIs."""
    openai, anthropic, gemini = DIALECTS["openai"], DIALECTS["anthropic"], DIALECTS["gemini"]
    files: dict[str, bytes] = {}

    def guarded(
        dialect: Dialect, fn: Callable[[web.Request, str], Awaitable[web.Response]]
    ) -> Handler:
        async def handler(request: web.Request) -> web.StreamResponse:
            server.count(f"{dialect.name}.batch.http")
            key, refused = server.key_problem(dialect, request)
            if refused is not None:
                return refused
            return await fn(request, key)

        return handler

    def own_job(api: str, key: str, job_id: str) -> Job | None:
        job = server.jobs.get(job_id)
        return job if job is not None and job.api == api and job.key == key else None

    # -- OpenAI: /v1/files, /v1/batches ------------------------------------

    async def upload(request: web.Request, key: str) -> web.Response:
        reader = await request.multipart()
        purpose, content, name = None, None, "input.jsonl"
        while (part := await reader.next()) is not None:
            if not isinstance(part, BodyPartReader):
                continue
            if part.name == "purpose":
                purpose = (await part.read()).decode()
            elif part.name == "file":
                name = part.filename or name
                content = bytes(await part.read())
        if purpose != "batch" or content is None:
            return openai.error(400, "purpose must be 'batch' and a file must be given")
        file_id = _new_id("file-")
        files[file_id] = content
        return web.json_response(_openai_file(file_id, name, content, server.now()))

    async def file_content(request: web.Request, key: str) -> web.Response:
        content = files.get(request.match_info["file_id"])
        if content is None:
            return openai.error(404, "No such File object")
        return web.Response(body=content, content_type="application/jsonl")

    async def openai_create(request: web.Request, key: str) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            return openai.error(400, "We could not parse the JSON body of your request.")
        if not isinstance(body, dict):
            return openai.error(400, "the body must be a JSON object")
        content = files.get(str(body.get("input_file_id")))
        if content is None:
            return openai.error(400, "input_file_id: no such file")
        if body.get("endpoint") != "/v1/chat/completions":
            return openai.error(400, "endpoint: the fake server batches /v1/chat/completions")
        if body.get("completion_window") != "24h":
            return openai.error(400, "completion_window: must be '24h'")
        metadata = body.get("metadata") or {}
        if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
            return openai.error(400, "metadata: must map strings to strings")
        lines, problem = _openai_lines(request, content)
        job = Job(
            _new_id("batch_"),
            "openai",
            key,
            server.now(),
            lines,
            tags=dict(metadata),
            info={"input_file_id": body["input_file_id"], "problem": problem},
        )
        if problem is not None:
            job.state, job.ended_at = "failed", job.created
        server.jobs[job.id] = job
        server.count("openai.batch.jobs")
        return web.json_response(_openai_batch(job, files))

    async def openai_get(request: web.Request, key: str) -> web.Response:
        job = own_job("openai", key, request.match_info["name"])
        if job is None:
            return openai.error(404, "No such Batch object")
        await advance(server, job)
        return web.json_response(_openai_batch(job, files))

    async def openai_cancel(request: web.Request, key: str) -> web.Response:
        job = own_job("openai", key, request.match_info["batch_id"])
        if job is None:
            return openai.error(404, "No such Batch object")
        await advance(server, job)
        if job.ended_at is None and job.cancel_at is None:
            job.cancel_at = server.now()
        return web.json_response(_openai_batch(job, files))

    async def openai_list(request: web.Request, key: str) -> web.Response:
        jobs = _newest_first(server, "openai", key)
        after = request.query.get("after")
        if after is not None:
            ids = [j.id for j in jobs]
            jobs = jobs[ids.index(after) + 1 :] if after in ids else []
        limit = _limit(request.query.get("limit"), 20, 100)
        page = jobs[:limit]
        for job in page:
            await advance(server, job)
        data = [_openai_batch(j, files) for j in page]
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "first_id": page[0].id if page else None,
                "last_id": page[-1].id if page else None,
                "has_more": len(jobs) > limit,
            }
        )

    app.router.add_post("/v1/files", guarded(openai, upload))
    app.router.add_get("/v1/files/{file_id}/content", guarded(openai, file_content))
    app.router.add_post("/v1/batches", guarded(openai, openai_create))
    app.router.add_post("/v1/batches/{batch_id}/cancel", guarded(openai, openai_cancel))

    # -- Anthropic: /v1/messages/batches -----------------------------------

    async def anthropic_create(request: web.Request, key: str) -> web.Response:
        try:
            body = await request.json()
        except ValueError:
            return anthropic.error(400, "The request body is not valid JSON.")
        raw = body.get("requests") if isinstance(body, dict) else None
        if not isinstance(raw, list) or not raw:
            return anthropic.error(400, "requests: must be a non-empty list")
        lines: list[Line] = []
        seen: set[str] = set()
        for i, item in enumerate(raw):
            custom_id = item.get("custom_id") if isinstance(item, dict) else None
            if not isinstance(custom_id, str) or not custom_id:
                return anthropic.error(400, f"requests.{i}.custom_id: Field required")
            if custom_id in seen:
                return anthropic.error(400, f"requests.{i}.custom_id: duplicate {custom_id!r}")
            seen.add(custom_id)
            lines.append(_parse_line(anthropic, request, custom_id, item.get("params")))
        job = Job(_new_id("msgbatch_"), "anthropic", key, server.now(), lines)
        server.jobs[job.id] = job
        server.count("anthropic.batch.jobs")
        return web.json_response(_anthropic_batch(job, _origin(request)))

    async def anthropic_get(request: web.Request, key: str) -> web.Response:
        job = own_job("anthropic", key, request.match_info["batch_id"])
        if job is None:
            return anthropic.error(404, "Message batch not found")
        await advance(server, job)
        return web.json_response(_anthropic_batch(job, _origin(request)))

    async def anthropic_cancel(request: web.Request, key: str) -> web.Response:
        job = own_job("anthropic", key, request.match_info["batch_id"])
        if job is None:
            return anthropic.error(404, "Message batch not found")
        await advance(server, job)
        if job.ended_at is None and job.cancel_at is None:
            job.cancel_at = server.now()
        return web.json_response(_anthropic_batch(job, _origin(request)))

    async def anthropic_results(request: web.Request, key: str) -> web.Response:
        job = own_job("anthropic", key, request.match_info["batch_id"])
        if job is None:
            return anthropic.error(404, "Message batch not found")
        await advance(server, job)
        if job.ended_at is None:
            return anthropic.error(400, "Message batch is still in progress")
        text = "".join(json.dumps(_anthropic_result(line)) + "\n" for line in job.lines)
        return web.Response(text=text, content_type="application/binary")

    async def anthropic_list(request: web.Request, key: str) -> web.Response:
        jobs = _newest_first(server, "anthropic", key)
        after = request.query.get("after_id")
        if after is not None:
            ids = [j.id for j in jobs]
            jobs = jobs[ids.index(after) + 1 :] if after in ids else []
        limit = _limit(request.query.get("limit"), 20, 1000)
        page = jobs[:limit]
        for job in page:
            await advance(server, job)
        return web.json_response(
            {
                "data": [_anthropic_batch(j, _origin(request)) for j in page],
                "has_more": len(jobs) > limit,
                "first_id": page[0].id if page else None,
                "last_id": page[-1].id if page else None,
            }
        )

    app.router.add_post("/v1/messages/batches", guarded(anthropic, anthropic_create))
    app.router.add_get("/v1/messages/batches", guarded(anthropic, anthropic_list))
    app.router.add_get("/v1/messages/batches/{batch_id}", guarded(anthropic, anthropic_get))
    app.router.add_post(
        "/v1/messages/batches/{batch_id}/cancel", guarded(anthropic, anthropic_cancel)
    )
    app.router.add_get(
        "/v1/messages/batches/{batch_id}/results", guarded(anthropic, anthropic_results)
    )

    # -- Gemini: models/{model}:batchGenerateContent, batches/{name} --------

    async def gemini_create(request: web.Request, key: str) -> web.Response:
        model = request.match_info["model"]
        try:
            body = await request.json()
        except ValueError:
            return gemini.error(400, "Invalid JSON payload received.")
        batch = body.get("batch") if isinstance(body, dict) else None
        config = batch.get("inputConfig") if isinstance(batch, dict) else None
        holder = config.get("requests") if isinstance(config, dict) else None
        raw = holder.get("requests") if isinstance(holder, dict) else None
        if not isinstance(batch, dict) or not isinstance(raw, list) or not raw:
            return gemini.error(
                400, "batch.inputConfig.requests.requests: must be a non-empty list"
            )
        lines: list[Line] = []
        for i, item in enumerate(raw):
            meta = item.get("metadata") if isinstance(item, dict) else None
            custom_id = meta.get("key") if isinstance(meta, dict) else None
            if not isinstance(custom_id, str) or not custom_id:
                custom_id = str(i)
            inner = item.get("request") if isinstance(item, dict) else None
            line_model = model
            if isinstance(inner, dict) and isinstance(inner.get("model"), str):
                line_model = inner["model"].removeprefix("models/")
            line = _parse_gemini_line(custom_id, line_model, inner)
            lines.append(line)
        display = batch.get("displayName")
        job = Job(
            _new_id("batches/"),
            "gemini",
            key,
            server.now(),
            lines,
            tags={"displayName": display} if isinstance(display, str) else {},
            info={"model": model, "metadata": [item.get("metadata") for item in raw]},
        )
        server.jobs[job.id] = job
        server.count("gemini.batch.jobs")
        return web.json_response(_gemini_operation(job))

    async def gemini_get(request: web.Request, key: str) -> web.Response:
        job = own_job("gemini", key, "batches/" + request.match_info["name"])
        if job is None:
            return gemini.error(404, "Requested entity was not found.")
        await advance(server, job)
        return web.json_response(_gemini_operation(job))

    async def gemini_cancel(request: web.Request, key: str) -> web.Response:
        job = own_job("gemini", key, "batches/" + request.match_info["name"])
        if job is None:
            return gemini.error(404, "Requested entity was not found.")
        await advance(server, job)
        if job.ended_at is None and job.cancel_at is None:
            job.cancel_at = server.now()
        return web.json_response({})

    async def gemini_list(request: web.Request, key: str) -> web.Response:
        jobs = _newest_first(server, "gemini", key)
        token = request.query.get("pageToken")
        start = int(token) if token and token.isdigit() else 0
        size = _limit(request.query.get("pageSize"), 50, 1000)
        page = jobs[start : start + size]
        for job in page:
            await advance(server, job)
        out: dict[str, Any] = {"operations": [_gemini_operation(j) for j in page]}
        if start + size < len(jobs):
            out["nextPageToken"] = str(start + size)
        return web.json_response(out)

    def either(openai_handler: Handler, gemini_handler: Handler) -> Handler:
        """GET /v1/batches[/ID] is both APIs' path: a Google key header says which."""

        async def handler(request: web.Request) -> web.StreamResponse:
            google = "x-goog-api-key" in request.headers or "key" in request.query
            return await (gemini_handler if google else openai_handler)(request)

        return handler

    async def finish(request: web.Request) -> web.Response:
        running = [job for job in server.jobs.values() if job.ended_at is None]
        for job in running:
            await advance(server, job, to_end=True)
        return web.json_response({"finished": len(running)})

    app.router.add_post("/fake/batch/finish", finish)
    for version in ("v1beta", "v1"):
        app.router.add_post(
            f"/{version}/models/{{model}}:batchGenerateContent", guarded(gemini, gemini_create)
        )
        app.router.add_post(f"/{version}/batches/{{name}}:cancel", guarded(gemini, gemini_cancel))
    app.router.add_get("/v1beta/batches", guarded(gemini, gemini_list))
    app.router.add_get("/v1beta/batches/{name}", guarded(gemini, gemini_get))
    app.router.add_get(
        "/v1/batches", either(guarded(openai, openai_list), guarded(gemini, gemini_list))
    )
    app.router.add_get(
        "/v1/batches/{name}", either(guarded(openai, openai_get), guarded(gemini, gemini_get))
    )


def _limit(raw: str | None, default: int, most: int) -> int:
    try:
        value = int(raw) if raw is not None else default
    except ValueError:
        value = default
    return max(1, min(most, value))


def _origin(request: web.Request) -> str:
    return f"{request.scheme}://{request.host}"


def _newest_first(server: LineRunner, api: str, key: str) -> list[Job]:
    jobs = [j for j in server.jobs.values() if j.api == api and j.key == key]
    return sorted(jobs, key=lambda j: j.created, reverse=True)


def _parse_line(dialect: Dialect, request: web.Request, custom_id: str, params: Any) -> Line:
    model = params.get("model") if isinstance(params, dict) else None
    try:
        _, greq = dialect.parse(request, params)
    except BadRequest as exc:
        return Line(custom_id, str(model or ""), params, None, str(exc))
    return Line(custom_id, greq.model, params, greq)


def _parse_gemini_line(custom_id: str, model: str, inner: Any) -> Line:
    gemini = DIALECTS["gemini"]
    assert hasattr(gemini, "parse_body")
    try:
        _, greq = gemini.parse_body(model, inner)
    except BadRequest as exc:
        return Line(custom_id, model, inner, None, str(exc))
    return Line(custom_id, model, inner, greq)


def _openai_lines(request: web.Request, content: bytes) -> tuple[list[Line], str | None]:
    """The lines of an input file, or why the file is refused (the job fails)."""
    openai = DIALECTS["openai"]
    lines: list[Line] = []
    seen: set[str] = set()
    for number, raw in enumerate(content.decode("utf-8", "replace").splitlines(), 1):
        if not raw.strip():
            continue
        try:
            item = json.loads(raw)
        except ValueError:
            return [], f"line {number}: not valid JSON"
        if not isinstance(item, dict):
            return [], f"line {number}: must be a JSON object"
        custom_id = item.get("custom_id")
        if not isinstance(custom_id, str) or not custom_id:
            return [], f"line {number}: custom_id is required"
        if custom_id in seen:
            return [], f"line {number}: duplicate custom_id {custom_id!r}"
        seen.add(custom_id)
        if item.get("method") != "POST" or item.get("url") != "/v1/chat/completions":
            return [], f"line {number}: method must be POST and url /v1/chat/completions"
        body = item.get("body")
        model = body.get("model") if isinstance(body, dict) else None
        try:
            _, greq = openai.parse(request, body)
        except BadRequest as exc:
            lines.append(Line(custom_id, str(model or ""), body, None, str(exc)))
            continue
        lines.append(Line(custom_id, greq.model, body, greq))
    if not lines:
        return [], "the input file has no requests"
    return lines, None


def _openai_file(file_id: str, name: str, content: bytes, now: float) -> dict[str, Any]:
    return {
        "id": file_id,
        "object": "file",
        "bytes": len(content),
        "created_at": int(now),
        "filename": name,
        "purpose": "batch",
        "status": "processed",
    }


def _openai_batch(job: Job, files: dict[str, bytes]) -> dict[str, Any]:
    status = {
        "running": "cancelling" if job.cancel_at is not None else "in_progress",
        "ended": "completed",
        "cancelled": "cancelled",
        "expired": "expired",
        "failed": "failed",
    }[job.state]
    done = [line for line in job.lines if line.state != PENDING]
    output_id = error_id = None
    if job.ended_at is not None and job.state != "failed":
        ok = [line for line in done if line.state == SUCCEEDED]
        bad = [line for line in done if line.state != SUCCEEDED]
        if ok:
            output_id = f"file-out-{job.id.removeprefix('batch_')}"
            files[output_id] = "".join(json.dumps(_openai_out(job, x)) + "\n" for x in ok).encode()
        if bad:
            error_id = f"file-err-{job.id.removeprefix('batch_')}"
            files[error_id] = "".join(json.dumps(_openai_out(job, x)) + "\n" for x in bad).encode()
    ended = int(job.ended_at) if job.ended_at is not None else None
    problem = job.info.get("problem")
    return {
        "id": job.id,
        "object": "batch",
        "endpoint": "/v1/chat/completions",
        "errors": None
        if problem is None
        else {"object": "list", "data": [{"code": "invalid_request", "message": problem}]},
        "input_file_id": job.info.get("input_file_id"),
        "completion_window": "24h",
        "status": status,
        "output_file_id": output_id,
        "error_file_id": error_id,
        "created_at": int(job.created),
        "in_progress_at": int(job.created),
        "expires_at": int(job.created + 86400),
        "finalizing_at": ended if job.state == "ended" else None,
        "completed_at": ended if job.state == "ended" else None,
        "failed_at": ended if job.state == "failed" else None,
        "expired_at": ended if job.state == "expired" else None,
        "cancelling_at": int(job.cancel_at) if job.cancel_at is not None else None,
        "cancelled_at": ended if job.state == "cancelled" else None,
        "request_counts": {
            "total": len(job.lines),
            "completed": job.count(SUCCEEDED),
            "failed": len(done) - job.count(SUCCEEDED),
        },
        "metadata": job.tags or None,
    }


def _openai_out(job: Job, line: Line) -> dict[str, Any]:
    if line.state in (CANCELLED, EXPIRED):
        code = "batch_cancelled" if line.state == CANCELLED else "batch_expired"
        message = (
            "This request was cancelled before it was executed."
            if line.state == CANCELLED
            else "This request could not be executed before the completion window expired."
        )
        return {
            "id": _new_id("batch_req_"),
            "custom_id": line.custom_id,
            "response": None,
            "error": {"code": code, "message": message},
        }
    return {
        "id": _new_id("batch_req_"),
        "custom_id": line.custom_id,
        "response": {
            "status_code": line.status,
            "request_id": _new_id("req_"),
            "body": line.response,
        },
        "error": None,
    }


def _anthropic_batch(job: Job, origin: str) -> dict[str, Any]:
    ended = job.ended_at is not None
    status = "ended" if ended else ("canceling" if job.cancel_at is not None else "in_progress")
    return {
        "id": job.id,
        "type": "message_batch",
        "processing_status": status,
        "request_counts": {
            "processing": job.count(PENDING),
            "succeeded": job.count(SUCCEEDED),
            "errored": job.count(ERRORED),
            "canceled": job.count(CANCELLED),
            "expired": job.count(EXPIRED),
        },
        "ended_at": _iso(job.ended_at) if job.ended_at is not None else None,
        "created_at": _iso(job.created),
        "expires_at": _iso(job.created + 86400),
        "archived_at": None,
        "cancel_initiated_at": _iso(job.cancel_at) if job.cancel_at is not None else None,
        "results_url": f"{origin}/v1/messages/batches/{job.id}/results" if ended else None,
    }


def _anthropic_result(line: Line) -> dict[str, Any]:
    result: dict[str, Any]
    if line.state == SUCCEEDED:
        result = {"type": "succeeded", "message": line.response}
    elif line.state == ERRORED:
        error = line.response or {}
        result = {"type": "errored", "error": error}
    elif line.state == CANCELLED:
        result = {"type": "canceled"}
    else:
        result = {"type": "expired"}
    return {"custom_id": line.custom_id, "result": result}


_GEMINI_STATE = {
    "running": "BATCH_STATE_RUNNING",
    "ended": "BATCH_STATE_SUCCEEDED",
    "cancelled": "BATCH_STATE_CANCELLED",
    "expired": "BATCH_STATE_EXPIRED",
}


def _gemini_operation(job: Job) -> dict[str, Any]:
    done = job.ended_at is not None
    metadata: dict[str, Any] = {
        "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
        "model": f"models/{job.info.get('model')}",
        "createTime": _iso(job.created),
        "updateTime": _iso(job.ended_at if done and job.ended_at is not None else job.created),
        "state": _GEMINI_STATE[job.state],
        "name": job.id,
        "batchStats": {
            "requestCount": str(len(job.lines)),
            "successfulRequestCount": str(job.count(SUCCEEDED)),
            "failedRequestCount": str(len(job.lines) - job.count(SUCCEEDED) - job.count(PENDING)),
            "pendingRequestCount": str(job.count(PENDING)),
        },
    }
    if "displayName" in job.tags:
        metadata["displayName"] = job.tags["displayName"]
    if done and job.ended_at is not None:
        metadata["endTime"] = _iso(job.ended_at)
        responses = []
        for line, meta in zip(job.lines, job.info.get("metadata") or [], strict=False):
            entry: dict[str, Any] = {}
            if isinstance(meta, dict):
                entry["metadata"] = meta
            if line.state == SUCCEEDED:
                entry["response"] = line.response
            else:
                code, message = {
                    CANCELLED: (499, "The request was cancelled before it was executed."),
                    EXPIRED: (504, "The batch expired before the request was executed."),
                }.get(line.state, (line.status or 500, _gemini_message(line.response)))
                entry["error"] = {"code": code, "message": message}
            responses.append(entry)
        metadata["output"] = {"inlinedResponses": {"inlinedResponses": responses}}
    return {"name": job.id, "metadata": metadata, "done": done}


def _gemini_message(body: dict[str, Any] | None) -> str:
    error = (body or {}).get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"])
    return "internal error"
