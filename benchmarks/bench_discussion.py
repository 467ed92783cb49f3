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

Every variant runs at seeds 1..N (`--seeds`, default 5; the seed changes the
answers, the reviews and the discussions' draws). One run's accuracy change
varies by a few points from seed to seed, so the figures are pooled over the
seeds and the change is also given paired per seed, with its 95% t interval.

Besides the vote of all reviewers, it reports what PRD measures: the accuracy
of the two discussants' own preferences, initial and last; and, for the
discussions whose two discussants started apart, the vote's and the
discussion's accuracy and whose initial preference the agreement took (the
leader's or the follower's).

Prints a line per seed and a few lines per variant, then a final JSON line
{"sim_gains": {...}, "no_sim_gains": {...}, "contestants_discuss": {...}}, each with
"seeds", "discussed", "agreed", "unresolved", "mean_turns", "with_contestant",
"self_favoured", "own_answer" (with one contestant discussing, whether its answer is
the worse or the better one: n, error_before, error_after), "contestant_accuracy_before",
"contestant_accuracy_after", "accuracy_before", "accuracy_after" (pooled over the
seeds), "accuracy_change" (mean, low, high, per_seed), "discussants_before",
"discussants_after", "split" (n, accuracy_before, accuracy_after, to_leader,
to_follower), "vote_a_share", "verdict_a_share", "tau_before", "tau_after" (means over the seeds)
and "tau_change" (mean, low, high).
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
from scipy import stats

from arena.config import load_tournament
from arena.discuss import TABLE, apply_discussions, discussion_stats, read_state
from arena.engine import run_tournament
from arena.rank import RankOptions, encode_reviews, rank_correlation, rank_reviews
from arena.store import RunLog

