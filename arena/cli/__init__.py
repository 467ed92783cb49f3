"""The `arena` command line."""

from __future__ import annotations

import click

from arena.cli._batcheval import batcheval_cmd
from arena.cli._common import Exit
from arena.cli._discuss import discuss_cmd
from arena.cli._fake_server import fake_server_cmd
from arena.cli._leaderboard import leaderboard
from arena.cli._plan import plan_cmd
from arena.cli._retry import retry_failed_cmd
from arena.cli._run import run_cmd
from arena.cli._status import status_cmd


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="arena")
def main() -> None:
    """Rank chat models by letting them review each other.

    Typical use: `arena plan T.yaml` to see what a run will cost, `arena run
    T.yaml` to run or resume it, `arena leaderboard runs/NAME` to rank.
    """


main.add_command(run_cmd)
main.add_command(plan_cmd)
main.add_command(leaderboard)
main.add_command(batcheval_cmd)
main.add_command(discuss_cmd)
main.add_command(status_cmd)
main.add_command(retry_failed_cmd)
main.add_command(fake_server_cmd)

__all__ = ["Exit", "main"]
