"""`arena view --reviews FILE`: browsing imported judgments alone, no run directory."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

from tests.viewer._support import Viewer, cli


def _json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as response:
        return json.loads(response.read())


def _mt_bench(tmp: Path) -> Path:
    """MT-bench pairwise judgments: each record is two reviews (both orders)."""
    rows = [
        {"question_id": 81, "model_1": "x", "model_2": "y", "g1_winner": "model_1",
         "g2_winner": "model_2", "judge": ["gpt-4", "pair-v2"], "turn": 1},
        {"question_id": 82, "model_1": "x", "model_2": "y", "g1_winner": "tie",
         "g2_winner": "model_1", "judge": ["gpt-4", "pair-v2"], "turn": 1},
    ]  # fmt: skip
    path = tmp / "gpt-4_pair.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _alpacaeval(tmp: Path) -> Path:
    rows = [
        {"instruction": "Say hi", "output_1": "hi", "generator_1": "ref", "output_2": "# Hello\n",
         "generator_2": "m1", "annotator": "judge", "dataset": "helpful_base", "preference": 1.75},
        {"instruction": "Say hi", "output_1": "hi", "generator_1": "ref", "output_2": "# Hello\n",
         "generator_2": "m1", "annotator": "judge2", "dataset": "helpful_base", "preference": 1.0},
    ]  # fmt: skip
    path = tmp / "annotations.json"
    path.write_text(json.dumps(rows))
    return path


def test_view_imported_judgments(tmp_path: Path) -> None:
    alpaca, mt_bench = _alpacaeval(tmp_path), _mt_bench(tmp_path)
    viewer = Viewer(None, "--reviews", str(alpaca), "--reviews", str(mt_bench))
    try:
        facets = _json(viewer.url + "api/facets")
        assert facets["run"] == "annotations.json"
        assert facets["models"] == ["m1", "ref", "x", "y"]
        assert facets["reviewers"] == ["gpt-4", "judge", "judge2"]
        assert facets["categories"] == ["helpful_base"]
        page = _json(viewer.url + "api/reviews?reviewer=gpt-4")
        assert page["total"] == 4
        assert [r["verdict"] for r in page["rows"]] == ["A", "A", "tie", "B"]
        # One battle: both annotators' judgments of m1 against ref, with both answers.
        first = _json(viewer.url + "api/reviews?model=m1")["rows"][0]["id"]
        battle = _json(viewer.url + "api/battle/" + first)
        assert battle["question"] == {"id": "Say hi", "turns": [], "category": "helpful_base"}
        assert [a["turns"] for a in battle["answers"]] == [["hi"], ["# Hello\n"]]
        assert [(r["reviewer"], r["verdict"], r["p_a"]) for r in battle["reviews"]] == [
            ("judge", "B", 0.25),
            ("judge2", "A", 1.0),
        ]
        # MT-bench's two orders of one question are one battle (g2 shows y first: y wins, A).
        mt = _json(viewer.url + "api/reviews?model=x")["rows"][0]["id"]
        both = _json(viewer.url + "api/battle/" + mt)["reviews"]
        assert [(r["model_a"], r["verdict"]) for r in both] == [("x", "A"), ("y", "A")]
    finally:
        assert viewer.close() == 0


def test_view_reviews_bad_input(tmp_path: Path) -> None:
    both = cli("view", str(tmp_path), "--reviews", str(_alpacaeval(tmp_path)), "--port", "0")
    assert both.exit_code == 2 and "give no run directory" in both.output
    neither = cli("view", "--port", "0")
    assert neither.exit_code == 2 and "--reviews FILE" in neither.output
    missing = cli("view", "--reviews", str(tmp_path / "nope.json"), "--port", "0")
    assert missing.exit_code == 2 and "nope.json: no such file" in missing.output
    forced = cli(
        "view",
        "--reviews",
        str(_mt_bench(tmp_path)),
        "--reviews-format",
        "alpacaeval",
        "--port",
        "0",
    )
    assert forced.exit_code == 2 and "gpt-4_pair.jsonl: line 1: instruction" in forced.output
