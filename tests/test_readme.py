"""The README's commands run and print what it shows; the YAML reference in docs/config.md is
a valid tournament; every YAML block in README.md and docs/*.md parses and validates; the CLI
reference names every command; the README stays short; no doc points outside the repository."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from arena.batcheval import load_setup
from arena.cli import main
from arena.config import ModelConfig, ProviderConfig, parse_config
from arena.fakeserver import FakeServerConfig

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CONFIG_DOC = ROOT / "docs" / "config.md"
CLI_DOC = ROOT / "docs" / "cli.md"


def _section(text: str, heading: str) -> str:
    """The body of the `## heading` section of a markdown text."""
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def test_readme_is_short() -> None:
    assert len(README.read_text().splitlines()) <= 300


def test_the_readme_tournament_is_the_shipped_demo() -> None:
    block = re.search(r"```yaml\n(.*?)```", _section(README.read_text(), "One tournament"), re.S)
    assert block is not None
    assert block.group(1) == (ROOT / "tournaments" / "demo.yaml").read_text()


def _table_rows(text: str) -> list[list[str]]:
    """The rows of the leaderboard's models table (rank first) as lists of cells."""
    return [
        line.split()
        for line in text.splitlines()
        if re.match(r"^\s*\d+\s+\d", line) and len(line.split()) >= 8
    ]


