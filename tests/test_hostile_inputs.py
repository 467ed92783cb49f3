"""Hostile and damaged inputs (issue 46, items 5-7): every one a clean exit 2 naming the
file, the place and the field (or, for a run directory's own files, the file and the
fix), never a traceback, a hang or a silent accept.

- Tournament YAML: `arena check` and `arena run` share one validation layer (the
  schema and `load_tournament`), so each case is refused by both, with the same
  message; the cases that used to hang a run are also run as the real program
  under a timeout.
- Input files the YAML names (questions, answers, the examples pool).
- Judgment files (`arena leaderboard --reviews`) of every format.
- A run directory's own files, damaged, under every command that reads them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from arena.cli import main
from tests.conftest import REPO, small_tournament

DEEP = "[" * 10_000 + "]" * 10_000
FAST = ["--elo-orders", "5", "--bootstrap", "20"]


def cli(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def clean_exit(result: Result, code: int) -> str:
    """The output of a command that ended as it should: no exception escaped it."""
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"a traceback: {result.exception!r}\n{result.output}")
    assert "Traceback" not in result.output, result.output
    assert result.exit_code == code, result.output
    return result.output


# --- the tournament YAML: check and run refuse alike ------------------------------


def _set(path: str, value: Any) -> Callable[[dict[str, Any], Path], None]:
    def change(config: dict[str, Any], folder: Path) -> None:
        *parents, last = path.split(".")
        node = config
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value

    return change


BATCHEVAL = {
    "scorers": ["m0"],
    "criteria": [{"name": "c", "description": "d", "scale": {"low": 1, "high": 5}}],
}


def _batcheval(**changes: Any) -> Callable[[dict[str, Any], Path], None]:
    def change(config: dict[str, Any], folder: Path) -> None:
        section = json.loads(json.dumps(BATCHEVAL))
        for key, value in changes.items():
            if key == "low":
                section["criteria"][0]["scale"]["low"] = value
            else:
                section[key] = value
        config["batcheval"] = section

    return change


def _template(config: dict[str, Any], folder: Path) -> None:
    (folder / "judge.txt").write_text(
        "Q: {question}\nA: {answer_a}\nB: {answer_b}\n{__import__}\n[[A]] [[B]] [[tie]]\n"
    )
    config["review"] = {"template": "judge.txt"}


def _file(name: str, text: str) -> Callable[[dict[str, Any], Path], None]:
    def change(config: dict[str, Any], folder: Path) -> None:
        (folder / name).write_text(text)

    return change


def _answers(text: str) -> Callable[[dict[str, Any], Path], None]:
    def change(config: dict[str, Any], folder: Path) -> None:
        (folder / "answers.jsonl").write_text(text)
        config["models"]["m1"] = {"answers": "answers.jsonl"}
        config["reviewers"] = ["m0"]

    return change


def _pool(row: str) -> Callable[[dict[str, Any], Path], None]:
    def change(config: dict[str, Any], folder: Path) -> None:
        (folder / "pool.jsonl").write_text(row + "\n")
        config["examples"] = {"pool": "pool.jsonl", "k": 1}

    return change


_POOL_ROW = '{"id": "e1", "question_id": "x", "question": "Q%s", "answer_a": "a", '
_POOL_ROW += '"answer_b": "b", "verdict": "A"%s}'

# case -> (the change, the file named, the key named: "" for an input file's line)
CONFIG_CASES: dict[str, tuple[Callable[[dict[str, Any], Path], None], str, str]] = {
    "limits.tpm .inf": (_set("providers.sim.limits.tpm", float("inf")), "t.yaml", "tpm"),
    "limits.rpm 1e-9 (hung)": (_set("providers.sim.limits.rpm", 1e-9), "t.yaml", "rpm"),
    "batcheval scale low .nan": (_batcheval(low=float("nan")), "t.yaml", "scale.low"),
    "batcheval rounds 1e9 (hung)": (_batcheval(rounds=10**9), "t.yaml", "batcheval.rounds"),
    "sim answer_words 1e9 (hung)": (
        _set("models.m0.sim.answer_words", 10**9),
        "t.yaml",
        "models.m0.sim.answer_words",
    ),
    "sim latency_mean .inf (hung)": (
        _set("models.m0.sim.latency_mean", float("inf")),
        "t.yaml",
        "models.m0.sim.latency_mean",
    ),
    "sim skill .nan": (_set("models.m0.sim.skill", float("nan")), "t.yaml", "sim.skill"),
    "sim skill .inf": (_set("models.m0.sim.skill", float("inf")), "t.yaml", "sim.skill"),
    "temperature .inf": (_set("models.m0.temperature", float("inf")), "t.yaml", "temperature"),
    "template placeholder {__import__}": (_template, "t.yaml", "review.template"),
    "alert command with an unbalanced quote": (
        _set("alerts", {"command": "notify 'night failed"}),
        "t.yaml",
        "alerts.command",
    ),
    "questions 10,000 deep": (
        _file("q.jsonl", '{"id": "q0", "text": "Q?", "x": ' + DEEP + "}\n"),
        "q.jsonl",
        "line 1",
    ),
    "answers 10,000 deep": (
        _answers('{"question_id": "q0", "choices": ' + DEEP + "}\n"),
        "answers.jsonl",
        "line 1",
    ),
    "examples pool 10,000 deep": (
        _pool(_POOL_ROW % ("", ', "z": ' + DEEP)),
        "pool.jsonl",
        "line 1",
    ),
    "examples pool lone surrogate": (
        _pool(_POOL_ROW % ("\\ud800", "")),
        "pool.jsonl",
        "line 1: question",
    ),
}
HUNG = [case for case in CONFIG_CASES if case.endswith("(hung)")]


def _hostile_tournament(folder: Path, case: str) -> Path:
    path = small_tournament(folder, models=2, questions=2)
    config = yaml.safe_load(path.read_text())
    CONFIG_CASES[case][0](config, folder)
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@pytest.mark.parametrize("case", list(CONFIG_CASES))
def test_check_and_run_refuse_alike_naming_file_and_field(tmp_path: Path, case: str) -> None:
    path = _hostile_tournament(tmp_path, case)
    _, file, field = CONFIG_CASES[case]
    checked = clean_exit(cli("check", str(path)), 2)
    ran = clean_exit(cli("run", str(path)), 2)
    errors = [line for line in ran.splitlines() if line.startswith("arena: error:")]
    assert checked.splitlines() == errors  # one validation layer: the same problem, words
    assert f"arena: error: {tmp_path / file}" in ran or f"arena: error: {file}" in ran, ran
    assert field in ran, ran
    if file == "t.yaml":  # the key's line in the YAML
        assert "(line " in ran, ran
    assert not (tmp_path / "out" / "log").exists()  # nothing was called or logged


@pytest.mark.parametrize("case", HUNG)
def test_inputs_that_hung_a_run_end_at_once_in_the_program(tmp_path: Path, case: str) -> None:
    path = _hostile_tournament(tmp_path, case)
    done = subprocess.run(
        [sys.executable, "-m", "arena", "run", str(path), "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["exit_code"] == 2


# --- judgment files of every format -------------------------------------------------

_ROWS = [
    {"question_id": f"q{i}", "model_a": "x", "model_b": "y", "reviewer": "r", "verdict": "A"}
    for i in range(3)
]
_BATTLES = [
    {"question_id": f"q{i}", "model_a": "x", "model_b": "y", "winner": "model_a"} for i in range(3)
]
_PRD = "ratings-judge/answer_x-vs-answer_y-judge-reviewer_threeclass.jsonl"


def _jsonl(rows: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row) + "\n" for row in rows)


def _with(rows: list[dict[str, Any]], at: int, **changes: Any) -> list[dict[str, Any]]:
    out = [dict(row) for row in rows]
    out[at].update(changes)
    return out


# case -> (file name, content, what the message names)
JUDGMENT_CASES: dict[str, tuple[str, str, str]] = {
    ".json judgments 10,000 deep": (
        "deep.json",
        json.dumps(_ROWS)[:-1] + ', {"question_id": "q9", "z": ' + DEEP + "}]",
        "nested deeper than",
    ),
    "p_a as a list": ("p.jsonl", _jsonl(_with(_ROWS, 2, verdict=None, p_a=[0.5])), "line 3: p_a"),
    "verdict as a list": ("v.jsonl", _jsonl(_with(_ROWS, 0, verdict=["A"])), "line 1: verdict"),
    "model_a as an object": (
        "m.jsonl",
        _jsonl(_with(_ROWS, 1, model_a={"x": 1})),
        "line 2: model_a",
    ),
    "category objects": (
        "c.jsonl",
        _jsonl([{**row, "category": {"name": "math"}} for row in _ROWS]),
        "line 1: category",
    ),
    "turn 'x' (arena)": ("tx.jsonl", _jsonl(_with(_ROWS, 0, turn="x")), "line 1: turn"),
    "turn -5 (arena)": ("tn.jsonl", _jsonl(_with(_ROWS, 1, turn=-5)), "line 2: turn"),
    "turn 'x' (arena, CSV)": (
        "t.csv",
        "question_id,model_a,model_b,reviewer,verdict,turn\nq1,x,y,r,A,2\nq2,x,y,r,B,x\n",
        "line 3: turn",
    ),
    "category objects (Chatbot Arena)": (
        "cc.jsonl",
        _jsonl(_with(_BATTLES, 0, category={"a": 1})),
        "line 1: category",
    ),
    "conversation as a string (Chatbot Arena)": (
        "cs.jsonl",
        _jsonl(_with(_BATTLES, 0, conversation_a="hello", conversation_b="hi")),
        "line 1: conversation_a",
    ),
    "conversation as an object (Chatbot Arena)": (
        "co.jsonl",
        _jsonl(_with(_BATTLES, 2, conversation_a={"role": "assistant"})),
        "line 3: conversation_a",
    ),
    "PRD score NaN": (_PRD, '{"question_id": "q1", "score": NaN}\n', "line 1: score"),
    "PRD score pair [NaN, 1]": (
        _PRD,
        '{"question_id": "q2", "score": 1}\n{"question_id": "q1", "score": [NaN, 1]}\n',
        "line 2: score",
    ),
}


@pytest.mark.parametrize("case", list(JUDGMENT_CASES))
def test_judgment_files_name_file_line_and_field(tmp_path: Path, case: str) -> None:
    name, content, named = JUDGMENT_CASES[case]
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    out = clean_exit(cli("leaderboard", "--reviews", str(path), *FAST), 2)
    assert f"arena: error: {path}: " in out and named in out, out


def test_well_formed_judgments_of_the_same_shapes_are_ranked(tmp_path: Path) -> None:
    """The checks refuse the wrong types only: the same files, well formed, rank."""
    files = {
        "ok.jsonl": _jsonl([{**row, "turn": 2, "category": "math"} for row in _ROWS]),
        "battles.jsonl": _jsonl(
            _with(_BATTLES, 0, conversation_a=[{"role": "assistant", "content": "hi"}])
        ),
        _PRD: '{"question_id": "q1", "score": [7, 3]}\n{"question_id": "q2", "score": 3}\n',
    }
    for name, content in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
        clean_exit(cli("leaderboard", "--reviews", str(path), *FAST), 0)


# --- a run directory's own files, damaged -------------------------------------------


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with a tournament (budget_usd set) and its finished run in out/."""
    root = tmp_path_factory.mktemp("damaged")
    path = small_tournament(root, models=2, questions=2, extra={"budget_usd": 5.0})
    clean_exit(cli("run", str(path)), 0)
    return root


