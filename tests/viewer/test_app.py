"""The viewer over HTTP: the API, what it refuses to serve, its headers, and `arena view` itself."""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from arena.viewer import _app
from tests.viewer._support import PAYLOAD, ThreadedViewer, Viewer, cli, shared_run


def _get(url: str) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def _json(url: str) -> Any:
    status, _, body = _get(url)
    assert status == 200, (url, status, body)
    return json.loads(body)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return shared_run(tmp_path_factory)


@pytest.fixture(scope="module")
def server(run: Path) -> Iterator[ThreadedViewer]:
    viewer = ThreadedViewer(run)
    yield viewer
    viewer.close()


def test_api(server: ThreadedViewer) -> None:
    facets = _json(server.url + "api/facets")
    assert facets["models"] == ["m0", "m1", "m2"]
    assert facets["categories"] == ["danger", "math", "writing"]
    page = _json(server.url + "api/reviews?model=m1&category=math&per_page=5&page=2")
    assert (page["total"], page["pages"], page["page"], len(page["rows"])) == (24, 5, 2, 5)
    assert all("m1" in (r["model_a"], r["model_b"]) for r in page["rows"])
    assert all(r["category"] == "math" for r in page["rows"])
    assert "text" not in page["rows"][0]  # pages carry no texts; a battle does
    battle = _json(server.url + "api/battle/" + page["rows"][0]["id"])
    assert battle["focus"] == page["rows"][0]["id"] and len(battle["reviews"]) == 6
    danger = _json(server.url + "api/reviews?category=danger&per_page=1")["rows"][0]["id"]
    # JSON carries the text as it is; the page inserts it as text.
    assert _json(server.url + "api/battle/" + danger)["question"]["turns"] == ["Explain " + PAYLOAD]
    assert _json(server.url + "api/reviews?per_page=100000")["per_page"] == _app.MAX_PER_PAGE


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("api/reviews?verdict=maybe", 400),
        ("api/reviews?page=two", 400),
        ("api/battle/no-such-review", 404),
        ("tournament.json", 404),
        ("log/reviews.journal.jsonl", 404),
        ("static/..%2ftournament.json", 404),
        ("static/../../tournament.json", 404),
        ("static/_app.py", 404),
        ("static/app.js", 200),
        ("", 200),
    ],
)
def test_serves_only_its_own_routes(server: ThreadedViewer, path: str, status: int) -> None:
    code, headers, _ = _get(server.url + path)
    assert code == status
    assert "script-src 'self'" in headers["Content-Security-Policy"]
    assert "default-src 'none'" in headers["Content-Security-Policy"]
    assert headers["X-Content-Type-Options"] == "nosniff"


def test_picks_up_rows_written_while_serving(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import small_tournament

    monkeypatch.setattr(_app, "REFRESH_SECONDS", 0.0)
    yaml_path = small_tournament(tmp_path, models=2, questions=1)
    assert cli("run", str(yaml_path)).exit_code == 0
    viewer = ThreadedViewer(tmp_path / "out")
    try:
        assert _json(viewer.url + "api/reviews")["total"] == 1 * 2 * 2
        (tmp_path / "q.jsonl").write_text(
            '{"id": "q0", "text": "Q?"}\n{"id": "q9", "text": "R?"}\n'
        )
        assert cli("run", str(yaml_path)).exit_code == 0
        # The reload runs beside the requests: the new rows show up within a few requests.
        deadline = time.monotonic() + 30
        while _json(viewer.url + "api/reviews")["total"] != 2 * 2 * 2:
            assert time.monotonic() < deadline, "the viewer never showed the new reviews"
            time.sleep(0.05)
    finally:
        viewer.close()


def test_a_failing_reload_keeps_the_last_snapshot(
    run: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(_app, "REFRESH_SECONDS", 0.0)
    viewer = ThreadedViewer(run)
    calls: list[int] = []

    def broken() -> bool:
        calls.append(1)
        raise RuntimeError("the log moved")

    monkeypatch.setattr(viewer.data, "refresh", broken)
    try:
        for _ in range(20):
            assert _json(viewer.url + "api/reviews")["total"] == 72
            if calls:
                break
            time.sleep(0.05)
        assert calls
        time.sleep(0.1)
        assert _json(viewer.url + "api/reviews")["total"] == 72
        assert "could not reload" in caplog.text
    finally:
        viewer.close()


def test_arena_view_command(run: Path) -> None:
    viewer = Viewer(run)
    try:
        assert viewer.url.startswith("http://127.0.0.1:")
        assert _json(viewer.url + "api/facets")["run"] == run.name
        # The port is taken: a second viewer cannot listen there (exit 1).
        taken = cli("view", str(run), "--port", viewer.url.rsplit(":", 1)[1].strip("/"))
        assert taken.exit_code == 1 and "cannot listen on 127.0.0.1" in taken.output
    finally:
        assert viewer.close() == 0


def test_arena_view_bad_directory(tmp_path: Path) -> None:
    result = cli("view", str(tmp_path / "nothing"), "--port", "0")
    assert result.exit_code == 2
    assert "not a run directory" in result.output


def test_loopback_by_default() -> None:
    from arena.cli._view import view_cmd

    host = next(p for p in view_cmd.params if p.name == "host")
    assert host.default == "127.0.0.1"
    with socket.socket() as probe:  # the default address is this machine's loopback
        probe.bind((str(host.default), 0))


def _status_with_host(url: str, host: str | None) -> tuple[int, str]:
    """GET /api/facets with this Host header (None: none at all); status and body."""
    where = urlsplit(url)
    assert where.hostname is not None
    conn = http.client.HTTPConnection(where.hostname, where.port, timeout=10)
    try:
        conn.putrequest("GET", "/api/facets", skip_host=True)
        if host is not None:
            conn.putheader("Host", host)
        conn.endheaders()
        response = conn.getresponse()
        return response.status, response.read().decode()
    finally:
        conn.close()


def test_only_this_servers_host_names_are_served(server: ThreadedViewer) -> None:
    port = urlsplit(server.url).port
    for good in (f"127.0.0.1:{port}", f"localhost:{port}", f"LocalHost:{port}"):
        assert _status_with_host(server.url, good)[0] == 200, good
    # DNS rebinding: another site's name resolved to 127.0.0.1 reaches the port.
    for bad in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port + 1}", "127.0.0.1"):
        status, body = _status_with_host(server.url, bad)
        assert status == 421, (bad, status, body)
        assert "m0" not in body
    for malformed in ("[::1:bad", None):  # no Host header at all: aiohttp's own 400
        status, body = _status_with_host(server.url, malformed)
        assert status in (400, 421) and "m0" not in body, (malformed, status)


def test_the_host_name_given_is_served_too(run: Path) -> None:
    viewer = ThreadedViewer(run, hosts=("Arena.LAN",))
    try:
        port = urlsplit(viewer.url).port
        assert _status_with_host(viewer.url, f"arena.lan:{port}")[0] == 200
        assert _status_with_host(viewer.url, f"other.lan:{port}")[0] == 421
    finally:
        viewer.close()
