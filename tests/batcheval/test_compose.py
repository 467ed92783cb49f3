"""Batch composition: every sample once per round, sizes, strata, determinism."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from arena.batcheval import STRATEGIES, Strategy, compose_round


def _ids(n: int) -> list[str]:
    return [f"s{i:03d}" for i in range(n)]


def _means(ids: list[str], seed: int = 0) -> dict[str, float | None]:
    rng = random.Random(seed)
    return {sid: rng.uniform(1, 5) for sid in ids}


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("n", [1, 7, 10, 25, 100, 103])
@pytest.mark.parametrize("round_index", [1, 2, 3])
@pytest.mark.parametrize("batch_size", [1, 4, 10])
def test_every_sample_once_per_round_in_balanced_batches(
    strategy: Strategy, n: int, round_index: int, batch_size: int
) -> None:
    ids = _ids(n)
    batches = compose_round(
        ids, round_index, batch_size=batch_size, strategy=strategy, means=_means(ids), seed=1
    )
    flat = [sid for batch in batches for sid in batch]
    assert Counter(flat) == Counter(ids)
    assert len(batches) == -(-n // batch_size)
    sizes = [len(b) for b in batches]
    assert max(sizes) <= batch_size
    assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_seeded_and_independent_of_input_order(strategy: Strategy) -> None:
    ids = _ids(40)
    means = _means(ids)
    a = compose_round(ids, 2, batch_size=10, strategy=strategy, means=means, seed="x")
    b = compose_round(
        list(reversed(ids)), 2, batch_size=10, strategy=strategy, means=means, seed="x"
    )
    c = compose_round(ids, 2, batch_size=10, strategy=strategy, means=means, seed="y")
    assert a == b
    assert a != c


def test_round_one_is_random_for_every_strategy() -> None:
    ids = _ids(30)
    first = [
        compose_round(ids, 1, batch_size=10, strategy=s, means=_means(ids), seed=5)
        for s in STRATEGIES
    ]
    assert first[0] == first[1] == first[2]


def _stratum(means: dict[str, float | None], ids: list[str], strata: int) -> dict[str, int]:
    ordered = sorted(ids, key=lambda s: means[s] or 0.0)
    size = len(ids) // strata
    return {sid: i // size for i, sid in enumerate(ordered)}


def test_heterogeneous_batches_span_the_strata() -> None:
    ids = _ids(100)
    means = _means(ids, seed=3)
    batches = compose_round(ids, 2, batch_size=10, strategy="heterogeneous", means=means, seed=0)
    stratum = _stratum(means, ids, 10)
    for batch in batches:
        assert sorted(stratum[s] for s in batch) == list(range(10))


def test_homogeneous_batches_are_consecutive_in_score_order() -> None:
    ids = _ids(100)
    means = _means(ids, seed=3)
    batches = compose_round(ids, 2, batch_size=10, strategy="homogeneous", means=means, seed=0)
    stratum = _stratum(means, ids, 10)
    for batch in batches:
        assert len({stratum[s] for s in batch}) == 1


def test_heterogeneous_spans_the_range_with_uneven_sizes() -> None:
    ids = _ids(25)
    means = _means(ids, seed=4)
    batches = compose_round(ids, 3, batch_size=10, strategy="heterogeneous", means=means, seed=0)
    ordered = sorted(ids, key=lambda s: means[s] or 0.0)
    for batch in batches:
        ranks = sorted(ordered.index(s) for s in batch)
        assert ranks[0] < 3 and ranks[-1] >= 21  # every batch has a bottom and a top sample


def test_random_later_rounds_ignore_scores() -> None:
    ids = _ids(50)
    a = compose_round(ids, 2, batch_size=10, strategy="random", means=_means(ids, 1), seed=0)
    b = compose_round(ids, 2, batch_size=10, strategy="random", means=_means(ids, 2), seed=0)
    assert a == b


def test_unscored_samples_are_placed_at_the_overall_mean() -> None:
    ids = _ids(20)
    means: dict[str, float | None] = {sid: float(i) for i, sid in enumerate(ids)}
    means["s019"] = 1000.0  # pulls the mean of the scored samples up to about 62
    means["s000"] = None  # sorted first if unscored meant lowest; at ~62 it is 19th
    batches = compose_round(ids, 2, batch_size=10, strategy="homogeneous", means=means, seed=0)
    high = next(b for b in batches if "s019" in b)
    assert sorted(high) == sorted(["s000", *ids[11:]])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch_size": 0}, "batch_size"),
        ({"round_index": 0}, "round_index"),
        ({"strategy": "clustered"}, "unknown strategy"),
    ],
)
def test_bad_arguments(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = {"batch_size": 10, "strategy": "random", "round_index": 1}
    args.update(kwargs)
    round_index = args.pop("round_index")
    with pytest.raises(ValueError, match=message):
        compose_round(_ids(5), round_index, means={}, seed=0, **args)


def test_duplicate_ids_are_rejected() -> None:
    with pytest.raises(ValueError, match="unique"):
        compose_round(["a", "a"], 1, batch_size=2, strategy="random", means={}, seed=0)
