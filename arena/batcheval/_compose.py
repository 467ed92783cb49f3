"""Which samples share a batch in each round (pure, seeded, deterministic).

Round 1 shuffles every sample and splits the list into batches. Later rounds
order the samples by their mean score so far and then build batches by the
chosen strategy:

- heterogeneous: cut the sorted list into strata of consecutive samples and
  give every batch one sample of each stratum, so each batch spans the whole
  quality range (the paper's choice);
- homogeneous: consecutive samples of the sorted list share a batch;
- random: shuffle again, ignoring the scores.

The number of batches is `ceil(n / batch_size)` and batch sizes differ by at
most one, so no batch is a lone leftover sample.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping, Sequence
from typing import Literal

__all__ = ["STRATEGIES", "Strategy", "compose_round", "seeded_rng"]

Strategy = Literal["heterogeneous", "random", "homogeneous"]
STRATEGIES: tuple[Strategy, ...] = ("heterogeneous", "random", "homogeneous")


def seeded_rng(*parts: object) -> random.Random:
    """A random generator seeded from a stable hash of the parts."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def _split_even(items: Sequence[str], k: int) -> list[list[str]]:
    """Consecutive chunks of `items` in `k` groups whose sizes differ by at most one."""
    q, r = divmod(len(items), k)
    out: list[list[str]] = []
    start = 0
    for i in range(k):
        size = q + (1 if i < r else 0)
        out.append(list(items[start : start + size]))
        start += size
    return out


def _order_by_means(
    sample_ids: Sequence[str], means: Mapping[str, float | None], rng: random.Random
) -> list[str]:
    """Samples sorted by mean score; unscored ones at the overall mean; ties at random."""
    known = [m for m in means.values() if m is not None]
    centre = sum(known) / len(known) if known else 0.0
    tiebreak = {sid: rng.random() for sid in sample_ids}

    def key(sid: str) -> tuple[float, float]:
        mean = means.get(sid)
        return (centre if mean is None else mean, tiebreak[sid])

    return sorted(sample_ids, key=key)


def compose_round(
    sample_ids: Sequence[str],
    round_index: int,
    *,
    batch_size: int,
    strategy: Strategy,
    means: Mapping[str, float | None],
    seed: object,
) -> list[list[str]]:
    """The batches of one round (1-based), each a list of sample ids in prompt order."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1 (got {batch_size})")
    if round_index < 1:
        raise ValueError(f"round_index must be at least 1 (got {round_index})")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
    if len(set(sample_ids)) != len(sample_ids):
        raise ValueError("sample ids must be unique")
    ids = sorted(sample_ids)  # the caller's order must not matter
    if not ids:
        return []
    k = math.ceil(len(ids) / batch_size)
    rng = seeded_rng(seed, "compose", round_index)
    if round_index == 1 or strategy == "random":
        rng.shuffle(ids)
        batches = _split_even(ids, k)
    elif strategy == "homogeneous":
        batches = _split_even(_order_by_means(ids, means, rng), k)
    else:
        ordered = _order_by_means(ids, means, rng)
        batches = [[] for _ in range(k)]
        # Strata of k consecutive samples; each gives one sample to each batch.
        # The last stratum may be short: it tops up batches picked at random.
        for start in range(0, len(ordered), k):
            stratum = ordered[start : start + k]
            rng.shuffle(stratum)
            targets = list(range(k))
            if len(stratum) < k:
                rng.shuffle(targets)
            for sid, target in zip(stratum, targets, strict=False):
                batches[target].append(sid)
    for batch in batches:
        rng.shuffle(batch)  # position in the prompt must not follow quality
    return batches
