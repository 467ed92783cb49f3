"""Style control end to end on the simulator: a weak verbose model and length-biased judges.

A plumbing check: the length bias is built into the simulator, and style
control (fed the answers' text from the run's log) must undo it.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from arena.cli._leaderboard import leaderboard
from arena.config import load_tournament
from arena.engine import run_tournament
from arena.providers.sim import answer_words, find_signatures
from arena.store import RunLog
from tests.conftest import small_tournament


def test_style_control_undoes_a_simulated_length_bias(tmp_path: Path) -> None:
    path = small_tournament(
        tmp_path,
        models=4,
        questions=10,
        sim={"answer_words_spread": 0.3, "length_bias": 3.0, "judge_noise": 0.5},
    )
    config = yaml.safe_load(path.read_text())
    config["models"]["m3"]["sim"]["answer_words"] = 240  # the weakest model is verbose
    path.write_text(yaml.safe_dump(config))
    tournament = load_tournament(path)
    asyncio.run(run_tournament(tournament))

    answers = RunLog(tournament.output_dir).read("answers")
    words = {
        (row["model"], row["question_id"]): answer_words(
            row["answer_turns"][0], find_signatures(row["answer_turns"][0]), row["model"]
        )
        for row in answers.iter_rows(named=True)
    }
    m0 = [n for (model, _), n in words.items() if model == "m0"]
    m3 = [n for (model, _), n in words.items() if model == "m3"]
    assert len(set(m0)) > 3  # the spread varies lengths answer by answer
    assert min(m3) > max(m0)

    result = CliRunner().invoke(
        leaderboard,
        [str(tournament.output_dir), "--format", "json", "--elo-orders", "0", "--bootstrap", "40"],
    )
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    tau = data["kendall_tau"]
    assert tau["bt_style"] == 1.0 and tau["bt"] < 1.0
    by_model = {m["model"]: m for m in data["models"]}
    # The length effect is significant, so the default rank is the style-controlled one.
    assert data["rank_by"] == "bt_style"
    assert by_model["m3"]["bt_rank"] < 4 and by_model["m3"]["style_rank"] == 4
    assert by_model["m3"]["rank"] == 4
    coef = data["style_control"]["coefficients"]["length"]
    assert coef["ci_low"] > 0
    assert all(r["length_bias"] > 0.5 for r in data["diagnostics"]["reviewers"])