SEED = 1
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
    folder: Path,
    questions: int,
    fresh_look: bool = True,
    allow_contestants: bool = False,
    seed: int = SEED,
) -> Path:
    """The benchmark tournament's YAML and questions file."""
    lines = [
        json.dumps({"id": f"q{i}", "text": f"Benchmark question {i}?"}) for i in range(questions)
    ]
    (folder / "questions.jsonl").write_text("\n".join(lines) + "\n")
    config: dict[str, Any] = {
        "name": "bench-discussion",
        "seed": seed,
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


def _t_interval(values: list[float]) -> tuple[float, float, float]:
    """Mean and 95% t interval of paired per-seed differences (the mean twice with one seed)."""
    mean = float(np.mean(values))
    if len(values) < 2:
        return mean, mean, mean
    half = float(stats.t.ppf(0.975, len(values) - 1)) * float(np.std(values, ddof=1))
    half /= len(values) ** 0.5
    return mean, mean - half, mean + half


def run_seed(name: str, questions: int, seed: int) -> dict[str, Any]:
    """One tournament with discussions at one seed: counts over its discussed battles."""
    fresh_look, allow_contestants = VARIANTS[name]
    with tempfile.TemporaryDirectory() as tmp:
        path = write_tournament(Path(tmp), questions, fresh_look, allow_contestants, seed)
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
    rows = table.filter(pl.col("context") == state.context)
    finals = rows.filter(pl.col("kind") == "final")
    # each discussant's initial and last preference (turns in order: the last one wins)
    said: dict[tuple[str, str], str | None] = {}
    for d, who, pref in (
        rows.filter(pl.col("kind").is_in(["initial", "turn"]) & pl.col("speaker").is_not_null())
        .sort("turn", "attempt")
        .select("discussion_id", "speaker", "preference")
        .iter_rows()
    ):
        said[(d, who)] = pref
    initial = {
        (d, who): pref
        for d, who, pref in rows.filter(pl.col("kind") == "initial")
        .select("discussion_id", "speaker", "preference")
        .iter_rows()
    }
    c: dict[str, Any] = {
        k: 0
        for k in (
            "right_before",
            "right_after",
            "with_contestant",
            "own_wrong",
            "own_agreed",
            "inside_before",
            "inside_after",
            "discussants_before",
            "discussants_after",
            "split",
            "split_right_before",
            "split_right_after",
            "split_to_leader",
            "split_to_follower",
            "verdict_a",
            "vote_a",
        )
    }
    cases = {"worse": 0, "better": 0}
    wrong_before = {"worse": 0, "better": 0}
    wrong_after = {"worse": 0, "better": 0}
    for row in finals.iter_rows(named=True):
        d, q, a, b = row["discussion_id"], row["question_id"], row["model_a"], row["model_b"]
        truth = "A" if quality[row["answer_a_id"]] > quality[row["answer_b_id"]] else "B"
        old = before.get((q, a, b), "tie")
        new = row["verdict"] if row["outcome"] == "agreed" else old
        c["right_before"] += old == truth
        c["right_after"] += new == truth
        c["verdict_a"] += new == "A"
        c["vote_a"] += old == "A"
        lead, follow = row["leader"], row["follower"]
        c["discussants_before"] += (
            (initial.get((d, lead)) == truth) + (initial.get((d, follow)) == truth)
        ) / 2
        c["discussants_after"] += (
            (said.get((d, lead)) == truth) + (said.get((d, follow)) == truth)
        ) / 2
        if initial.get((d, lead)) != initial.get((d, follow)):
            # the two discussants started apart: who carried the discussion, and was it right?
            c["split"] += 1
            c["split_right_before"] += old == truth
            c["split_right_after"] += new == truth
            if row["outcome"] == "agreed":
                c["split_to_leader"] += row["verdict"] == initial.get((d, lead))
                c["split_to_follower"] += row["verdict"] == initial.get((d, follow))
        inside = {lead, follow} & {a, b}
        if inside:
            c["with_contestant"] += 1
            c["inside_before"] += old == truth
            c["inside_after"] += new == truth
            if row["outcome"] == "agreed":
                c["own_agreed"] += 1
                # the verdict goes to a discussant's own answer, against the truth
                own = {"A" if m == a else "B" for m in inside}
                c["own_wrong"] += row["verdict"] in own and row["verdict"] != truth
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
    st = discussion_stats(table, state.context)
    calls = summary.by_stage.get("discussions", {})
    c.update(
        seed=seed,
        reviews=reviews.height,
        calls=sum(calls.values()),
        wall=wall,
        discussed=st.discussions,
        agreed=st.agreed,
        unresolved=st.unresolved,
        turns=st.mean_turns * st.discussions,
        cases=cases,
        wrong_before=wrong_before,
        wrong_after=wrong_after,
        tau_before=rank_correlation(scores_before, skills).kendall_tau,
        tau_after=rank_correlation(scores_after, skills).kendall_tau,
    )
    return c


def _share(num: float, den: float) -> float | None:
    return num / den if den else None


def run_variant(name: str, questions: int, seeds: list[int]) -> dict[str, Any]:
    """One variant at every seed: its figures pooled over the seeds (and a few printed lines)."""
    runs = [run_seed(name, questions, seed) for seed in seeds]

    def total(key: str) -> float:
        return float(sum(r[key] for r in runs))

    n = max(total("discussed"), 1.0)
    cases = {s: sum(r["cases"][s] for r in runs) for s in ("worse", "better")}
    change = _t_interval(
        [(r["right_after"] - r["right_before"]) / max(r["discussed"], 1) for r in runs]
    )
    tau_change = _t_interval([r["tau_after"] - r["tau_before"] for r in runs])
    result: dict[str, Any] = {
        "seeds": seeds,
        "discussed": int(total("discussed")),
        "agreed": int(total("agreed")),
        "unresolved": int(total("unresolved")),
        "mean_turns": total("turns") / n,
        "with_contestant": int(total("with_contestant")),
        "self_favoured": _share(total("own_wrong"), total("own_agreed")),
        # agreed discussions with one contestant discussing, by whether its own answer is
        # the worse or the better one: how many, and the error rate before / after
        "own_answer": {
            side: {
                "n": cases[side],
                "error_before": _share(sum(r["wrong_before"][side] for r in runs), cases[side]),
                "error_after": _share(sum(r["wrong_after"][side] for r in runs), cases[side]),
            }
            for side in ("worse", "better")
        },
        # accuracy on the discussions a contestant took part in, before and after
        "contestant_accuracy_before": _share(total("inside_before"), total("with_contestant")),
        "contestant_accuracy_after": _share(total("inside_after"), total("with_contestant")),
        # the weighted vote of all reviewers before, the discussions' verdicts after
        "accuracy_before": total("right_before") / n,
        "accuracy_after": total("right_after") / n,
        # paired per seed: mean of (after - before) with its 95% t interval over the seeds
        "accuracy_change": {
            "mean": change[0],
            "low": change[1],
            "high": change[2],
            "per_seed": [
                (r["right_after"] - r["right_before"]) / max(r["discussed"], 1) for r in runs
            ],
        },
        # the two discussants' own preferences (PRD's measure): initial, then last
        "discussants_before": total("discussants_before") / n,
        "discussants_after": total("discussants_after") / n,
        # discussions whose two discussants started apart: how many, the vote's and the
        # discussion's accuracy on them, and whose initial preference the agreement took
        "split": {
            "n": int(total("split")),
            "accuracy_before": _share(total("split_right_before"), total("split")),
            "accuracy_after": _share(total("split_right_after"), total("split")),
            "to_leader": int(total("split_to_leader")),
            "to_follower": int(total("split_to_follower")),
        },
        # share of A (first shown) among the verdicts before and after (the truth: about 0.5)
        "vote_a_share": total("vote_a") / n,
        "verdict_a_share": total("verdict_a") / n,
        "tau_before": float(np.mean([r["tau_before"] for r in runs])),
        "tau_after": float(np.mean([r["tau_after"] for r in runs])),
        "tau_change": {"mean": tau_change[0], "low": tau_change[1], "high": tau_change[2]},
    }
    for r in runs:
        print(
            f"[{name} seed {r['seed']}] {len(MODELS)} models, {questions} questions, "
            f"{r['reviews']} reviews, {r['calls']} discussion calls, {r['wall']:.1f}s; "
            f"accuracy {r['right_before'] / max(r['discussed'], 1):.3f} -> "
            f"{r['right_after'] / max(r['discussed'], 1):.3f}, Kendall tau "
            f"{r['tau_before']:.3f} -> {r['tau_after']:.3f}"
        )
    print(
        f"[{name}] seeds {seeds[0]}-{seeds[-1]}: discussions {result['discussed']} "
        f"({result['agreed']} agreed, {result['unresolved']} unresolved; mean turns "
        f"{result['mean_turns']:.2f}); with a contestant discussing: {result['with_contestant']}"
        + (
            ""
            if result["self_favoured"] is None
            else f", self-favoured {int(total('own_wrong'))}/{int(total('own_agreed'))}; "
            f"accuracy on those {result['contestant_accuracy_before']:.3f} before, "
            f"{result['contestant_accuracy_after']:.3f} after"
        )
    )
    for side, cs in result["own_answer"].items():
        if cs["n"]:
            print(
                f"  one contestant discussing, its answer the {side} one: {cs['n']} agreed, "
                f"error {cs['error_before']:.3f} before, {cs['error_after']:.3f} after"
            )
    split = result["split"]
    print(
        f"  accuracy on discussed battles {result['accuracy_before']:.3f} before (weighted vote "
        f"of all reviewers), {result['accuracy_after']:.3f} after; paired change "
        f"{change[0]:+.4f} [{change[1]:+.4f}, {change[2]:+.4f}]; the discussants' own "
        f"preferences {result['discussants_before']:.3f} -> {result['discussants_after']:.3f}"
    )
    if split["n"]:
        print(
            f"  discussants starting apart: {split['n']}, accuracy {split['accuracy_before']:.3f} "
            f"(vote) -> {split['accuracy_after']:.3f}; agreed on the leader's "
            f"{split['to_leader']}, the follower's {split['to_follower']}; A share of the verdicts "
            f"{result['vote_a_share']:.3f} before, {result['verdict_a_share']:.3f} after"
        )
    print(f"  Kendall tau {result['tau_before']:.3f} before, {result['tau_after']:.3f} after")
    return result


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Run every variant at every seed and print its figures; returns the final JSON object."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--seeds", type=int, default=5, help="seeds 1..N (default 5)")
    parser.add_argument(
        "--smoke", action="store_true", help="6 questions, seed 1: a check that every variant runs"
    )
    args = parser.parse_args(argv)
    questions = 6 if args.smoke else args.questions
    seeds = [1] if args.smoke else list(range(1, args.seeds + 1))
    results = {name: run_variant(name, questions, seeds) for name in VARIANTS}
    print(
        "plumbing check: the sim_gains figures include the simulator's built-in fresh look; "
        "no_sim_gains is what is left without it"
    )
    print(json.dumps(results))
    return results


if __name__ == "__main__":
    main()
