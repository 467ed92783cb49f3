"""Batch composition: every sample once per round, sizes, strata, determinism.

`paper` (the default) is checked against batches worked out by hand for the
paper's sizes (n = 125 samples, batches of 10); `arena` keeps its own rule.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest

from arena.batcheval import STRATEGIES, Strategy, compose_round, ordering_scores


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
        ids,
        round_index,
        batch_size=batch_size,
        strategy=strategy,
        means=_means(ids),
        seed=1,
        composition="arena",
    )
    flat = [sid for batch in batches for sid in batch]
    assert Counter(flat) == Counter(ids)
    assert len(batches) == -(-n // batch_size)
    sizes = [len(b) for b in batches]
    assert max(sizes) <= batch_size
    assert max(sizes) - min(sizes) <= 1


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("n", [1, 7, 10, 25, 100, 103, 125])
@pytest.mark.parametrize("round_index", [1, 2, 3])
@pytest.mark.parametrize("batch_size", [1, 4, 10])
def test_paper_full_batches_and_one_short_last_batch(
    strategy: Strategy, n: int, round_index: int, batch_size: int
) -> None:
    ids = _ids(n)
    batches = compose_round(
        ids, round_index, batch_size=batch_size, strategy=strategy, means=_means(ids), seed=1
    )
    assert Counter(sid for batch in batches for sid in batch) == Counter(ids)
    expected = [batch_size] * (n // batch_size) + ([n % batch_size] if n % batch_size else [])
    assert [len(b) for b in batches] == expected


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
    batches = compose_round(
        ids, 2, batch_size=10, strategy="heterogeneous", means=means, seed=0, composition="arena"
    )
    stratum = _stratum(means, ids, 10)
    for batch in batches:
        assert sorted(stratum[s] for s in batch) == list(range(10))


def test_homogeneous_batches_are_consecutive_in_score_order() -> None:
    ids = _ids(100)
    means = _means(ids, seed=3)
    batches = compose_round(
        ids, 2, batch_size=10, strategy="homogeneous", means=means, seed=0, composition="arena"
    )
    stratum = _stratum(means, ids, 10)
    for batch in batches:
        assert len({stratum[s] for s in batch}) == 1


def test_heterogeneous_spans_the_range_with_uneven_sizes() -> None:
    ids = _ids(25)
    means = _means(ids, seed=4)
    batches = compose_round(
        ids, 3, batch_size=10, strategy="heterogeneous", means=means, seed=0, composition="arena"
    )
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
    batches = compose_round(
        ids, 2, batch_size=10, strategy="homogeneous", means=means, seed=0, composition="arena"
    )
    high = next(b for b in batches if "s019" in b)
    assert sorted(high) == sorted(["s000", *ids[11:]])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"batch_size": 0}, "batch_size"),
        ({"round_index": 0}, "round_index"),
        ({"strategy": "clustered"}, "unknown strategy"),
        ({"composition": "balanced"}, "unknown composition"),
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


# --- the paper's rule, worked by hand for n = 125, B = 10 ----------------------
# Previous-round scores make the order plain: sample s{i} scored i / 10, so the
# sorted order is s000 < s001 < ... < s124. 125 mod 10 = 5 samples are set aside
# (at random) as the short last batch; the other 120, in sorted order r[0..119],
# form k = 12 full batches: batch i = {r[i], r[12 + i], r[24 + i], ..., r[108 + i]},
# one sample of each of the 10 strata r[0..11], r[12..23], ..., r[108..119].

N, B = 125, 10
IDS = _ids(N)
PREVIOUS: dict[str, float | None] = {sid: i / 10 for i, sid in enumerate(IDS)}


def _paper_round(strategy: Strategy = "heterogeneous", seed: int = 0) -> list[list[str]]:
    return compose_round(IDS, 2, batch_size=B, strategy=strategy, means=PREVIOUS, seed=seed)


def test_paper_heterogeneous_n125_b10_by_hand() -> None:
    for seed in range(3):
        batches = _paper_round(seed=seed)
        assert len(batches) == 13 and [len(b) for b in batches] == [10] * 12 + [5]
        short = set(batches[-1])
        rest = [sid for sid in IDS if sid not in short]  # already in score order
        assert len(rest) == 120
        for i, batch in enumerate(batches[:12]):
            assert sorted(batch) == [rest[12 * j + i] for j in range(10)]
    # written out for one case: with s000..s004 set aside, batch 0 holds the
    # lowest sample of each stratum of twelve, batch 11 the highest
    rest = IDS[5:]
    assert [rest[12 * j] for j in range(10)] == [
        "s005", "s017", "s029", "s041", "s053", "s065", "s077", "s089", "s101", "s113",
    ]  # fmt: skip
    assert [rest[12 * j + 11] for j in range(10)] == [
        "s016", "s028", "s040", "s052", "s064", "s076", "s088", "s100", "s112", "s124",
    ]  # fmt: skip


def test_paper_short_batch_is_a_random_set_aside() -> None:
    shorts = {frozenset(_paper_round(seed=seed)[-1]) for seed in range(6)}
    assert len(shorts) > 1  # differs with the seed, not always the lowest or highest


def test_paper_round_one_cuts_the_shuffled_list_in_order() -> None:
    batches = compose_round(IDS, 1, batch_size=B, strategy="heterogeneous", means=PREVIOUS, seed=0)
    assert [len(b) for b in batches] == [10] * 12 + [5]
    again = compose_round(IDS, 1, batch_size=B, strategy="homogeneous", means={}, seed=0)
    assert again == batches  # round 1 ignores scores and strategy


def test_paper_homogeneous_n125_b10_by_hand() -> None:
    batches = _paper_round("homogeneous")
    short = set(batches[-1])
    rest = [sid for sid in IDS if sid not in short]
    for i, batch in enumerate(batches[:12]):
        assert sorted(batch) == rest[10 * i : 10 * i + 10]


def test_arena_heterogeneous_n125_b10_by_hand() -> None:
    # ceil(125 / 10) = 13 batches, sizes 10 x 8 and 9 x 5; strata of 13
    # consecutive samples: the 9 full ones give one sample to every batch, the
    # last (s117..s124, 8 samples) one each to 8 different batches.
    batches = compose_round(
        IDS, 2, batch_size=B, strategy="heterogeneous", means=PREVIOUS, seed=0, composition="arena"
    )
    assert sorted(len(b) for b in batches) == [9] * 5 + [10] * 8
    for batch in batches:
        strata = sorted(IDS.index(sid) // 13 for sid in batch)
        assert strata[:9] == list(range(9))
        assert len(batch) == 9 or strata[9] == 9


def test_paper_orders_by_the_previous_round_and_arena_by_the_mean() -> None:
    # "up" was scored 1 then 5 (mean 3, last 5); "down" 5 then 1 (mean 3, last 1);
    # "mid" 3 and 3. By the previous round: down < mid < up.
    history: dict[str, list[float | None]] = {
        "up": [1.0, 5.0],
        "down": [5.0, 1.0],
        "mid": [3.0, 3.0],
    }
    assert ordering_scores(history, "paper") == {"up": 5.0, "down": 1.0, "mid": 3.0}
    assert ordering_scores(history, "arena") == {"up": 3.0, "down": 3.0, "mid": 3.0}
    assert ordering_scores({"new": []}, "paper") == {"new": None}
    ids = [f"{name}{i}" for name in ("up", "down", "mid") for i in range(4)]
    hist = {sid: history[sid[:-1]] for sid in ids}
    batches = compose_round(
        ids, 3, batch_size=4, strategy="homogeneous", means=ordering_scores(hist, "paper"), seed=0
    )
    assert [sorted({sid[:-1] for sid in b}) for b in batches] == [["down"], ["mid"], ["up"]]
