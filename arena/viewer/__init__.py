"""Reading a run's battles: the data behind `arena view` and the HTML report's battles.

`RunData(DIR)` reads a run directory's log (also while a run writes it) and
lists, filters and pages its reviews, and gives each battle in full: the
question, both answers, every review and discussion. `make_app` is the
`arena view` web app over it (needs aiohttp, from arena's `providers` extra).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from arena.viewer._battles import VERDICTS, BattleFilter, Question, RunData, load_questions

if TYPE_CHECKING:
    from aiohttp import web

__all__ = ["VERDICTS", "BattleFilter", "Question", "RunData", "load_questions", "make_app"]


def make_app(data: RunData, hosts: Iterable[str] = ()) -> web.Application:
    """The `arena view` web app of a run's data (imports aiohttp).

    It serves only requests whose Host header is a loopback name, the address
    they came in on, or one of `hosts` (such as `--host`), with its port.
    """
    from arena.viewer._app import make_app as build

    return build(data, hosts)
