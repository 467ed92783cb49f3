"""Weighted online Elo (PRD paper, Algorithm 1), averaged over random review orders.

Each review updates its two contestants: with `e = 1 / (1 + 10^((R_j-R_i)/400))`
and `s_A = (1 - score)/2`, `R_i += w K (s_A - e)` and `R_j -= w K (s_A - e)`
(the published `R_j += w K (s_B - e_B)`, as `s_B - e_B = -(s_A - e)`). `w` is
the reviewer's mean-normalised weight; weights start equal and are re-derived
from the ratings (min-max, normalise) after each pass until they settle.

The orders: order `k` (k = 0, 1, ...) of a call with `seed` is a Fisher-Yates
shuffle of the `n` rated reviews in log order driven by a counter-based hash
(SplitMix64's finaliser `mix64`, arithmetic modulo 2**64): with the order's key
`key = mix64(seed * 2**32 + k)`, step `i` (0 .. n-1) swaps positions `i` and
`i + ((h >> 32) * (n - i) >> 32)`, `h = mix64(key + (i + 1) * 0x9E3779B97F4A7C15)`,
and position `i` is then final (`order_permutations`). Every draw is a pure
function of (seed, k, i), so the NumPy path and the compiled one below compute
the very same orders, each its own way, and every pass replays them.

Orders are independent, so they run side by side; within an order each update
reads the ratings the previous one wrote. A log of fewer than
`COMPILED_MIN_ROWS` rated reviews advances every order in lockstep with NumPy
(one array step per review, across all orders): such a log is rated before
numba could even be imported. From there on the compiled loop of
`arena.rank._elo_kernel` runs the orders (on a thread per core), shuffling as
it rates; the tests check that both give the same ratings.

Ratings are kept in natural log-odds units inside the loop.
"""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arena.rank._cores import cores
from arena.rank._encode import ReviewSet
from arena.rank._peerrank import weights_from_scores
from arena.rank._reliability import trusted_slices

__all__ = [
    "COMPILED_MIN_ROWS",
    "EloOrders",
    "EloResult",
    "order_keys",
    "order_permutations",
    "prefetch_kernels",
    "prefetch_orders",
    "weighted_elo",
    "weighted_elo_prefetched",
]

FloatArray = NDArray[np.float64]
PermArray = NDArray[np.int32]

K_FACTOR = 32.0
START_RATING = 1000.0
_NAT_PER_ELO = math.log(10.0) / 400.0
# From this many rated reviews on, the orders run in the compiled kernel (numba);
# below it in NumPy, without loading numba (benchmarks/bench_small_rank.py).
COMPILED_MIN_ROWS = 50_000
# Orders one kernel thread runs (the kernel interleaves up to four at a time).
_ORDERS_PER_THREAD = 4
# At most this much for the compiled orders' shuffled copies of the reviews (a copy
# is 2 to 8 bytes a review): 4 copies on each of 2 threads up to about a million
# reviews of 2 bytes; a bigger log runs fewer side by side, so that the copies do
# not grow with the log (the end of a long run's peak, benchmarks/RESULTS.md).
SCRATCH_BYTES = 16 << 20

_log = logging.getLogger(__name__)


def compiled(rows: int) -> bool:
    """Whether Elo over `rows` rated reviews runs in the compiled kernel."""
    return rows >= COMPILED_MIN_ROWS


def prefetch_kernels(rows: Callable[[], int]) -> threading.Thread:
    """Ready numba and the Elo kernel in a daemon thread when `rows()` (called there: a
    size hint, such as the rows of a log's parts) reaches COMPILED_MIN_ROWS.

    A caller starts this before it reads its reviews: the reading (polars) and
    this (mostly the interpreter) then overlap, and the ranking finds the
    kernel ready. Below the threshold nothing is loaded. A failure here is
    only logged: the ranking loads the kernel itself, and meets the same error there.
    """

    def ready() -> None:
        try:
            if compiled(rows()):
                from arena.rank._elo_kernel import warm

                warm()
        except Exception as exc:  # the ranking loads it itself
            _log.debug("Elo kernel not prefetched: %s", exc)

    thread = threading.Thread(target=ready, name="arena-kernels", daemon=True)
    thread.start()
    return thread


