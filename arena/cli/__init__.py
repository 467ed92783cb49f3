"""The `arena` command line.

Commands are imported on first use, so `arena run` does not pay for the
imports of `arena fake-server` or `arena batcheval`.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from arena.cli._common import Exit, exit_on_fault

# command name -> "module:attribute"
COMMANDS: dict[str, str] = {
    "run": "arena.cli._run:run_cmd",
    "plan": "arena.cli._plan:plan_cmd",
    "leaderboard": "arena.cli._leaderboard:leaderboard",
    "status": "arena.cli._status:status_cmd",
    "retry-failed": "arena.cli._retry:retry_failed_cmd",
    "discuss": "arena.cli._discuss:discuss_cmd",
    "batcheval": "arena.cli._batcheval:batcheval_cmd",
    "fake-server": "arena.cli._fake_server:fake_server_cmd",
    "report": "arena.cli._report:report_cmd",
    "view": "arena.cli._view:view_cmd",
    "export": "arena.cli._export:export_cmd",
    "gc": "arena.cli._gc:gc_cmd",
}


class LazyGroup(click.Group):
    """A click group that imports a command's module only when it is needed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, _, attr = target.partition(":")
        command = getattr(importlib.import_module(module_name), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; Ctrl-C at any moment exits 130, a log that cannot be written 74."""
        with exit_on_fault(as_json="--json" in ctx.args):
            return super().invoke(ctx)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="arena")
def main() -> None:
    """Rank chat models by letting them review each other.

    Typical use: `arena plan T.yaml` to see what a run will cost, `arena run
    T.yaml` to run or resume it, `arena leaderboard runs/NAME` to rank,
    `arena status runs/NAME` to see what is done. Exit codes: 0 complete,
    2 bad input, 3 partial, 4 budget reached, 74 log not writable, 75 locked,
    130/143 interrupted.
    """


__all__ = ["COMMANDS", "Exit", "LazyGroup", "main"]
