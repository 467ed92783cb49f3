"""In batch mode, stages whose next calls depend on results go out as successive jobs.

Adaptive sampling rounds, discussion turns and BatchEval rounds: each step's
calls are in jobs submitted after the previous step's jobs, and no job mixes
two steps. Also: a batch provider's job is not cut by the runner's window.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.fakeserver import FakeServer, FakeServerConfig
from arena.scheduler import BATCH_TABLE
from arena.store import RunLog
from tests.providers_http.conftest import KEY_ENV, KEYS, TYPES, base_url, write_tournament

pytestmark = pytest.mark.filterwarnings(
    "ignore:Inheritance class AiohttpClientSession:DeprecationWarning"
)

MODELS = {"alpha": "p_openai", "beta": "p_anthropic", "gamma": "p_gemini"}
BATCH = {"max_requests": 500, "max_wait": 0.05, "poll_seconds": 0.02}


@pytest.fixture
def server() -> Iterator[FakeServer]:
    config = FakeServerConfig.model_validate(
        {
            "seed": 5,
            "keys": list(KEYS.values()),
            "models": {
                "alpha": {"skill": 1.0, "answer_words": 20, "judge_noise": 1.5},
                "beta": {"skill": 0.5, "answer_words": 20, "judge_noise": 1.5},
                "gamma": {"skill": -0.5, "answer_words": 20, "judge_noise": 1.5},
            },
        }
    )
    with FakeServer(config) as s:
        yield s


def _providers(
    server: FakeServer, concurrency: int = 4, batch: dict[str, float] | None = None
) -> dict[str, dict[str, Any]]:
    return {
        f"p_{t}": {
            "type": t,
            "base_url": base_url(server, t),
            "api_key_env": KEY_ENV[t],
            "limits": {"max_concurrency": concurrency},
            "timeout": 5,
            "batch": batch or BATCH,
        }
        for t in TYPES
    }


def _run(path: Path) -> dict[str, Any]:
    env = dict(os.environ)
    env.update({KEY_ENV[t]: KEYS[t] for t in TYPES})
    result = CliRunner(env=env).invoke(main, ["run", str(path), "--json"])
    assert result.exit_code == 0, result.output
    summary: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    return summary


def _jobs(out: Path) -> tuple[pl.DataFrame, dict[str, int]]:
    """The log's jobs (numbered in submission order) and the job of each call id."""
    jobs = RunLog(out).read(BATCH_TABLE).sort("created_at").with_row_index("n")
    of: dict[str, int] = {}
    for n, ids in jobs.select("n", "custom_ids").iter_rows():
        for cid in json.loads(ids):
            # A custom id is the call id, "-" and a digest of 10 (cut at 64 characters).
            of[cid[:-11] if len(cid) < 64 else cid[:53]] = int(n)
    return jobs, of


def _job(of: dict[str, int], call_id: str) -> int:
    return of[call_id if len(call_id) + 11 < 64 else call_id[:53]]


def _successive(steps: dict[Any, set[int]]) -> None:
    """Each step's jobs all come after every job of the step before; no job in two steps."""
    order = sorted(steps)
    for before, after in zip(order, order[1:], strict=False):
        assert max(steps[before]) < min(steps[after]), (before, after, steps)


def test_rounds_and_turns_go_out_as_successive_batch_jobs(
    tmp_path: Path, server: FakeServer
) -> None:
    extra = {
        "sampling": {"strategy": "adaptive", "budget": 0.5, "rounds": 2},
        "discussion": {
            "trigger": ["tie", "inconsistent", "disagreement"],
            "discussants": ["alpha", "beta"],
            "allow_contestants": True,
            "battles": "all",
            "max_turns": 3,
        },
        "batcheval": {
            "scorers": ["gamma"],
            "criteria": [
                {"name": "help", "description": "Is it helpful?", "scale": {"low": 1, "high": 3}}
            ],
            "batch_size": 3,
            "rounds": 3,
        },
    }
    path = write_tournament(
        tmp_path, server, models=MODELS, providers=_providers(server), questions=4, extra=extra
    )
    _run(path)
    out = tmp_path / "out"
    log = RunLog(out)
    jobs, of = _jobs(out)
    assert set(jobs["state"]) == {"collected"}
    counts = server.stats()["counts"]
    assert counts["billed"] == sum(counts.get(f"{t}.batch.lines", 0) for t in TYPES)

    # Adaptive sampling: the reviews of round k+1 are in jobs after round k's.
    sampling = log.read("sampling")
    rounds: dict[int, set[int]] = defaultdict(set)
    for round_, ab, ba in sampling.select("round", "review_ab_id", "review_ba_id").iter_rows():
        rounds[int(round_)].update({_job(of, ab), _job(of, ba)})
    assert len(rounds) >= 2
    _successive(rounds)

    # Discussions: turn t+1 of a discussion goes out in a later job than turn t.
    turns = log.read("discussions").filter(pl.col("kind") == "turn")
    assert turns.height > 0
    by_discussion: dict[str, dict[int, set[int]]] = defaultdict(lambda: defaultdict(set))
    for did, turn, rid in turns.select("discussion_id", "turn", "id").iter_rows():
        by_discussion[did][int(turn)].add(_job(of, rid))
    assert max(len(t) for t in by_discussion.values()) >= 2
    for steps in by_discussion.values():
        _successive(steps)

    # BatchEval: round r+1 of a (criterion, scorer) is composed from round r's scores.
    scored = log.read("batcheval").select("batch_id", "round", "criterion", "scorer").unique()
    be_rounds: dict[int, set[int]] = defaultdict(set)
    for batch_id, round_, _c, _s in scored.iter_rows():
        be_rounds[int(round_)].add(_job(of, batch_id))
    assert len(be_rounds) == 3
    _successive(be_rounds)


def test_a_batch_providers_job_is_not_cut_by_the_runners_window(
    tmp_path: Path, server: FakeServer
) -> None:
    # Concurrency 1 on each provider: the runner's window is its floor of 64
    # calls in flight. A batch call waits for its job, so without room for a
    # whole job the 120 reviews alpha makes would go out as two jobs or more.
    path = write_tournament(
        tmp_path,
        server,
        models=MODELS,
        # A wait long enough for every ready review to reach the job on a busy machine:
        # what is tested is the runner's window, not how fast the reviews become ready.
        providers=_providers(server, concurrency=1, batch={**BATCH, "max_wait": 2.0}),
        questions=20,
        extra={"reviewers": ["alpha"]},
    )
    _run(path)
    jobs, _of = _jobs(tmp_path / "out")
    reviews = RunLog(tmp_path / "out").read("reviews")
    assert reviews.height == 20 * 6
    review_ids = set(reviews["id"].to_list())
    review_jobs = [
        ids for ids in jobs["custom_ids"] if any(c[:-11] in review_ids for c in json.loads(ids))
    ]
    assert len(review_jobs) == 1 and len(json.loads(review_jobs[0])) == 120
