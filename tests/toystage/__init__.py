"""A toy stage, added the way docs/DESIGN.md ("Adding a stage") tells: one package, one line.

`grades:` asks a grader model to grade every answer of the tournament from 1
to 5. Everything about the stage is declared here, in `GRADES_STAGE`; the
test registers it with `arena.stages.register_stage("tests.toystage:GRADES_STAGE")`.
"""

from __future__ import annotations

from tests.toystage._stage import GRADES_STAGE

__all__ = ["GRADES_STAGE"]