_MASK64 = (1 << 64) - 1
# SplitMix64's increment and finaliser multipliers (Steele, Lea and Flood, 2014).
_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
# Steps of every order whose draws `order_permutations` holds at once.
_DRAW_BLOCK = 4096


def _mix64(z: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """SplitMix64's finaliser, element-wise (uint64 arithmetic wraps modulo 2**64)."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    out: NDArray[np.uint64] = z ^ (z >> np.uint64(31))
    return out


def order_keys(orders: int, seed: int) -> NDArray[np.uint64]:
    """The key of each order (orders,): `mix64(seed * 2**32 + k)` modulo 2**64."""
    base = np.uint64((seed << 32) & _MASK64)
    return _mix64(np.arange(orders, dtype=np.uint64) + base)


def _draws(keys: NDArray[np.uint64], n: int, start: int, stop: int) -> NDArray[np.int64]:
    """Where steps `start..stop-1` of each order swap to (steps, orders): position
    `i + ((h >> 32) * (n - i) >> 32)`, `h = mix64(key + (i + 1) * GAMMA)`."""
    step = np.arange(start, stop, dtype=np.int64)
    counter = (step + 1).astype(np.uint64) * _GAMMA
    high = _mix64(counter[:, None] + keys[None, :]) >> np.uint64(32)
    span = (n - step).astype(np.uint64)[:, None]
    out: NDArray[np.int64] = ((high * span) >> np.uint64(32)).astype(np.int64)
    out += step[:, None]
    return out


def order_permutations(n: int, orders: int, seed: int) -> PermArray:
    """The review orders of a call (orders, n): row `k` lists the reviews of order `k`
    (see the module docstring), every order shuffled in lockstep, one step at a time."""
    keys = order_keys(orders, seed)
    picked = np.empty((n, orders), dtype=np.int32)
    # Position p of order k is at `at[p * orders + k]`: step i's row is one slice.
    at = np.repeat(np.arange(n, dtype=np.int32), orders)
    lanes = np.arange(orders, dtype=np.int64)[None, :]
    for start in range(0, n, _DRAW_BLOCK):
        stop = min(n, start + _DRAW_BLOCK)
        flat = _draws(keys, n, start, stop)
        flat *= orders
        flat += lanes
        for i in range(start, stop):
            swap = flat[i - start]
            picked[i] = at[swap]
            at[swap] = at[i * orders : (i + 1) * orders]
    return picked.T


def _rated_counts(rs: ReviewSet, own: NDArray[np.int64]) -> tuple[int, NDArray[np.int64]]:
    """The reviews rated (`own[reviewer]`, the reviewer's contestant code or -1, is
    neither model) and each model's battles among them, a slice at a time."""
    battled = np.zeros(rs.n_models, dtype=np.int64)
    n = 0
    for part, keep in trusted_slices(rs, own):
        a, b = rs.model_a[part][keep], rs.model_b[part][keep]
        n += a.size
        battled += np.bincount(a, minlength=rs.n_models)
        battled += np.bincount(b, minlength=rs.n_models)
    return n, battled


@dataclass(frozen=True, eq=False)
class EloResult:
    """Mean weighted-Elo ratings over the random orders, and the Elo-derived weights."""

    rating: FloatArray  # (C,); START_RATING for a model without battles
    weights: FloatArray  # (R,) the weights used by the last pass, sum 1
    passes: int
    converged: bool
    orders: int
    # (C,) standard error of `rating` over the orders (Elo points): the spread of
    # the last pass's per-order ratings / sqrt(orders); NaN with a single order.
    order_error: FloatArray | None = None


def _lockstep(
    model_a: NDArray[np.integer[Any]],
    model_b: NDArray[np.integer[Any]],
    kind: NDArray[np.int64],
    perms: PermArray,
    table: FloatArray,
    n_models: int,
    checkpoints: NDArray[np.int64],
) -> FloatArray:
    """Ratings (points, orders, C), nats above the start, of every order of `perms` after
    `checkpoints[p]` reviews: step `t` applies the `t`-th review of every order at once,
    with the update of `arena.rank._elo_kernel.run_orders`."""
    orders, n = perms.shape
    out = np.empty((checkpoints.size, orders, n_models))
    base = (np.arange(orders, dtype=np.int64) * n_models)[None, :]
    order_major = perms.T  # (n, orders): step t's review of each order
    # Step t's cells: model A of every order, then model B of every order (all distinct).
    cells = np.concatenate(
        [model_a[order_major] + base, model_b[order_major] + base], axis=1
    ).astype(np.intp)
    kinds = kind[order_major]
    gain = table[kinds, 0]
    gain_target = table[kinds, 1]
    ratings = np.zeros(orders * n_models)
    # Buffers and their halves made once: a step allocates nothing and makes no view.
    now, pair = np.empty(2 * orders), np.empty(2 * orders)
    now_a, now_b, step, step_b = now[:orders], now[orders:], pair[:orders], pair[orders:]
    rows = zip(list(cells), list(gain), list(gain_target), strict=True)
    stops = checkpoints.tolist()
    p = 0
    for t, (cell, gain_t, target_t) in enumerate(rows):
        while p < len(stops) and stops[p] == t:
            out[p] = ratings.reshape(orders, n_models)
            p += 1
        np.take(ratings, cell, out=now)
        np.subtract(now_b, now_a, out=step)
        np.exp(step, out=step)
        np.add(step, 1.0, out=step)
        np.divide(gain_t, step, out=step)
        np.subtract(target_t, step, out=step)
        np.negative(step, out=step_b)
        np.add(now, pair, out=now)
        ratings[cell] = now
    out[p:] = ratings.reshape(orders, n_models)
    return out


class EloOrders:
    """The rated reviews and random orders of one `weighted_elo` call, run once per pass."""

    def __init__(
        self,
        rs: ReviewSet,
        orders: int,
        seed: int,
        trusted_only: bool = False,
    ) -> None:
        # `trusted_only`: leave out each reviewer's own battles.
        own = np.asarray(rs.reviewer_as_contestant, dtype=np.int64)
        if not trusted_only or not (own >= 0).any():
            own = np.full(rs.n_reviewers, -1, dtype=np.int64)
        self.rs = rs
        self.own = own
        self.n, self.battled = _rated_counts(rs, own)
        if self.n >= 1 << 32:
            raise ValueError(f"Elo orders take fewer than 2**32 reviews, not {self.n}")
        self.n_models = rs.n_models
        self.orders = orders
        self.seed = seed
        self._perms: PermArray | None = None
        # The compiled path's orders once walked (orders, n), kept when `keep` is set (by
        # a caller that replays them: then one pass draws them, the others read them).
        self.keep = False
        self._store: NDArray[np.integer[Any]] | None = None
        # A review's kind is its reviewer and score: (gain, gain * target) depend on nothing else.
        kinds = rs.n_reviewers * 3
        # The kernel reads each review packed: model codes in the low 2 * bits, the kind
        # above, in the narrowest integer that holds them.
        self.bits = max(1, (rs.n_models - 1).bit_length())
        width = 2 * self.bits + max(1, (kinds - 1).bit_length())
        self.dtype = np.uint16 if width <= 16 else np.int32 if width <= 31 else np.int64
        self.compiled = compiled(self.n)
        self.columns: tuple[NDArray[Any], NDArray[Any], NDArray[np.int64]] | None = None
        self.packed: NDArray[np.integer[Any]] | None = None
        if self.compiled:
            self.packed = self._pack()
        else:
            mine = own[rs.reviewer]
            keep = (mine != rs.model_a) & (mine != rs.model_b)
            kind = rs.reviewer.astype(np.int64) * 3 + (rs.score.astype(np.int64) + 1)
            self.columns = (rs.model_a[keep], rs.model_b[keep], kind[keep])

    def _pack(self) -> NDArray[np.integer[Any]]:
        """The rated reviews packed as the kernel reads them (n,), in log order, built a
        slice at a time (no temporary of 8 bytes a review)."""
        rs, dtype, bits = self.rs, self.dtype, self.bits
        out: NDArray[np.integer[Any]] = np.empty(self.n, dtype=dtype)
        at = 0
        for part, keep in trusted_slices(rs, self.own):
            codes: NDArray[np.integer[Any]] = rs.reviewer[part][keep].astype(dtype)
            codes *= 3
            codes += (rs.score[part][keep] + 1).astype(dtype)
            codes <<= dtype(bits)
            codes |= rs.model_b[part][keep].astype(dtype)
            codes <<= dtype(bits)
            codes |= rs.model_a[part][keep].astype(dtype)
            out[at : at + codes.size] = codes
            at += codes.size
        return out

    @property
    def perms(self) -> PermArray:
        """The orders (orders, n) of the NumPy path."""
        if self._perms is None:
            self._perms = order_permutations(self.n, self.orders, self.seed)
        return self._perms

    def ratings_at(self, table: FloatArray, checkpoints: NDArray[np.int64]) -> FloatArray:
        """Ratings (points, orders, C), nats above the start, after `checkpoints[p]`
        reviews of each order, for the per-kind (gain, gain * target) `table`."""
        if self.columns is not None:
            return _lockstep(*self.columns, self.perms, table, self.n_models, checkpoints)
        from arena.rank._elo_kernel import run_orders

        assert self.packed is not None
        packed, keys = self.packed, order_keys(self.orders, self.seed)
        stored = self._store is not None
        if self._store is None and self.keep:
            self._store = np.empty((self.orders, self.n), dtype=packed.dtype)
        store = self._store
        out = np.zeros((checkpoints.size, self.orders, self.n_models))
        # Each order run side by side shuffles its own copy of the reviews: the copies
        # stay within SCRATCH_BYTES (fewer threads, fewer orders each, for a big log).
        copies = max(1, SCRATCH_BYTES // max(1, self.n * packed.dtype.itemsize))
        threads = max(1, min(cores(), -(-self.orders // _ORDERS_PER_THREAD), copies))
        per_thread = max(1, min(_ORDERS_PER_THREAD, copies // threads))
        bounds = np.linspace(0, self.orders, threads + 1).astype(np.int64).tolist()

        def work(t: int) -> None:
            lo, hi = bounds[t], bounds[t + 1]
            part = np.zeros((checkpoints.size, hi - lo, self.n_models))
            rows = (
                store[lo:hi] if store is not None else np.empty((per_thread, self.n), packed.dtype)
            )
            run_orders(
                packed,
                keys[lo:hi],
                rows,
                stored,
                self.bits,
                table,
                self.n_models,
                checkpoints,
                part,
            )
            out[:, lo:hi] = part

        if threads == 1:
            work(0)
        else:
            with ThreadPoolExecutor(threads) as pool:
                list(pool.map(work, range(threads)))
        return out

    def rating_and_error(self, table: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Mean Elo (C,) over all orders, and its standard error over the orders."""
        out = self.ratings_at(table, np.array([self.n], dtype=np.int64))[0]
        mean: FloatArray = START_RATING + out.sum(axis=0) / self.orders / _NAT_PER_ELO
        if self.orders < 2:
            return mean, np.full(self.n_models, np.nan)
        error: FloatArray = out.std(axis=0, ddof=1) / math.sqrt(self.orders) / _NAT_PER_ELO
        return mean, error


def _step_table(n_reviewers: int, weights: FloatArray) -> FloatArray:
    """(gain, gain * target) for each kind `reviewer * 3 + score + 1` of review."""
    gain = K_FACTOR * _NAT_PER_ELO * (weights * n_reviewers)
    target = np.array([1.0, 0.5, 0.0])  # (1 - score) / 2 for score -1, 0, +1
    table = np.empty((n_reviewers * 3, 2))
    table[:, 0] = np.repeat(gain, 3)
    table[:, 1] = np.repeat(gain, 3) * np.tile(target, n_reviewers)
    return table


def prefetch_orders(
    rs: ReviewSet, n: int, orders: int, seed: int, trusted_only: bool = False
) -> Future[EloOrders] | None:
    """Start preparing the orders of `weighted_elo_prefetched(rs, ..., orders=orders,
    seed=seed, trusted_only=trusted_only)` (the rated reviews counted and packed for
    the kernel) on a thread of its own, `n` the reviews it rates, so that a caller with
    other work to do first (Bradley-Terry, the bootstrap) hands them over ready. None
    on a log small enough for the NumPy orders (drawn when needed, at once)."""
    if not compiled(n):
        return None
    pool = ThreadPoolExecutor(1)
    try:
        return pool.submit(EloOrders, rs, orders, seed, trusted_only)
    finally:
        pool.shutdown(wait=False)


def weighted_elo(
    rs: ReviewSet,
    *,
    orders: int = 100,
    seed: int = 0,
    tol: float = 1e-6,
    max_passes: int = 10,
    weights: FloatArray | None = None,
) -> EloResult:
    """Weighted Elo averaged over `orders` seeded random review orders.

    Order `i` is the `i`-th order of `seed` (see the module docstring).
    `weights` (R,), when given, are the first pass's reviewer weights (default
    equal); with `max_passes=1` they are used as they are.
    """
    return weighted_elo_prefetched(
        rs, None, orders=orders, seed=seed, tol=tol, max_passes=max_passes, weights=weights
    )


def weighted_elo_prefetched(
    rs: ReviewSet,
    prepared: Future[EloOrders] | None,
    *,
    orders: int = 100,
    seed: int = 0,
    tol: float = 1e-6,
    max_passes: int = 10,
    weights: FloatArray | None = None,
    trusted_only: bool = False,
) -> EloResult:
    """`weighted_elo`, with the orders from `prefetch_orders` for the same arguments
    (None: drawn here). `trusted_only`: rate only the
    battles in which the reviewer does not compete, as if `rs` held no other (no copy
    of `rs` is made)."""
    replay = EloOrders(rs, orders, seed, trusted_only) if prepared is None else prepared.result()
    replay.keep = max_passes > 1  # the passes after the first read the orders it drew
    n = replay.n
    n_reviewers = rs.n_reviewers
    if weights is None:
        weights = np.full(n_reviewers, 1.0 / max(n_reviewers, 1))
    else:
        weights = np.asarray(weights, dtype=np.float64)
    if n == 0 or orders < 1:
        nothing = np.full(rs.n_models, np.nan)
        return EloResult(
            np.full(rs.n_models, START_RATING), weights, 0, True, max(orders, 0), nothing
        )
    battled = replay.battled
    rating, error = replay.rating_and_error(_step_table(n_reviewers, weights))
    passes, converged = 1, False
    while passes < max_passes:
        scores = np.where(battled > 0, rating, np.nan)[None]
        new = weights_from_scores(scores, rs.reviewer_as_contestant)[0]
        moved = float(np.abs(new - weights).max(initial=0.0))
        if moved < tol:
            converged = True
            break
        weights = new
        rating, error = replay.rating_and_error(_step_table(n_reviewers, weights))
        passes += 1
    return EloResult(rating, weights, passes, converged, orders, error)
