"""PeerDiscussion on the simulator: does discussing disputed battles get them right more often?

A sim tournament of six models (known skills) whose reviewers have position
bias and self-preference runs through `arena run`'s real pipeline (scheduler,
crash-safe log) with the discussion stage on `inconsistent` and `tie`, the top
two reviewers discussing. For the discussed battles it compares the verdict
before the discussion (the PeerRank-weighted verdict of all reviewers) and
after (the agreed verdict; unresolved ones keep the verdict before) with the
sim truth (the answer of higher latent quality wins), and the Kendall tau of
the weighted ranking against the true order without and with the discussion
outcomes (`replace`). Prints a few lines, then a final JSON line:
{"discussed", "agreed", "accuracy_before", "accuracy_after", "tau_before", "tau_after"}
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import yaml

from arena.config import load_tournament
from arena.discuss import TABLE, apply_discussions, discussion_stats, read_state
from arena.engine import run_tournament
from arena.rank import RankOptions, encode_reviews, rank_correlation, rank_reviews
from arena.store import RunLog

SEED = 5
# name: (skill, position_bias, self_preference); judge_noise 0.6 for all.
MODELS: dict[str, tuple[float, float, float]] = {
    "atlas": (1.5, 0.3, 0.4),
    "boreal": (1.0, 0.6, 0.3),
    "cirrus": (0.6, 0.4, 1.0),
    "dune": (0.2, 0.9, 0.2),
    "ember": (-0.3, 0.5, 0.8),
    "fjord": (-0.8, 0.7, 0.5),
}
_Q = re.compile(r"⟦sim author=[^ ⟧]+ q=(-?[0-9.]+)⟧")


def write_tournament(folder: Path, questions: int) -> Path:
    """The benchmark tournament's YAML and questions file."""
    lines = [
        json.dumps({"id": f"q{i}", "text": f"Benchmark question {i}?"}) for i in range(questions)
    ]
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n")
    config: dict[str, Any] = {
        "name": "bench-discussion",
        "seed": SEED,
        "questions": "questions.jsonl",
        "output": str(folder / "out"),
        "providers": {"sim": {"type": "sim", "limits": {"max_concurrency": 256}}},
        "models": {
            name: {
                "provider": "sim",
                "sim": {
                    "skill": skill,
                    "position_bias": bias,
                    "self_preference": self_pref,
                    "judge_noise": 0.6,
                },
            }
            for name, (skill, bias, self_pref) in MODELS.items()
        },
        "contestants": list(MODELS),
        "discussion": {
            "trigger": ["inconsistent", "tie"],
            "discussants": "top2",
            "leader": "random",
            "max_turns": 4,
            "outcome": "replace",
        },
    }
    path = folder / "tournament.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _weighted(reviews: pl.DataFrame) -> tuple[np.ndarray[Any, Any], dict[str, float], Any]:
    """PeerRank weighted win rates (contestant order), reviewer weights, and the review set."""
    rs = encode_reviews(reviews, contestants=list(MODELS))
    ranking = rank_reviews(rs, RankOptions(bootstrap=0, elo=False))
    weights = dict(zip(rs.reviewers, ranking.peerrank.weights.tolist(), strict=True))
    return ranking.peerrank.weighted_win_rate, weights, rs


def _weighted_verdicts(
    reviews: pl.DataFrame, weights: dict[str, float]
) -> dict[tuple[str, ...], str]:
    """The PeerRank-weighted verdict of every battle (question, model A, model B)."""
    score = {"A": -1.0, "B": 1.0, "tie": 0.0}
    totals: dict[tuple[str, ...], float] = {}
    for q, a, b, r, v in reviews.select(
        "question_id", "model_a", "model_b", "reviewer", "verdict"
    ).iter_rows():
        if v in score:
            totals[(q, a, b)] = totals.get((q, a, b), 0.0) + weights.get(r, 0.0) * score[v]
    return {k: "A" if s < -1e-12 else "B" if s > 1e-12 else "tie" for k, s in totals.items()}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run the benchmark and print its figures; returns the final JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--questions", type=int, default=40)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        path = write_tournament(Path(tmp), args.questions)
        t = load_tournament(path)
        start = time.monotonic()
        summary = asyncio.run(run_tournament(t))
        wall = time.monotonic() - start
        log = RunLog(t.output_dir)
        reviews, answers, table = log.read("reviews"), log.read("answers"), log.read(TABLE)
        state = read_state(t.output_dir)
        assert state is not None
    quality = {
        aid: float(_Q.findall(turns[0])[0])
        for aid, turns in answers.select("id", "answer_turns").iter_rows()
    }
    scores_before, weights, _ = _weighted(reviews)
    before = _weighted_verdicts(reviews, weights)
    finals = table.filter((pl.col("kind") == "final") & (pl.col("context") == state.context))
    right_before = right_after = 0
    for q, a, b, aid, bid, outcome, verdict in finals.select(
        "question_id", "model_a", "model_b", "answer_a_id", "answer_b_id", "outcome", "verdict"
    ).iter_rows():
        truth = "A" if quality[aid] > quality[bid] else "B"
        old = before.get((q, a, b), "tie")
        new = verdict if outcome == "agreed" else old
        right_before += old == truth
        right_after += new == truth
    adjusted = apply_discussions(reviews, table, outcome="replace", context=state.context)
    scores_after, _, _ = _weighted(adjusted)
    skills = np.array([MODELS[m][0] for m in MODELS])
    stats = discussion_stats(table, state.context)
    n = max(stats.discussions, 1)
    result = {
        "discussed": stats.discussions,
        "agreed": stats.agreed,
        "accuracy_before": right_before / n,
        "accuracy_after": right_after / n,
        "tau_before": rank_correlation(scores_before, skills).kendall_tau,
        "tau_after": rank_correlation(scores_after, skills).kendall_tau,
    }
    calls = summary.by_stage.get("discussions", {})
    print(
        f"tournament: {len(MODELS)} models, {args.questions} questions, "
        f"{reviews.height} reviews, {sum(calls.values())} discussion calls, {wall:.1f}s"
    )
    print(
        f"discussions: {stats.discussions} ({stats.agreed} agreed, {stats.unresolved} "
        f"unresolved; triggers {stats.triggers}; mean turns {stats.mean_turns:.2f})"
    )
    for m in stats.models:
        print(
            f"  {m.model}: led {m.led}, altered/held as leader {m.altered_as_leader}/"
            f"{m.held_as_leader}, as follower {m.altered_as_follower}/{m.held_as_follower}"
        )
    print(
        f"accuracy on discussed battles: {result['accuracy_before']:.3f} before, "
        f"{result['accuracy_after']:.3f} after"
    )
    print(
        f"Kendall tau of the weighted ranking: {result['tau_before']:.3f} before, "
        f"{result['tau_after']:.3f} after"
    )
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
