"""Which samples share a batch in each round (pure, seeded, deterministic).

Two compositions, for every strategy, named after what orders later rounds:

`previous-round` (the default; the released BatchEval code): every batch holds exactly
`batch_size` samples except one short last batch of the `n mod batch_size`
samples left over. Round 1 shuffles every sample and cuts the list into
batches in order. Later rounds order the samples by their score in the
previous round (see `ordering_scores`), set aside `n mod batch_size` samples
picked at random as the short last batch, and build the full batches from the
rest (`m = n - n mod batch_size` samples, `k = m / batch_size` full batches):

- heterogeneous: the sorted rest is cut into `batch_size` strata of `k`
  consecutive samples, and batch i takes the i-th sample of every stratum
  (sorted positions i, k + i, 2k + i, ...), so every batch spans the whole
  quality range;
- homogeneous: consecutive runs of `batch_size` sorted samples;
- random: all samples shuffled again, ignoring the scores, and cut in order.

`running-mean` (as the paper's Algorithm 1 writes it: the mean over all rounds
so far orders the samples; the batch sizes are arena's): `ceil(n / batch_size)`
batches whose sizes differ by at most one (no short batch). Later rounds order
the samples by their mean score over all rounds so far; heterogeneous cuts that order into
strata of `ceil(n / batch_size)` consecutive samples and places each
stratum's samples in distinct batches at random (a short last stratum tops up
batches picked at random); homogeneous and random as above.

The earlier names are accepted as aliases: `paper` for `previous-round` (it
named the released code, not the paper's text) and `arena` for `running-mean`.

Either way, a sample unscored in the scores that order the round sits at the
mean of the scored ones, ties are broken at random, and the samples of a batch
are shuffled, so position in the prompt never follows quality.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping, Sequence
from typing import Literal

from arena.batcheval._aggregate import running_means

__all__ = [
    "COMPOSITIONS",
    "COMPOSITION_ALIASES",
    "STRATEGIES",
    "Composition",
    "Strategy",
    "compose_round",
    "ordering_scores",
    "seeded_rng",
]

Strategy = Literal["heterogeneous", "random", "homogeneous"]
STRATEGIES: tuple[Strategy, ...] = ("heterogeneous", "random", "homogeneous")
Composition = Literal["previous-round", "running-mean"]
COMPOSITIONS: tuple[Composition, ...] = ("previous-round", "running-mean")
# The earlier names, still accepted (in the YAML too).
COMPOSITION_ALIASES: dict[str, Composition] = {
    "paper": "previous-round",
    "arena": "running-mean",
}


def _canonical(composition: str) -> Composition:
    """A composition's name, its earlier alias resolved; ValueError when unknown."""
    name = COMPOSITION_ALIASES.get(composition, composition)
    for known in COMPOSITIONS:
        if name == known:
            return known
    raise ValueError(
        f"unknown composition {composition!r} (known: {', '.join(COMPOSITIONS)}; "
        f"aliases: {', '.join(COMPOSITION_ALIASES)})"
    )


def seeded_rng(*parts: object) -> random.Random:
    """A random generator seeded from a stable hash of the parts."""
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return random.Random(int.from_bytes(digest, "big"))


def ordering_scores(
    history: Mapping[str, Sequence[float | None]], composition: str
) -> dict[str, float | None]:
    """The scores that order the next round: the previous round's or the mean so far."""
    if _canonical(composition) == "previous-round":
        return {sid: (scores[-1] if scores else None) for sid, scores in history.items()}
    return running_means(history)


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


def _chunks(items: Sequence[str], size: int) -> list[list[str]]:
    """Consecutive chunks of `size` (the last one shorter when it does not divide)."""
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def _order_by_means(
    sample_ids: Sequence[str], means: Mapping[str, float | None], rng: random.Random
) -> list[str]:
    """Samples sorted by score, lowest first; unscored ones at the overall mean; ties at random."""
    known = [m for m in means.values() if m is not None]
    centre = sum(known) / len(known) if known else 0.0
    tiebreak = {sid: rng.random() for sid in sample_ids}

    def key(sid: str) -> tuple[float, float]:
        mean = means.get(sid)
        return (centre if mean is None else mean, tiebreak[sid])

    return sorted(sample_ids, key=key)


def _previous_round(
    ids: list[str],
    round_index: int,
    batch_size: int,
    strategy: Strategy,
    means: Mapping[str, float | None],
    rng: random.Random,
) -> list[list[str]]:
    if round_index == 1 or strategy == "random":
        rng.shuffle(ids)
        return _chunks(ids, batch_size)
    ordered = _order_by_means(ids, means, rng)
    leftover = len(ordered) % batch_size
    aside = set(rng.sample(ordered, leftover))
    rest = [sid for sid in ordered if sid not in aside]
    short = [sid for sid in ordered if sid in aside]
    k = len(rest) // batch_size
    if strategy == "heterogeneous":
        full = [[rest[j * k + i] for j in range(batch_size)] for i in range(k)]
    else:
        full = _chunks(rest, batch_size)
    return full + ([short] if short else [])


def _running_mean(
    ids: list[str],
    round_index: int,
    batch_size: int,
    strategy: Strategy,
    means: Mapping[str, float | None],
    rng: random.Random,
) -> list[list[str]]:
    k = math.ceil(len(ids) / batch_size)
    if round_index == 1 or strategy == "random":
        rng.shuffle(ids)
        return _split_even(ids, k)
    if strategy == "homogeneous":
        return _split_even(_order_by_means(ids, means, rng), k)
    ordered = _order_by_means(ids, means, rng)
    batches: list[list[str]] = [[] for _ in range(k)]
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
    return batches


def compose_round(
    sample_ids: Sequence[str],
    round_index: int,
    *,
    batch_size: int,
    strategy: Strategy,
    means: Mapping[str, float | None],
    seed: object,
    composition: str = "previous-round",
) -> list[list[str]]:
    """The batches of one round (1-based), each a list of sample ids in prompt order.

    `means` are the scores that order the round (`ordering_scores`: the
    previous round's for `previous-round`, the running means for `running-mean`;
    the aliases `paper` and `arena` name the same two).
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1 (got {batch_size})")
    if round_index < 1:
        raise ValueError(f"round_index must be at least 1 (got {round_index})")
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r} (known: {', '.join(STRATEGIES)})")
    name = _canonical(composition)
    if len(set(sample_ids)) != len(sample_ids):
        raise ValueError("sample ids must be unique")
    ids = sorted(sample_ids)  # the caller's order must not matter
    if not ids:
        return []
    rng = seeded_rng(seed, "compose", round_index)
    build = _previous_round if name == "previous-round" else _running_mean
    batches = build(ids, round_index, batch_size, strategy, means, rng)
    for batch in batches:
        rng.shuffle(batch)  # position in the prompt must not follow quality
    return batches
