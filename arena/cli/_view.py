"""`arena view`: browse a run's log in a browser (a local web app)."""

from __future__ import annotations

import asyncio
import signal
import socket
from pathlib import Path

import click

from arena.cli._common import Command, Exit, fail
from arena.cli._ranking import reviews_options
from arena.viewer import RunData

__all__ = ["view_cmd"]


async def _serve(data: RunData, sock: socket.socket, ready: str, host: str) -> None:
    from aiohttp import web

    from arena.viewer import make_app

    runner = web.AppRunner(make_app(data, hosts=(host,)), access_log=None)
    await runner.setup()
    site = web.SockSite(runner, sock)
    await site.start()
    click.echo(ready)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await runner.cleanup()


@click.command("view", cls=Command)
@click.argument("directory", metavar="[DIR]", required=False, type=click.Path(path_type=Path))
@reviews_options
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="Address to listen on; the default serves this machine only.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port to listen on (0: any free port).",
)
def view_cmd(
    directory: Path | None,
    reviews_files: tuple[Path, ...],
    reviews_format: str | None,
    strong_win_weight: float,
    host: str,
    port: int,
) -> None:
    """Browse run directory DIR: questions, both answers, every review and discussion.

    Lists the reviews, filtered by model, reviewer, verdict and question
    category, a page at a time; choosing one shows its battle: the question,
    both answers side by side, every reviewer's verdict in both orders and
    any discussion. It reads the log as it is, also while `arena run` writes
    it (reloading when it changed). It serves only data read from DIR's log
    and questions, to this machine only unless --host says otherwise.
    Stop it with Ctrl-C.

    With --reviews FILE (repeatable, no DIR) it browses judgments made
    elsewhere, in any format `arena leaderboard --reviews` reads: each
    judgment with its battle, both answers where the file carries them.

    \b
    Examples:
      arena view runs/demo            # then open http://127.0.0.1:8000/
      arena view --reviews annotations.json
    """
    if reviews_files and directory is not None:
        fail("--reviews browses imported judgments alone: give no run directory with it")
    if directory is None and not reviews_files:
        fail("give a run directory (DIR) or judgments (--reviews FILE)")
    data: RunData
    if reviews_files:
        from arena.report import LeaderboardInputError, load_reviews_file

        try:
            judgments = load_reviews_file(
                list(reviews_files),
                format=reviews_format,
                strong_win_weight=strong_win_weight,
                keep_texts=True,
            )
        except LeaderboardInputError as exc:
            fail(str(exc))
        data = RunData(reviews_files[0], judgments=judgments)
        source = ", ".join(str(f) for f in reviews_files)
    else:
        assert directory is not None
        if not (directory / "log").is_dir():
            fail(f"{directory}: not a run directory (no log/)")
        source = str(directory)
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        fail("arena view needs aiohttp: pip install -e '.[providers]'", Exit.ERROR)
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        fail(f"cannot listen on {host}:{port}: {exc.strerror or exc}", Exit.ERROR)
    if not reviews_files:
        data = RunData(source)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    ready = f"arena view: {source} at http://{shown}:{bound}/ (Ctrl-C to stop)"
    asyncio.run(_serve(data, sock, ready, host))