def _damaged(finished: Path, tmp_path: Path, damage: Callable[[Path], None]) -> Path:
    folder = tmp_path / "t"
    shutil.copytree(finished, folder)
    config = folder / "t.yaml"
    config.write_text(config.read_text().replace(str(finished), str(folder)))
    damage(folder / "out")
    return folder


def _commands(folder: Path) -> dict[str, list[str]]:
    out = str(folder / "out")
    return {
        "status": ["status", out],
        "leaderboard": ["leaderboard", out, *FAST],
        "report": ["report", out, "-o", str(folder / "report.html")],
        "gc": ["gc", out],
        "export": ["export", out, "--to", str(folder / "export")],
        "run": ["run", str(folder / "t.yaml")],
    }


def _manifest_a_directory(out: Path) -> None:
    manifest = out / "log" / "manifest.json"
    manifest.unlink()
    manifest.mkdir()


@pytest.mark.parametrize("command", ["status", "leaderboard", "report", "gc", "export", "run"])
def test_log_manifest_as_a_directory(finished: Path, tmp_path: Path, command: str) -> None:
    folder = _damaged(finished, tmp_path, _manifest_a_directory)
    out = clean_exit(cli(*_commands(folder)[command]), 2)
    manifest = folder / "out" / "log" / "manifest.json"
    assert f"{manifest}: a directory" in out and f"rm -r {manifest}" in out, out
    manifest.rmdir()  # the fix it names
    clean_exit(cli(*_commands(folder)[command]), 0)


