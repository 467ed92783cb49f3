"""PeerDiscussion on the simulator: a plumbing check, not evidence that discussion helps.

A sim tournament of six models (known skills) whose reviewers have position
bias and self-preference runs through `arena run` (scheduler, crash-safe log)
with the discussion stage on `inconsistent` and `tie`, the defaults otherwise
(the paper's protocol: top2 discussants that are not the battle's
contestants, every discussion runs all 4 turns, `replace`). For the discussed
battles it compares the verdict before the discussion (the PeerRank-weighted
verdict of all reviewers) and after (the agreed verdict; unresolved ones keep
the verdict before) with the sim truth (the answer of higher latent quality
wins), and the Kendall tau of the weighted ranking against the true order
without and with the discussion outcomes.

Read the gains with care: the simulator builds them in. A sim discussant that
reconsiders takes a "fresh look" at the answers with no position bias and a
fraction of a reviewer's noise (`insight`), so discussions beat the reviewers'
vote by construction. The benchmark therefore reports every figure three ways:

- `sim_gains`: the defaults, fresh look on (the built-in gain included);
- `no_sim_gains`: `fresh_look: false` on every model, so a discussant sees the
  answers exactly as its reviews do (position bias, full noise): what is left
  is what the protocol itself does with the reviewers' own judgments;
- `contestants_discuss`: as `no_sim_gains` with `allow_contestants: true`, to
  show the bias the default avoids: a discussant judging its own answer keeps
  its self-preference (`self_favoured`: of the agreed verdicts of battles a
  discussant competes in, the share that go to a discussant's answer when the
  truth says otherwise).

Prints a few lines per variant, then a final JSON line
{"sim_gains": {...}, "no_sim_gains": {...}, "contestants_discuss": {...}}, each with
"discussed", "agreed", "unresolved", "mean_turns", "with_contestant",
"self_favoured", "own_answer" (with one contestant discussing, whether its answer is
the worse or the better one: n, error_before, error_after), "contestant_accuracy_before",
"contestant_accuracy_after",
"accuracy_before", "accuracy_after", "tau_before", "tau_after".
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
# variant: (fresh_look, allow_contestants)
VARIANTS: dict[str, tuple[bool, bool]] = {
    "sim_gains": (True, False),
    "no_sim_gains": (False, False),
    "contestants_discuss": (False, True),
}


def write_tournament(
    folder: Path, questions: int, fresh_look: bool = True, allow_contestants: bool = False
) -> Path:
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
                    "fresh_look": fresh_look,
                },
            }
            for name, (skill, bias, self_pref) in MODELS.items()
        },
        "contestants": list(MODELS),
        "discussion": {
            "trigger": ["inconsistent", "tie"],
            "allow_contestants": allow_contestants,
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


def run_variant(name: str, questions: int) -> dict[str, Any]:
    """One tournament with discussions; its figures (and a few printed lines)."""
    fresh_look, allow_contestants = VARIANTS[name]
    with tempfile.TemporaryDirectory() as tmp:
        path = write_tournament(Path(tmp), questions, fresh_look, allow_contestants)
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
    right_before = right_after = with_contestant = own_wrong = own_agreed = 0
    inside_before = inside_after = 0
    cases = {"worse": 0, "better": 0}
    wrong_before = {"worse": 0, "better": 0}
    wrong_after = {"worse": 0, "better": 0}
    for row in finals.iter_rows(named=True):
        q, a, b = row["question_id"], row["model_a"], row["model_b"]
        truth = "A" if quality[row["answer_a_id"]] > quality[row["answer_b_id"]] else "B"
        old = before.get((q, a, b), "tie")
        new = row["verdict"] if row["outcome"] == "agreed" else old
        right_before += old == truth
        right_after += new == truth
        inside = {row["leader"], row["follower"]} & {a, b}
        if inside:
            with_contestant += 1
            inside_before += old == truth
            inside_after += new == truth
            if row["outcome"] == "agreed":
                own_agreed += 1
                # the verdict goes to a discussant's own answer, against the truth
                own = {"A" if m == a else "B" for m in inside}
                own_wrong += row["verdict"] in own and row["verdict"] != truth
                if len(own) == 1:
                    # one contestant discussing: is its answer the worse one? How often is
                    # the verdict wrong then, and when its answer is the better one?
                    side = "worse" if truth not in own else "better"
                    cases[side] += 1
                    wrong_before[side] += old != truth
                    wrong_after[side] += row["verdict"] != truth
    adjusted = apply_discussions(reviews, table, outcome="replace", context=state.context)
    scores_after, _, _ = _weighted(adjusted)
    skills = np.array([MODELS[m][0] for m in MODELS])
    stats = discussion_stats(table, state.context)
    n = max(stats.discussions, 1)
    result = {
        "discussed": stats.discussions,
        "agreed": stats.agreed,
        "unresolved": stats.unresolved,
        "mean_turns": stats.mean_turns,
        "with_contestant": with_contestant,
        "self_favoured": own_wrong / own_agreed if own_agreed else None,
        # agreed discussions with one contestant discussing, by whether its own answer is
        # the worse or the better one: how many, and the error rate before / after
        "own_answer": {
            side: {
                "n": cases[side],
                "error_before": wrong_before[side] / cases[side] if cases[side] else None,
                "error_after": wrong_after[side] / cases[side] if cases[side] else None,
            }
            for side in ("worse", "better")
        },
        # accuracy on the discussions a contestant took part in, before and after
        "contestant_accuracy_before": inside_before / with_contestant if with_contestant else None,
        "contestant_accuracy_after": inside_after / with_contestant if with_contestant else None,
        "accuracy_before": right_before / n,
        "accuracy_after": right_after / n,
        "tau_before": rank_correlation(scores_before, skills).kendall_tau,
        "tau_after": rank_correlation(scores_after, skills).kendall_tau,
    }
    calls = summary.by_stage.get("discussions", {})
    print(
        f"[{name}] {len(MODELS)} models, {questions} questions, {reviews.height} reviews, "
        f"{sum(calls.values())} discussion calls, {wall:.1f}s"
    )
    print(
        f"  discussions: {stats.discussions} ({stats.agreed} agreed, {stats.unresolved} "
        f"unresolved; mean turns {stats.mean_turns:.2f}); with a contestant discussing: "
        f"{with_contestant}"
        + (
            ""
            if result["self_favoured"] is None
            else f", self-favoured {own_wrong}/{own_agreed}; accuracy on those "
            f"{result['contestant_accuracy_before']:.3f} before, "
            f"{result['contestant_accuracy_after']:.3f} after"
        )
    )
    if with_contestant:
        for side, c in result["own_answer"].items():
            if c["n"]:
                print(
                    f"  one contestant discussing, its answer the {side} one: {c['n']} agreed, "
                    f"error {c['error_before']:.3f} before, {c['error_after']:.3f} after"
                )
    print(
        f"  accuracy on discussed battles {result['accuracy_before']:.3f} before, "
        f"{result['accuracy_after']:.3f} after; Kendall tau {result['tau_before']:.3f} before, "
        f"{result['tau_after']:.3f} after"
    )
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run every variant and print its figures; returns the final JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument(
        "--smoke", action="store_true", help="6 questions: a check that every variant runs"
    )
    args = parser.parse_args(argv)
    questions = 6 if args.smoke else args.questions
    results = {name: run_variant(name, questions) for name in VARIANTS}
    print(
        "plumbing check: the sim_gains figures include the simulator's built-in fresh look; "
        "no_sim_gains is what is left without it"
    )
    print(json.dumps(results))
    return results


if __name__ == "__main__":
    main()
