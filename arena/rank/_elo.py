"""Weighted online Elo (PRD paper, Algorithm 1), averaged over random review orders.

Each review updates its two contestants: with `e = 1 / (1 + 10^((R_j-R_i)/400))`
and `s_A = (1 - score)/2`, `R_i += w K (s_A - e)` and `R_j -= w K (s_A - e)`
(the published `R_j += w K (s_B - e_B)`, as `s_B - e_B = -(s_A - e)`). `w` is
the reviewer's mean-normalised weight; weights start equal and are re-derived
from the ratings (min-max, normalise) after each pass until they settle.

The orders are the ones `numpy.random.default_rng(seed).permutation(n)` draws,
one after the other, but no order is ever held in full outside the kernel:

- a first compiled loop replays the generator's draws (NumPy's PCG64 and its
  Fisher-Yates shuffle, bit for bit) without shuffling anything, and keeps the
  generator state at the start of each order;
- each pass, the orders are split among threads; a thread rebuilds one order
  at a time from its start state into a buffer it owns, and runs the Elo
  updates of a few orders interleaved, so the CPU overlaps their independent
  dependency chains.

Ratings are kept in natural log-odds units inside the loop.
"""

from __future__ import annotations

import math
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from arena.rank._cores import cores
from arena.rank._encode import ReviewSet
from arena.rank._peerrank import weights_from_scores
from arena.rank._plain import compiled, elo_orders_plain
from arena.rank._reliability import trusted_slices

__all__ = ["EloResult", "prefetch_orders", "weighted_elo", "weighted_elo_prefetched"]

FloatArray = NDArray[np.float64]
StateArray = NDArray[np.uint64]

K_FACTOR = 32.0
START_RATING = 1000.0
_NAT_PER_ELO = math.log(10.0) / 400.0
# Orders whose updates one thread interleaves.
_INTERLEAVE = 4
# What the shuffled copies of the battles (one per interleaved order and thread) may
# take together: fewer orders are interleaved when a log is big, so that they do not
# grow with it past this (at least one copy a thread). A million battles (two bytes
# each) interleave three orders a thread within it, three million one.
_BUFFER_BYTES = 12 << 20
_MASK64 = (1 << 64) - 1


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


