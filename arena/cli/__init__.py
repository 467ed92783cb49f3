"""The `arena` command line.

Commands are imported on first use, so `arena run` does not pay for the
imports of `arena fake-server` or `arena batcheval`, and `arena --help`
(which lists them with `SUMMARIES`) imports none of them.
"""

from __future__ import annotations

import importlib
from typing import Any

import click

from arena.cli._exit import Exit
from arena.cli._exit import exit_program as _exit_program
from arena.stages import COMMAND_SUMMARIES as _STAGE_SUMMARIES
from arena.stages import COMMANDS as _STAGE_COMMANDS

# command name -> "module:attribute"
COMMANDS: dict[str, str] = {
    "run": "arena.cli._run:run_cmd",
    "plan": "arena.cli._plan:plan_cmd",
    "leaderboard": "arena.cli._leaderboard:leaderboard",
    "status": "arena.cli._status:status_cmd",
    "retry-failed": "arena.cli._retry:retry_failed_cmd",
    "fake-server": "arena.cli._fake_server:fake_server_cmd",
    "report": "arena.cli._report:report_cmd",
    "view": "arena.cli._view:view_cmd",
    "export": "arena.cli._export:export_cmd",
    "gc": "arena.cli._gc:gc_cmd",
    "check": "arena.cli._check:check_cmd",
    "runs": "arena.cli._runs:runs_cmd",
}
COMMANDS.update(_STAGE_COMMANDS)  # the stages' own commands, registered in arena.stages
# command name -> the first sentence of its help (tests keep them equal).
SUMMARIES: dict[str, str] = {
    "run": "Run or resume the tournament in FILE.",
    "plan": "Show the calls FILE needs per provider and model, and how many are already done.",
    "leaderboard": "Rank models from a run directory or from a file of pairwise judgments.",
    "status": "Planned, done, invalid, failed, stale and pending calls of DIR, per stage and "
    "provider.",
    "retry-failed": "Run again only the answers and reviews of DIR logged as failed.",
    "discuss": "Discuss the disputed battles of the tournament in DIR, from its logged reviews.",
    "batcheval": "Score every sample in SAMPLES.jsonl (`id`, `text`, optional `context`) with "
    "BatchEval.",
    "fake-server": "Serve fake OpenAI, Anthropic and Gemini APIs answered by the simulator.",
    "report": "Write the report of run directory DIR as one HTML file that opens offline.",
    "view": "Browse run directory DIR: questions, both answers, every review and discussion.",
    "export": "Write each table of DIR's log to OUT/<table>.parquet, one row per id.",
    "gc": "Merge each log table of DIR into one Parquet part; archive stale rows.",
    "check": "Check the tournament YAML FILE before a run, without any paid call.",
    "runs": "List every run of DIR: id, start, end, exit code, status, calls, spend, snapshot.",
}


# Whether this process is the `arena` program (see LazyGroup.__call__).
_PROGRAM = False


class LazyGroup(click.Group):
    """A click group that imports a command's module only when it is needed."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(COMMANDS) | set(_STAGE_COMMANDS))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name) or _STAGE_COMMANDS.get(cmd_name)  # registered later
        if target is None:
            return super().get_command(ctx, cmd_name)
        module_name, _, attr = target.partition(":")
        if _PROGRAM:  # the program's own process, not a caller's (tests, scripts)
            from arena.runtime import RUN_COMMANDS, pause_collector, signals_for_command

            pause_collector(cmd_name)  # while the command loads (arena.runtime)
            # a run command ends with its record whenever a signal comes; others stop
            signals_for_command(recorded=cmd_name in RUN_COMMANDS)
        command = getattr(importlib.import_module(module_name), attr)
        if not isinstance(command, click.Command):
            raise TypeError(f"{target} is not a click command")
        return command

    def _summary(self, ctx: click.Context, name: str) -> str:
        summary = SUMMARIES.get(name) or _STAGE_SUMMARIES.get(name)
        if summary is not None:
            return summary
        command = self.get_command(ctx, name)  # a command without a summary: imported
        return command.get_short_help_str() if command is not None else ""

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list from SUMMARIES, without importing any command."""
        rows = [(name, self._summary(ctx, name)) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """`main()` without arguments is the program (`arena ...`, `python -m arena`);
        `main([...])` and a CliRunner (which calls `main`) keep click's behaviour.

        In the program, SIGINT and SIGTERM are noted from its start
        (`arena.runtime.defer_signals`, already by `arena.__main__.program`): one
        while the CLI loads ends the command as interrupted (130 / 143; a run with
        its record and `--json` line); one once the command has ended leaves its
        exit code as it is. The process ends as soon as the command has (its
        files written and closed, its output flushed): without the interpreter's
        teardown, which a signal could otherwise cut with a traceback or kill
        outright (the handlers are reset to the default late in the teardown).
        """
        if args or kwargs:
            return self.main(*args, **kwargs)
        from arena.runtime import defer_signals

        global _PROGRAM
        _PROGRAM = True
        defer_signals()
        try:
            self.main(*args, **kwargs)
            code: Any = 0
        except SystemExit as exc:
            code = exc.code
        _exit_program(code)

    def invoke(self, ctx: click.Context) -> Any:
        """Run the command; a signal at any moment exits 130 / 143, a log that cannot be
        written 74."""
        # Imported here, not at the top: `arena --help` must not load the config and the store.
        from arena.cli._common import exit_on_fault

        try:
            with exit_on_fault(as_json="--json" in ctx.args):
                return super().invoke(ctx)
        finally:
            if _PROGRAM:  # its exit code decided: click's and Python's cleanup are not cut
                from arena.runtime import signals_end

                signals_end()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="arena")
def main() -> None:
    """Rank chat models by letting them review each other.

    Typical use: `arena plan T.yaml` to see what a run will cost, `arena run
    T.yaml` to run or resume it, `arena leaderboard runs/NAME` to rank,
    `arena status runs/NAME` to see what is done. Exit codes: 0 complete,
    1 internal error, 2 bad input, 3 partial, 4 budget reached, 74 log not
    writable, 75 locked, 130/143 interrupted.
    """


__all__ = ["COMMANDS", "SUMMARIES", "Exit", "LazyGroup", "main"]
