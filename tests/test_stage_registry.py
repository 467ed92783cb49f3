"""The registry of parts (`arena.stages`): what each declares, and the index `arena --help` uses."""

from __future__ import annotations

from arena.cli import SUMMARIES
from arena.stage import ReviewSelectorPart, Stage
from arena.stages import COMMANDS, all_parts, all_stages
from arena.store import TABLES


def test_the_selector_comes_first_then_the_stages_in_run_order() -> None:
    parts = all_parts()
    assert [p.name for p in parts] == ["sampling", "discussions", "batcheval"]
    assert isinstance(parts[0], ReviewSelectorPart)
    assert all(isinstance(p, Stage) for p in parts[1:])
    assert all_stages() == parts[1:]


def test_the_command_index_is_what_the_parts_declare() -> None:
    # `arena --help` lists the stages' commands from arena.stages.COMMANDS and
    # arena.cli.SUMMARIES without loading a stage: both must say what the parts do.
    declared = {p.command.name: p.command for p in all_parts() if p.command is not None}
    assert {name: c.target for name, c in declared.items()} == {
        name: COMMANDS[name] for name in declared
    }
    assert set(declared) == {"discuss", "batcheval"}
    for name, command in declared.items():
        assert SUMMARIES[name] == command.summary


def test_loading_the_parts_registers_their_tables() -> None:
    tables = {t.name: t for p in all_parts() for t in p.tables}
    assert set(tables) == {"sampling", "discussions", "batcheval"}
    assert all(name in TABLES for name in tables)
    assert tables["batcheval"].on_answers and tables["batcheval"].model_column == "scorer"
    assert tables["discussions"].model_column == "speaker"
