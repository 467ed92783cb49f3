"""PeerDiscussion on pairwise expert-labelled items (PRD's LFQA file): the reader, and
`arena discuss --human` reporting accuracy per leader and pooled."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import yaml
from click.testing import CliRunner

import arena.discuss  # noqa: F401  (registers the stage)
from arena.cli import main
from arena.discuss import TABLE
from arena.formats import FormatError, read_answer_file, read_judgments, read_questions
from arena.formats._pairwise_items import read_pairwise_items
from arena.report import load_reviews_file
from arena.store import RunLog

# Rows in the shape of PRD's data/lfqa/experts_pairwise_human_preferences.jsonl as
# shipped: every field, nulls, "\/" escapes, one row per expert label. Item 1 has
# three labels (two A, one B), item 2 one (B), item 3 two that split (a tie by
# plurality), item 4 is shown once in each order (the second row's label mirrored).
_ROW = (
    '{{"question":"{q}","answer_a":"{a}","answer_b":"{b}","doc_a":null,"doc_b":null,'
    '"answer_a_type":"human","answer_b_type":"machine","overall_preference":{p},'
    '"coherence_preference":null,"factuality_preference":null,'
    '"justification":"Answer {w} is better supported.<br \\/>See the sources."}}'
)
_ITEMS = [
    (
        "Who trained the soldiers at Valley Forge?",
        "Steuben, a Prussian officer.<br \\/>Source: a book.",
        "Nobody trained them.",
    ),
    (
        "Why do people shout Geronimo?",
        "Since Geronimo fought in Arizona, where did the story come from?",
        "Paratroopers in 1940 took it from a film about the Apache leader.",
    ),
    (
        "What is a metalled road?",
        "A road made of compacted broken stone.",
        "A road with a gravel surface, as opposed to dirt.",
    ),
    (
        "How were concubines chosen in Han China?",
        "Officials toured the capital looking for ladies of good family.",
        "They were sold at markets.",
    ),
]
_LABELS = [(0, -1), (0, -1), (0, 1), (1, 1), (2, -1), (2, 1), (3, -1), (3, None)]


def _lines() -> list[str]:
    lines = []
    for n, (item, pref) in enumerate(_LABELS):
        q, a, b = _ITEMS[item]
        if item == 3 and n == 7:
            a, b, pref = b, a, 1  # item 4 again, answers swapped: B here is A there
        lines.append(_ROW.format(q=q, a=a, b=b, p=json.dumps(pref), w="A" if pref == -1 else "B"))
    return lines


def write_items(folder: Path) -> Path:
    path = folder / "experts_pairwise_human_preferences.jsonl"
    path.write_text("\n".join(_lines()) + "\n")
    return path


def test_the_reader_groups_rows_into_items_with_their_labels(tmp_path: Path) -> None:
    items = read_pairwise_items(write_items(tmp_path))
    assert [i.labels for i in items] == [("A", "A", "B"), ("B",), ("A", "B"), ("A", "A")]
    assert items[0].answer_a.startswith("Steuben") and "<br />" in items[0].answer_a
    assert len({i.id for i in items}) == 4 and all(i.id.startswith("item-") for i in items)
    # the same items in a second file, rows in another order, keep their ids (the row
    # showing item 4 swapped stays after the one that introduces it)
    again = tmp_path / "again"
    again.mkdir()
    lines = _lines()
    (again / "x.jsonl").write_text("\n".join([*reversed(lines[:7]), lines[7]]) + "\n")
    assert {i.id for i in read_pairwise_items(again / "x.jsonl")} == {i.id for i in items}


def test_the_file_reads_as_questions_answers_and_judgments_also_as_csv(tmp_path: Path) -> None:
    path = write_items(tmp_path)
    rows = [json.loads(line) for line in _lines()]
    csv_path = tmp_path / "items.csv"
    pl.DataFrame(rows).select(
        "question", "answer_a", "answer_b", "overall_preference", "justification"
    ).write_csv(csv_path)
    for source in (path, csv_path):
        questions = read_questions(source)
        assert [q.turns[0] for q in questions] == [q for q, _, _ in _ITEMS]
        first = read_answer_file(source, questions, select="answer_a")
        second = read_answer_file(source, questions, select="answer_b")
        assert first.model_ids == ("answer_a", "answer_b") and not first.problems
        assert first.answers[questions[1].id] == (_ITEMS[1][1],)
        assert second.answers[questions[3].id] == (_ITEMS[3][2],)
        judged = read_judgments(source)
        assert judged.format == "pairwise-items" and len(judged) == 8
        assert judged.columns["reviewer"][:3] == ["expert1", "expert2", "expert3"]
        frame = load_reviews_file(source)
        assert frame.height == 8 and set(frame["model_a"]) == {"answer_a"}


@pytest.mark.parametrize(
    ("value", "problem"),
    [("2", "must be -1 (answer A preferred), 0 (a tie) or 1"), ('"better"', "not 'better'")],
)
def test_a_bad_label_names_the_file_row_and_field(tmp_path: Path, value: str, problem: str) -> None:
    lines = _lines()
    lines[2] = lines[2].replace('"overall_preference":1', f'"overall_preference":{value}')
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(FormatError) as err:
        read_pairwise_items(path)
    assert "bad.jsonl" in str(err.value) and "line 3: overall_preference" in str(err.value)
    assert problem in str(err.value)


def test_an_empty_answer_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        _lines()[0].replace('"answer_b":"Nobody trained them."', '"answer_b":""') + "\n"
    )
    with pytest.raises(FormatError, match="line 1: answer_b: must be a non-empty string"):
        read_pairwise_items(path)


def _tournament(folder: Path, items: Path) -> Path:
    reviewer = {"provider": "sim", "sim": {"judge_noise": 0.5, "position_bias": 0.3}}
    config = {
        "name": "lfqa",
        "seed": 2,
        "questions": items.name,
        "output": str(folder / "out"),
        "providers": {"sim": {"type": "sim"}},
        "models": {
            "answer_a": {"answers": items.name},
            "answer_b": {"answers": items.name},
            "gpt4": {**reviewer},
            "claude": {"provider": "sim", "sim": {"skill": 0.5, "judge_noise": 0.8}},
        },
        "contestants": ["answer_a", "answer_b"],
        "reviewers": ["gpt4", "claude"],
        # PRD's accuracy protocol: every battle, each discussant leading once
        "discussion": {
            "discussants": ["gpt4", "claude"],
            "battles": "all",
            "leader": "both",
            "max_turns": 2,
        },
    }
    path = folder / "lfqa.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def test_arena_discusses_the_items_and_reports_accuracy_per_leader(tmp_path: Path) -> None:
    items = write_items(tmp_path)
    runner = CliRunner()
    ran = runner.invoke(main, ["run", str(_tournament(tmp_path, items))])
    assert ran.exit_code == 0, ran.output
    out = tmp_path / "out"
    finals = RunLog(out).read(TABLE).filter(pl.col("kind") == "final")
    # 4 items x 2 orders x 2 leaders
    assert finals.height == 16 and set(finals["leader"]) == {"gpt4", "claude"}

    result = runner.invoke(main, ["discuss", str(out), "--human", str(items), "--json"])
    assert result.exit_code == 0, result.output
    acc = json.loads(result.stdout.strip().splitlines()[-1])["human_accuracy"]
    # item 3's labels split (a tie): labelled too; every discussion has a label
    assert acc["labelled"] == 16 and acc["unlabelled"] == 0
    assert set(acc["by_leader"]) == {"gpt4", "claude"}
    assert [acc["by_leader"][m]["labelled"] for m in ("claude", "gpt4")] == [8, 8]

    # the figures against the labels, recomputed from the log
    log = RunLog(out).read(TABLE)
    label = {0: "A", 1: "B", 2: "tie", 3: "A"}
    ids = {q.id: n for n, q in enumerate(read_questions(items))}
    initial = {
        (d, s): p
        for d, s, p in log.filter(pl.col("kind") == "initial")
        .select("discussion_id", "speaker", "preference")
        .iter_rows()
    }
    per_leader: dict[str, list[float]] = {"gpt4": [], "claude": []}
    for row in finals.iter_rows(named=True):
        truth = label[ids[row["question_id"]]]
        if row["model_a"] == "answer_b":  # the mirrored battle: the label mirrored
            truth = {"A": "B", "B": "A", "tie": "tie"}[truth]
        hits = [
            initial[(row["discussion_id"], s)] == truth for s in (row["leader"], row["follower"])
        ]
        per_leader[row["leader"]].append(sum(hits) / 2)
    for leader, values in per_leader.items():
        block = acc["by_leader"][leader]["before"]
        assert block["value"] == pytest.approx(sum(values) / len(values))
        assert block["low"] <= block["value"] <= block["high"]
    pooled = per_leader["gpt4"] + per_leader["claude"]
    assert acc["before"]["value"] == pytest.approx(sum(pooled) / len(pooled))
    for key in ("after", "change", "verdict", "verdict_agreed"):
        assert set(acc["by_leader"]["gpt4"][key]) == {"value", "low", "high"}

    plain = runner.invoke(main, ["discuss", str(out), "--human", str(items)])
    assert plain.exit_code == 0, plain.output
    text = " ".join(plain.output.split())
    assert "accuracy vs human labels (16 labelled discussions" in text
    assert "led by claude (8): before" in text and "led by gpt4 (8): before" in text
