"""`arena fake-server`: local fake OpenAI, Anthropic and Gemini APIs over the simulator."""

from __future__ import annotations

import asyncio
import signal
import socket
from pathlib import Path
from typing import TYPE_CHECKING

import click

from arena.cli._common import Command, Exit, fail

if TYPE_CHECKING:
    from arena.fakeserver import FakeServerConfig


@click.command("fake-server", cls=Command)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8765,
    show_default=True,
    help="Port to listen on (0: any free port; the URL is printed).",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(path_type=Path),
    default=None,
    help="YAML with accepted keys, per-key limits, sim models and faults.",
)
def fake_server_cmd(host: str, port: int, config_file: Path | None) -> None:
    """Serve fake OpenAI, Anthropic and Gemini APIs answered by the simulator.

    Point a tournament's providers at it (openai: base_url URL/v1; anthropic
    and gemini: base_url URL) to rehearse rate limits, faults and budgets for
    free. It speaks POST /v1/chat/completions, POST /v1/messages and POST
    /v1beta/models/MODEL:generateContent, enforces per-key rpm/tpm with each
    API's own 429 headers and bodies, and injects the configured faults.
    GET /fake/stats shows its counters. Stop it with Ctrl-C.
    """
    # Imported here: aiohttp is an optional dependency (the `providers` extra)
    # and the rest of the CLI must work without it.
    try:
        from arena.fakeserver import bind_socket, load_fake_config
    except ImportError as exc:
        fail(
            f"fake-server needs a missing package ({exc.name}); "
            "install it with: pip install 'arena[providers]'",
            Exit.ERROR,
        )
    config = load_fake_config(config_file)
    try:
        sock = bind_socket(host, port)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", Exit.ERROR)
    asyncio.run(_serve(config, sock, host))


async def _serve(config: FakeServerConfig, sock: socket.socket, host: str) -> None:
    from arena.fakeserver import FakeProviderServer, start_site

    runner = await start_site(FakeProviderServer(config).app(), sock)
    port = sock.getsockname()[1]
    url = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    click.echo(
        f"arena fake-server: listening on {url}\n"
        f"  openai     base_url: {url}/v1\n"
        f"  anthropic  base_url: {url}\n"
        f"  gemini     base_url: {url}\n"
        f"  stats      GET {url}/fake/stats"
    )
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()
    click.echo("arena fake-server: stopped")
