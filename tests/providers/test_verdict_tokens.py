"""A review template that declares its verdict tokens (`review.verdicts`): FastChat pair-v2 and
arena-hard style prompts, parsed by their own tokens, replayed and simulated with them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import yaml
from click.testing import CliRunner, Result

from arena.cli import main
from arena.config import load_tournament
from arena.pipeline import build_plan, review_context
from arena.store import RunLog
from arena.viewer import RunData
from tests.conftest import small_tournament

RANKED = ["--elo-orders", "0", "--bootstrap", "30", "--format", "json"]
MODELS = ("base", "good", "best")
QUESTIONS = 8

# Short templates in the token styles of FastChat's pair-v2 and arena-hard's judge prompt.
PAIR_STYLE = (
    "Judge which assistant answers better.\n[User Question]\n{question}\n\n"
    "[The Start of Assistant A's Answer]\n{answer_a}\n[The End of Assistant A's Answer]\n\n"
    "[The Start of Assistant B's Answer]\n{answer_b}\n[The End of Assistant B's Answer]\n\n"
    'End with "[[A]]" if A is better, "[[B]]" if B is better, "[[C]]" for a tie.'
)
GRADED_STYLE = (  # with arena-hard's capital placeholders
    "<|User Prompt|>\n{QUESTION}\n\n<|The Start of Assistant A's Answer|>\n{ANSWER_A}\n"
    "<|The End of Assistant A's Answer|>\n\n<|The Start of Assistant B's Answer|>\n{ANSWER_B}\n"
    "<|The End of Assistant B's Answer|>\n\nLabel: A much better [[A>>B]], A better [[A>B]], "
    "a tie [[A=B]], B better [[B>A]], B much better [[B>>A]]."
)


def _arena(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


def _label(model: str, q: int, game: int) -> str:
    """A varied arena-hard score of `model` against the baseline (game 1: baseline is A)."""
    grade = ({"good": 1, "best": 2}[model] + q + game) % 5  # 0..4: model much worse .. much better
    model_side = "B" if game == 1 else "A"
    other = "A" if model_side == "B" else "B"
    return [f"{other}>>{model_side}", f"{other}>{model_side}", "A=B",
            f"{model_side}>{other}", f"{model_side}>>{other}"][grade]  # fmt: skip


def _arena_hard(tmp: Path) -> tuple[Path, Path]:
    """Questions, answer files and arena-hard judgments of `good`, `best` against `base`."""
    data = tmp / "data"
    _jsonl(
        data / "questions.jsonl", [{"id": f"u{q}", "text": f"Task {q}?"} for q in range(QUESTIONS)]
    )
    for m in MODELS:
        _jsonl(
            data / "answers" / f"{m}.jsonl",
            [
                {"question_id": f"u{q}", "model_id": m, "text": f"{m} answers task {q}."}
                for q in range(QUESTIONS)
            ],
        )
    judgments = data / "model_judgment" / "judge-x"
    for m in ("good", "best"):
        _jsonl(
            judgments / f"{m}.jsonl",
            [
                {
                    "uid": f"u{q}",
                    "model": m,
                    "baseline": "base",
                    "judge": "judge-x",
                    "category": "hard",
                    "games": [{"score": _label(m, q, 1)}, {"score": _label(m, q, 2)}],
                }
                for q in range(QUESTIONS)
            ],  # fmt: skip
        )
    return data, judgments


def test_replayed_graded_tokens_rank_as_the_imported_judgments(tmp_path: Path) -> None:
    data, judgments = _arena_hard(tmp_path)
    (tmp_path / "judge.txt").write_text(GRADED_STYLE)
    cfg = {
        "name": "graded-replay",
        "questions": str(data / "questions.jsonl"),
        "output": str(tmp_path / "run"),
        "review": {"template": "judge.txt", "verdicts": "arena-hard"},
        "providers": {"recorded": {"type": "replay", "judgments": str(judgments)}},
        "models": {
            **{m: {"answers": str(data / "answers" / f"{m}.jsonl")} for m in MODELS},
            "judge": {"provider": "recorded", "replay_as": "judge-x"},
        },
        "contestants": list(MODELS),
        "reviewers": ["judge"],
    }
    config = tmp_path / "t.yaml"
    config.write_text(yaml.safe_dump(cfg, sort_keys=False))
    run = _arena("run", str(config))
    assert run.exit_code in (0, 3), run.output  # good vs best was never judged: failed reviews
    reviews = RunLog(tmp_path / "run").read("reviews")
    judged = reviews.filter(pl.col("status") == "ok")
    assert judged.height == 2 * 2 * QUESTIONS
    # The replayed text is the declared token; strong ones are logged with weight 3.
    strong = judged.filter(pl.col("text").str.contains(">>"))
    assert strong.height > 0 and set(strong["weight"].to_list()) == {3.0}
    assert judged.filter(~pl.col("text").str.contains(">>"))["weight"].null_count() == (
        judged.height - strong.height
    )
    assert judged["p_a"].null_count() == judged.height  # 1, 0.5, 0: the verdict says it
    imported = _arena("leaderboard", "--reviews", str(judgments), *RANKED)
    replayed = _arena("leaderboard", str(tmp_path / "run"), *RANKED)
    assert imported.exit_code == 0 and replayed.exit_code == 0, replayed.output
    a, b = json.loads(imported.stdout), json.loads(replayed.stdout)
    keys = ("win_rate", "weighted_win_rate", "bt", "bt_ci_low", "bt_ci_high", "battles")
    ra = {r["model"]: [float(r[k]) for k in keys] for r in a["models"]}
    rb = {r["model"]: [float(r[k]) for k in keys] for r in b["models"]}
    assert set(ra) == set(rb) == set(MODELS)
    for model in MODELS:
        np.testing.assert_allclose(ra[model], rb[model], rtol=0, atol=1e-9)
    # Without the weights the figures differ: the run's log really carries them.
    plain = _arena("leaderboard", "--reviews", str(judgments), "--strong-win-weight", "1", *RANKED)
    rp = {r["model"]: float(r["win_rate"]) for r in json.loads(plain.stdout)["models"]}
    assert any(abs(rp[m] - ra[m][0]) > 1e-6 for m in MODELS)


def test_sim_reviewers_answer_with_the_declared_tokens(tmp_path: Path) -> None:
    (tmp_path / "pair.txt").write_text(PAIR_STYLE)
    yaml_path = small_tournament(
        tmp_path,
        models=3,
        questions=6,
        sim={"judge_noise": 1.0, "tie_band": 0.4},
        extra={
            "review": {"template": "pair.txt", "verdicts": {"[[A]]": 1, "[[B]]": 0, "[[C]]": 0.5}}
        },
    )
    result = _arena("run", str(yaml_path))
    assert result.exit_code == 0, result.output
    out = Path(yaml.safe_load(yaml_path.read_text())["output"])
    reviews = RunLog(out).read("reviews")
    assert reviews.height == 6 * 6 * 3 and set(reviews["status"].to_list()) == {"ok"}
    for text, verdict in reviews.select("text", "verdict").iter_rows():
        assert text.endswith({"A": "[[A]]", "B": "[[B]]", "tie": "[[C]]"}[verdict])
    assert "tie" in set(reviews["verdict"].to_list())
    # Declared tokens are part of what a review depends on: other ids than the default's.
    declared = load_tournament(yaml_path)
    data = yaml.safe_load(yaml_path.read_text())
    del data["review"]["verdicts"]
    data["review"]["template"] = str(tmp_path / "pair.txt")
    other = tmp_path / "undeclared.yaml"
    other.write_text(yaml.safe_dump(data))
    undeclared = load_tournament(other)
    assert review_context(declared, "m0") != review_context(undeclared, "m0")
    assert build_plan(declared).reviews[0].id != build_plan(undeclared).reviews[0].id


def test_undeclared_tournaments_keep_their_review_ids(tmp_path: Path) -> None:
    # Values computed before `review.verdicts` existed, for this very tournament.
    t = load_tournament(small_tournament(tmp_path, models=3, questions=2, extra={"output": "out"}))
    assert review_context(t, "m0") == "r-855894b5d07764ea6f830fce"
    assert build_plan(t).reviews[0].id == "r-e20622eab77f736cce4c1d96"
    # An undeclared `verdicts` is no part of the config's hash either.
    assert "verdicts" in t.config.model_dump()["review"]
    declared = load_tournament(
        small_tournament(
            tmp_path,
            models=3,
            questions=2,
            extra={"output": "out", "review": {"verdicts": {"[[A]]": 1, "[[B]]": 0}}},
        )
    )
    assert declared.config_hash() != t.config_hash()


def test_tokens_missing_from_the_template_stop_at_preflight(tmp_path: Path) -> None:
    (tmp_path / "pair.txt").write_text(PAIR_STYLE)
    yaml_path = small_tournament(
        tmp_path,
        extra={"review": {"template": "pair.txt", "verdicts": "arena-hard"}},
    )
    for command in ("run", "plan"):
        result = _arena(command, str(yaml_path))
        assert result.exit_code == 2, result.output
        assert f"{yaml_path}: review.verdicts: the token '[[A>>B]]' does not occur" in result.output
    out = Path(yaml.safe_load(yaml_path.read_text())["output"])
    assert not (out / "log").exists()


def test_bad_verdict_declarations_exit_2(tmp_path: Path) -> None:
    (tmp_path / "pair.txt").write_text(PAIR_STYLE)
    cases = {
        "no-such-preset": "unknown verdict preset",
        "{'[[A]]': 1.5, '[[B]]': 0}": "review.verdicts",
        "{'[[A]]': 1, '[[C]]': 0.5}": "no token credits B",
        "{'[[A]]': {p_a: 1, weight: 0}, '[[B]]': 0}": "weight",
    }
    for declared, message in cases.items():
        data = yaml.safe_load(small_tournament(tmp_path).read_text())
        data["review"] = {"template": "pair.txt", "verdicts": yaml.safe_load(declared)}
        path = tmp_path / "t.yaml"
        path.write_text(yaml.safe_dump(data))
        result = _arena("plan", str(path))
        assert result.exit_code == 2, (declared, result.output)
        assert message in result.output and str(path) in result.output, result.output


def test_a_fractional_token_is_logged_ranked_and_shown(tmp_path: Path) -> None:
    (tmp_path / "lean.txt").write_text(
        PAIR_STYLE.replace('"[[A]]" if A is better', '"[[A+]]" if A is a little better')
    )
    yaml_path = small_tournament(
        tmp_path,
        questions=4,
        extra={
            "review": {
                "template": "lean.txt",
                "verdicts": {"[[A+]]": 0.8, "[[B]]": 0, "[[C]]": 0.5},
            }
        },
    )
    assert _arena("run", str(yaml_path)).exit_code == 0
    out = Path(yaml.safe_load(yaml_path.read_text())["output"])
    reviews = RunLog(out).read("reviews")
    wins_a = reviews.filter(pl.col("verdict") == "A")
    assert wins_a.height > 0 and set(wins_a["p_a"].to_list()) == {0.8}
    assert reviews.filter(pl.col("verdict") != "A")["p_a"].null_count() == (
        reviews.height - wins_a.height
    )
    battle = RunData(out).battle(wins_a["id"][0])
    assert battle is not None
    assert {r["p_a"] for r in battle["reviews"] if r["verdict"] == "A"} == {0.8}
    # The leaderboard counts an A as 0.8 of a win: the run's win rates equal those of its
    # reviews exported with their shares.
    exported = tmp_path / "graded.csv"
    reviews.select("question_id", "model_a", "model_b", "reviewer", "verdict", "p_a").write_csv(
        exported
    )
    from_run = json.loads(_arena("leaderboard", str(out), *RANKED).stdout)
    from_file = json.loads(_arena("leaderboard", "--reviews", str(exported), *RANKED).stdout)
    rates = {r["model"]: r["win_rate"] for r in from_run["models"]}
    assert rates == pytest.approx({r["model"]: r["win_rate"] for r in from_file["models"]})
    plain = json.loads(
        _arena("leaderboard", "--reviews", str(_plain_copy(exported)), *RANKED).stdout
    )
    assert rates != pytest.approx({r["model"]: r["win_rate"] for r in plain["models"]})


def _plain_copy(path: Path) -> Path:
    copy = path.with_name("plain.csv")
    pl.read_csv(path).drop("p_a").write_csv(copy)
    return copy
