"""Pure math over BatchEval scores: final scores, bootstrap intervals, correlations."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["bootstrap_ci", "correlations", "mean_and_spread", "running_means", "win_rates"]


def mean_and_spread(scores: Sequence[float | None]) -> tuple[float | None, float | None]:
    """Mean over rounds of the scores given, and their sample standard deviation."""
    known = [s for s in scores if s is not None]
    if not known:
        return None, None
    mean = sum(known) / len(known)
    if len(known) == 1:
        return mean, 0.0
    var = sum((s - mean) ** 2 for s in known) / (len(known) - 1)
    return mean, math.sqrt(var)


def running_means(history: Mapping[str, Sequence[float | None]]) -> dict[str, float | None]:
    """Each sample's mean score so far (None while it has none)."""
    return {sid: mean_and_spread(scores)[0] for sid, scores in history.items()}


def bootstrap_ci(
    values: Sequence[float], *, n_boot: int = 2000, level: float = 0.95, seed: int = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of `values` (resampled with replacement)."""
    if not values:
        raise ValueError("bootstrap_ci needs at least one value")
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1) (got {level})")
    data = np.asarray(values, dtype=float)
    if data.size == 1:
        return float(data[0]), float(data[0])
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, data.size, size=(n_boot, data.size))
    means = data[idx].mean(axis=1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(means, [tail, 100 - tail])
    return float(lo), float(hi)


def _pearson(a: np.ndarray, b: np.ndarray) -> float | None:
    da, db = a - a.mean(), b - b.mean()
    denom = math.sqrt(float((da * da).sum()) * float((db * db).sum()))
    return float((da * db).sum()) / denom if denom > 0 else None


def _ranks(a: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties sharing their average rank."""
    order = np.argsort(a, kind="stable")
    ranks = np.empty(len(a), dtype=float)
    ranks[order] = np.arange(1, len(a) + 1)
    for value in np.unique(a):
        tied = a == value
        ranks[tied] = ranks[tied].mean()
    return ranks


def _kendall_tau_b(a: np.ndarray, b: np.ndarray) -> float | None:
    concordant = discordant = ties_a = ties_b = 0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            sa, sb = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
            if sa == 0 and sb == 0:
                continue
            if sa == 0:
                ties_a += 1
            elif sb == 0:
                ties_b += 1
            elif sa == sb:
                concordant += 1
            else:
                discordant += 1
    denom = math.sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b))
    return (concordant - discordant) / denom if denom > 0 else None


def correlations(x: Mapping[str, float], y: Mapping[str, float]) -> dict[str, float | int | None]:
    """Pearson, Spearman and Kendall (tau-b) correlation over the keys both scorings have."""
    keys = sorted(set(x) & set(y))
    out: dict[str, float | int | None] = {
        "n": len(keys),
        "pearson": None,
        "spearman": None,
        "kendall": None,
    }
    if len(keys) < 3:
        return out
    a = np.array([x[k] for k in keys], dtype=float)
    b = np.array([y[k] for k in keys], dtype=float)
    out["pearson"] = _pearson(a, b)
    out["spearman"] = _pearson(_ranks(a), _ranks(b))
    out["kendall"] = _kendall_tau_b(a, b)
    return out


def win_rates(battles: Sequence[tuple[str, str, str]]) -> dict[str, float]:
    """Each model's share of points in (model_a, model_b, verdict) reviews; ties count half."""
    points: dict[str, float] = {}
    games: dict[str, int] = {}
    for model_a, model_b, verdict in battles:
        if verdict not in ("A", "B", "tie"):
            continue
        a_points = {"A": 1.0, "B": 0.0, "tie": 0.5}[verdict]
        for model, p in ((model_a, a_points), (model_b, 1.0 - a_points)):
            points[model] = points.get(model, 0.0) + p
            games[model] = games.get(model, 0) + 1
    return {m: points[m] / games[m] for m in sorted(games)}