def _journal_with_a_lone_surrogate(out: Path) -> None:
    journal = out / "log" / "reviews.journal.jsonl"
    with journal.open("a") as handle:
        handle.write('{"id": "rv-\\udc80", "status": "ok", "verdict": "A"}\n')


@pytest.mark.parametrize("command", ["status", "leaderboard", "report", "gc", "export", "run"])
def test_a_journal_line_with_a_lone_surrogate(finished: Path, tmp_path: Path, command: str) -> None:
    folder = _damaged(finished, tmp_path, _journal_with_a_lone_surrogate)
    with pytest.warns(RuntimeWarning, match="reviews.journal.jsonl: 1 journal line"):
        clean_exit(cli(*_commands(folder)[command]), 0)


def _truncated_plan(out: Path) -> None:
    plan = out / "plan.parquet"
    plan.write_bytes(plan.read_bytes()[: plan.stat().st_size // 2])


@pytest.mark.parametrize("command", ["leaderboard", "report", "gc"])
def test_a_truncated_plan_file_names_it_and_the_fix(
    finished: Path, tmp_path: Path, command: str
) -> None:
    folder = _damaged(finished, tmp_path, _truncated_plan)
    out = clean_exit(cli(*_commands(folder)[command]), 2)
    plan = folder / "out" / "plan.parquet"
    assert f"{plan}: the plan file cannot be read" in out and "`arena run`" in out, out
    clean_exit(cli(*_commands(folder)["status"]), 0)  # the plan comes from the YAML there
    clean_exit(cli(*_commands(folder)["run"]), 0)  # writes the plan file again
    clean_exit(cli(*_commands(folder)[command]), 0)


def _garbled_ledger(out: Path) -> None:
    (out / "log" / "spend_ledger.json").write_text('{"version": 1, "entries": [{"cost_')


@pytest.mark.parametrize("command", ["status", "gc", "run"])
def test_a_garbled_spend_ledger_names_it_and_the_fix(
    finished: Path, tmp_path: Path, command: str
) -> None:
    folder = _damaged(finished, tmp_path, _garbled_ledger)
    out = clean_exit(cli(*_commands(folder)[command]), 2)
    ledger = folder / "out" / "log" / "spend_ledger.json"
    assert f"{ledger}: the spend ledger cannot be read" in out and f"mv {ledger}" in out, out


@pytest.mark.parametrize("content", ["[1, 2, 3]", '{"exit_code": "x", "errors": 7}', "{oops"])
def test_a_last_run_file_of_the_wrong_shape_is_reported(
    finished: Path, tmp_path: Path, content: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A warning on stderr (the `arena.rundir` logger) naming the file and the fix."""

    def damage(out: Path) -> None:
        (out / "last_run.json").write_text(content)

    folder = _damaged(finished, tmp_path, damage)
    clean_exit(cli("status", str(folder / "out")), 0)
    assert f"{folder / 'out' / 'last_run.json'} is not a run record" in caplog.text
    assert "the next `arena run` writes it again" in caplog.text
    clean_exit(cli("run", str(folder / "t.yaml")), 0)  # which it does
    assert json.loads((folder / "out" / "last_run.json").read_text())["exit_code"] == 0