@pytest.mark.slow
def test_the_readme_commands_run_and_print_its_leaderboard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`arena run` and `arena leaderboard` as the README writes them, from a copy of the
    repository's tournaments/, print the models table the README shows (Elo within its
    order noise: the mean over fixed review orders)."""
    text = README.read_text()
    commands = re.search(r"```sh\n(.*?)```", _section(text, "The two commands"), re.S)
    assert commands is not None
    lines = [line.split("#")[0].split() for line in commands.group(1).splitlines()]
    assert [line[:2] for line in lines] == [["arena", "run"], ["arena", "leaderboard"]]
    shutil.copytree(ROOT / "tournaments", tmp_path / "tournaments")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    ran = runner.invoke(main, lines[0][1:])
    assert ran.exit_code == 0, ran.output
    board = runner.invoke(main, lines[1][1:])
    assert board.exit_code == 0, board.output
    shown = re.search(r"```text\n(.*?)```", _section(text, "Reading the leaderboard"), re.S)
    assert shown is not None
    expected, printed = _table_rows(shown.group(1)), _table_rows(board.stdout)[:6]
    assert len(expected) == 6 and len(printed) == 6
    for want, got in zip(expected, printed, strict=True):
        elo_want, elo_got = want.pop(-3), got.pop(-3)
        assert want == got
        assert abs(int(elo_want) - int(elo_got)) <= 10, (want, elo_want, elo_got)


def test_yaml_reference_validates() -> None:
    block = re.search(r"## Every key\s+```yaml\n(.*?)```", CONFIG_DOC.read_text(), re.S)
    assert block is not None
    cfg = parse_config(yaml.safe_load(block.group(1)), CONFIG_DOC)
    assert cfg.contestants == ["atlas", "boreal"]
    assert cfg.discussion is not None and cfg.batcheval is not None
    assert cfg.retry.max_retry_after == 300


def test_the_cli_reference_names_every_command() -> None:
    from arena.cli import COMMANDS

    table = _section(CLI_DOC.read_text(), "Commands")
    for name in COMMANDS:
        assert f"| `arena {name}" in table, name
    readme = README.read_text()
    assert "`arena run FILE`" in readme and "`arena leaderboard DIR`" in readme


def test_every_doc_link_resolves() -> None:
    for doc in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        if doc.name == "DESIGN.md":  # the contributors' design notes keep their own links
            continue
        for target in re.findall(r"\]\(([^)#\s]+)\)", doc.read_text()):
            if "://" in target:
                continue
            assert (doc.parent / target).exists(), f"{doc.relative_to(ROOT)}: {target}"


DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"```yaml\n(.*?)```", re.S)

# A valid tournament that section-only blocks are merged into (models the docs name).
BASE: dict[str, Any] = {
    "name": "docs",
    "questions": "q.jsonl",
    "providers": {"sim": {"type": "sim"}},
    "models": {n: {"provider": "sim"} for n in ("atlas", "boreal", "cirrus", "judge", "oracle")},
    "contestants": ["atlas", "boreal", "cirrus"],
    # Two reviewers besides each battle's contestants (discussions exclude those by default).
    "reviewers": ["atlas", "boreal", "cirrus", "judge", "oracle"],
}
_FAKE_SERVER_KEYS = {"faults", "keys", "forbidden_keys", "key_limits", "usage", "rate_headers"}


def _blocks() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for doc in DOCS:
        text = doc.read_text()
        for m in _BLOCK.finditer(text):
            line = text[: m.start()].count("\n") + 1
            found.append((f"{doc.relative_to(ROOT)}:{line}", m.group(1)))
    return found


BLOCKS = _blocks()


def test_the_docs_have_yaml_blocks() -> None:
    assert len(BLOCKS) >= 6


@pytest.mark.parametrize(("where", "block"), BLOCKS, ids=[w for w, _ in BLOCKS])
def test_yaml_block_parses_and_validates(where: str, block: str, tmp_path: Path) -> None:
    data = yaml.safe_load(block)
    assert isinstance(data, dict), where
    if _FAKE_SERVER_KEYS & set(data):
        FakeServerConfig.model_validate(data)
    elif "batcheval" in data and "contestants" not in data and "scorers" not in data:
        path = tmp_path / "b.yaml"
        path.write_text(block)
        if "providers" in data:  # a BatchEval file of its own
            load_setup(path)
        else:  # a section: validated inside a tournament
            parse_config({**BASE, **data}, where)
    elif set(data) == {"providers"}:
        for entry in data["providers"].values():
            ProviderConfig.model_validate(entry)
    elif set(data) == {"models"}:
        for entry in data["models"].values():
            ModelConfig.model_validate(entry)
    else:
        merged = {**BASE, **data}
        if "models" in data and "contestants" not in data:
            merged["models"] = {**BASE["models"], **data["models"]}
        if "contestants" in data and "reviewers" not in data:
            del merged["reviewers"]  # a whole tournament: its reviewers default to its contestants
        parse_config(merged, where)


_OUTSIDE = re.compile(r"\.\./|/work/|(?<![\w/.-])shared/")


_LINK = re.compile(r"\]\(([^)\s]+)\)")


def _inside(doc: Path, target: str) -> bool:
    """A relative link of `doc` that resolves to a path within the repository."""
    return "://" not in target and (doc.parent / target).resolve().is_relative_to(ROOT)


def test_no_doc_points_outside_the_repository() -> None:
    for doc in DOCS:
        for lineno, line in enumerate(doc.read_text().splitlines(), 1):
            # A link such as docs/cost.md's `](../benchmarks/RESULTS.md)` stays inside.
            links = [m.group(0) for m in _LINK.finditer(line) if _inside(doc, m.group(1))]
            text = line
            for link in links:
                text = text.replace(link, "]()")
            assert not _OUTSIDE.search(text), f"{doc.name}:{lineno}: {line.strip()}"


# A heading that carries a date ("(December 2026, sixth)") is a diary entry: measurements
# belong in benchmarks/RESULTS.md as dated tables, guides say what is true now.
_DATED = re.compile(
    r"\b(19|20)\d\d-\d\d-\d\d\b|\b(January|February|March|April|May|June|July|August|"
    r"September|October|November|December)\s+(19|20)\d\d\b"
)


def test_no_dated_sections_in_the_guides() -> None:
    for doc in DOCS:
        for lineno, line in enumerate(doc.read_text().splitlines(), 1):
            if line.startswith("#") or line.startswith("**"):
                assert not _DATED.search(line), f"{doc.name}:{lineno}: {line.strip()}"