def _threads(orders: int) -> int:
    """Threads worth starting: one per core, at most one per interleaved group."""
    return max(1, min(cores(), -(-orders // _INTERLEAVE)))


def _generator_state(seed: int) -> StateArray:
    """The PCG64 state of `numpy.random.default_rng(seed)` as the kernel holds it."""
    bit_state = np.random.default_rng(seed).bit_generator.state
    core = bit_state["state"]
    return np.array(
        [
            core["state"] >> 64,
            core["state"] & _MASK64,
            core["inc"] >> 64,
            core["inc"] & _MASK64,
            bit_state["has_uint32"],
            bit_state["uinteger"],
        ],
        dtype=np.uint64,
    )


class _Orders:
    """The random orders of one `weighted_elo` call, replayed per pass by worker threads."""

    def __init__(
        self,
        rs: ReviewSet,
        orders: int,
        seed: int,
        starts: Future[StateArray] | None = None,
        trusted_only: bool = False,
    ) -> None:
        # `trusted_only`: leave out each reviewer's own battles. The rated reviews are
        # never copied: the kernels pack them from `rs` into each order's buffer.
        own = np.asarray(rs.reviewer_as_contestant, dtype=np.int64)
        if not trusted_only or not (own >= 0).any():
            own = np.full(rs.n_reviewers, -1, dtype=np.int64)
        self.rs = rs
        self.own = own
        self.n, self.battled = _rated_counts(rs, own)
        n = self.n
        self.n_models = rs.n_models
        self.orders = orders
        self.seed = seed
        self._starts: StateArray | None = None
        self._pending = starts
        # A review's kind is its reviewer and score: (gain, gain * target) depend on nothing else.
        kinds = rs.n_reviewers * 3
        # Model codes in the low 2 * bits, the kind above: the narrowest integer that holds them
        # (shuffling a smaller buffer touches less memory).
        self.bits = max(1, (rs.n_models - 1).bit_length())
        width = 2 * self.bits + max(1, (kinds - 1).bit_length())
        self.dtype = np.uint16 if width <= 16 else np.int32 if width <= 31 else np.int64
        self.plain: tuple[NDArray[np.int32], NDArray[np.int32], NDArray[np.int64]] | None = None
        if not compiled(n):
            # Small logs: NumPy draws the orders themselves, every order advances in step.
            rng = np.random.default_rng(seed)
            self.perms = np.empty((orders, n), dtype=np.int32)
            for k in range(orders):
                self.perms[k] = rng.permutation(n)
            mine = own[rs.reviewer]
            keep = (mine != rs.model_a) & (mine != rs.model_b)
            kind = rs.reviewer.astype(np.int64) * 3 + (rs.score.astype(np.int64) + 1)
            self.plain = (rs.model_a[keep], rs.model_b[keep], kind[keep])

    @property
    def codes(self) -> NDArray[np.integer[Any]]:
        """The rated reviews packed as the kernels read them (n,), in log order: built on
        each call, a slice at a time (no temporary of 8 bytes a review)."""
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
    def starts(self) -> StateArray:
        """The generator state at the start of each order (orders, 6), for the kernels;
        found on first use (numba)."""
        if self._starts is None:
            if self._pending is not None:
                self._starts = self._pending.result()
            else:
                from arena.rank import _elo_kernel

                self._starts = _elo_kernel.order_starts(
                    _generator_state(self.seed), self.n, self.orders
                )
        return self._starts

    def mean_rating(self, table: FloatArray) -> FloatArray:
        """Mean Elo (C,) over all orders for the per-kind (gain, gain * target) `table`."""
        return self.rating_and_error(table)[0]

    def rating_and_error(self, table: FloatArray) -> tuple[FloatArray, FloatArray]:
        """Mean Elo (C,) over all orders, and its standard error over the orders."""
        if self.plain is not None:
            out = elo_orders_plain(*self.plain, self.perms, table, self.n_models)
        else:
            out = self._compiled_orders(table)
        mean: FloatArray = START_RATING + out.sum(axis=0) / self.orders / _NAT_PER_ELO
        if self.orders < 2:
            return mean, np.full(self.n_models, np.nan)
        error: FloatArray = out.std(axis=0, ddof=1) / math.sqrt(self.orders) / _NAT_PER_ELO
        return mean, error

    def _compiled_orders(self, table: FloatArray) -> FloatArray:
        """Final ratings (orders, C), nats above the start, from the compiled kernel."""
        from arena.rank import _elo_kernel

        out = np.zeros((self.orders, self.n_models))
        starts = self.starts
        threads = _threads(self.orders)
        shares = [np.arange(t, self.orders, threads, dtype=np.int64) for t in range(threads)]
        copy_bytes = max(1, self.n * np.dtype(self.dtype).itemsize)
        group = max(1, min(_INTERLEAVE, _BUFFER_BYTES // (copy_bytes * threads)))
        buffers = [np.empty((min(group, share.size), self.n), dtype=self.dtype) for share in shares]
        rs = self.rs

        def work(t: int) -> None:
            _elo_kernel.run_orders(
                shares[t],
                starts,
                rs.model_a,
                rs.model_b,
                rs.reviewer,
                rs.score,
                self.own,
                self.bits,
                table,
                self.n_models,
                out,
                buffers[t],
            )

        if len(shares) == 1:
            work(0)
        else:
            with ThreadPoolExecutor(len(shares)) as pool:
                list(pool.map(work, range(len(shares))))
        return out


def _step_table(n_reviewers: int, weights: FloatArray) -> FloatArray:
    """(gain, gain * target) for each kind `reviewer * 3 + score + 1` of review."""
    gain = K_FACTOR * _NAT_PER_ELO * (weights * n_reviewers)
    target = np.array([1.0, 0.5, 0.0])  # (1 - score) / 2 for score -1, 0, +1
    table = np.empty((n_reviewers * 3, 2))
    table[:, 0] = np.repeat(gain, 3)
    table[:, 1] = np.repeat(gain, 3) * np.tile(target, n_reviewers)
    return table


def prefetch_orders(n: int, orders: int, seed: int) -> Future[StateArray] | None:
    """Start replaying the draws of `orders` permutations of `n` on a thread of its own.

    Finding where each order starts is one sequential pass over every draw
    (about 0.5 s for 100 orders of a million reviews); a caller with other work
    to do first (Bradley-Terry, the bootstrap) hands the result to
    `weighted_elo_prefetched`, so that pass runs beside it on another core.
    None on a log small enough for the NumPy orders (nothing to replay).
    """
    if not compiled(n):
        return None
    from arena.rank import _elo_kernel

    pool = ThreadPoolExecutor(1)
    try:
        return pool.submit(_elo_kernel.order_starts, _generator_state(seed), n, orders)
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

    Order `i` is the `i`-th `permutation(n_battles)` of `numpy.random.default_rng(seed)`.
    `weights` (R,), when given, are the first pass's reviewer weights (default
    equal); with `max_passes=1` they are used as they are.
    """
    return weighted_elo_prefetched(
        rs, None, orders=orders, seed=seed, tol=tol, max_passes=max_passes, weights=weights
    )


def weighted_elo_prefetched(
    rs: ReviewSet,
    starts: Future[StateArray] | None,
    *,
    orders: int = 100,
    seed: int = 0,
    tol: float = 1e-6,
    max_passes: int = 10,
    weights: FloatArray | None = None,
    trusted_only: bool = False,
) -> EloResult:
    """`weighted_elo`, with the orders' start states from `prefetch_orders(n, orders,
    seed)` (None: found here), `n` the battles rated. `trusted_only`: rate only the
    battles in which the reviewer does not compete, as if `rs` held no other (no copy
    of `rs` is made)."""
    replay = _Orders(rs, orders, seed, starts, trusted_only)
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
