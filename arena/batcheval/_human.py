"""BatchEval against human scores: per-sample Pearson and Spearman, with bootstrap intervals.

This is the paper's evaluation: how well the scores of each sample agree with
the scores people gave the same samples, per criterion. The human file has one
row per (sample, criterion) judgment, in JSONL or CSV:

- `id`: the sample id (the `id` of the samples file), or, for a tournament's
  answers, `question_id` and `model` instead;
- `criterion`: the criterion's name (optional when the config has only one);
- `score`: a number (several rows for one sample and criterion are averaged,
  e.g. several annotators).

A sample's model score is its final BatchEval score (mean over rounds), averaged
over scorers for the `all scorers` row; each scorer also gets its own row when
there are several. Intervals are percentile bootstrap intervals over samples
(pairs resampled with replacement).

`human_by_round` shows how the agreement builds up over the rounds: per
criterion and round r, the correlation of round r's scores alone, and of the
mean over rounds 1..r (the final score a run of r rounds would have given).

`label_copy_agreement` is the no-LLM baseline of the `examples:` section: each
sample scored by the mean human score of its k nearest pool items (TF-IDF of
the context, the prompts' exclusions), correlated with the human scores the
same way. A scorer that shows examples should beat it; if it does not, what
looks like a gain from the examples may be copied labels (leakage).
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from arena.config import ConfigError, ExamplePool, read_jsonl_objects
from arena.examples import SampleRef, label_copy

__all__ = [
    "ALL_SCORERS",
    "LABEL_COPY",
    "HumanScores",
    "human_agreement",
    "human_by_round",
    "label_copy_agreement",
    "load_human_scores",
]

ALL_SCORERS = "all scorers"


@dataclass(frozen=True)
class HumanScores:
    """Mean human score per (criterion, sample key); a key is an id or (question_id, model)."""

    path: Path
    scores: Mapping[str, Mapping[str, float]]  # criterion -> key -> mean human score
    by: str  # "id" | "answer" (question_id and model)

    def key_of(self, sample_id: str, question_id: str | None, model: str | None) -> str:
        """The key a scored sample is matched by."""
        if self.by == "id":
            return sample_id
        return _answer_key(question_id, model)


def _answer_key(question_id: object, model: object) -> str:
    return f"{question_id}\x1f{model}"


def _rows(path: Path) -> list[tuple[str, dict[str, Any]]]:
    if path.suffix.lower() == ".csv":
        try:
            with path.open(newline="", encoding="utf-8") as handle:
                return [(f"row {n}", dict(row)) for n, row in enumerate(csv.DictReader(handle), 2)]
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(path, "", f"cannot read: {exc}") from None
    return read_jsonl_objects(path)


def load_human_scores(path: Path, criteria: Sequence[str]) -> HumanScores:
    """Read a human scores file; ConfigError (file, row, field, problem) when it is bad."""
    if not path.is_file():
        raise ConfigError(path, "", "human scores file not found")
    sums: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    kinds: set[str] = set()
    for where, obj in _rows(path):
        sid = obj.get("id")
        if sid not in (None, ""):
            kinds.add("id")
            key = str(sid)
        elif obj.get("question_id") not in (None, "") and obj.get("model") not in (None, ""):
            kinds.add("answer")
            key = _answer_key(obj["question_id"], obj["model"])
        else:
            raise ConfigError(path, f"{where}: id", "missing 'id' (or 'question_id' and 'model')")
        criterion = obj.get("criterion")
        if criterion in (None, ""):
            if len(criteria) != 1:
                raise ConfigError(
                    path,
                    f"{where}: criterion",
                    f"missing 'criterion' (one of {', '.join(criteria)})",
                )
            criterion = criteria[0]
        if criterion not in criteria:
            raise ConfigError(
                path,
                f"{where}: criterion",
                f"unknown criterion '{criterion}' (known: {', '.join(criteria)})",
            )
        raw = obj.get("score")
        try:
            if isinstance(raw, bool):
                raise ValueError
            value = float(raw)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            raise ConfigError(path, f"{where}: score", f"not a number: {raw!r}") from None
        if not math.isfinite(value):
            raise ConfigError(path, f"{where}: score", f"not a finite number: {raw!r}")
        sums[str(criterion)][key].append(value)
    if not sums:
        raise ConfigError(path, "", "no human scores in file")
    if len(kinds) > 1:
        raise ConfigError(
            path, "id", "name samples one way: every row by 'id', or every row by question_id/model"
        )
    scores = {c: {k: sum(v) / len(v) for k, v in by_key.items()} for c, by_key in sums.items()}
    return HumanScores(path, scores, kinds.pop())


def _pearson_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of each row of `a` with the same row of `b` (nan when constant)."""
    da = a - a.mean(axis=1, keepdims=True)
    db = b - b.mean(axis=1, keepdims=True)
    denom = np.sqrt((da * da).sum(axis=1) * (db * db).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denom > 0, (da * db).sum(axis=1) / denom, np.nan)


def _interval(values: np.ndarray, level: float) -> list[float] | None:
    finite = values[np.isfinite(values)]
    if finite.size < max(10, values.size // 2):
        return None
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(finite, [tail, 100 - tail])
    return [float(lo), float(hi)]


def _agreement(
    model: Mapping[str, float], human: Mapping[str, float], n_boot: int, level: float, seed: int
) -> dict[str, Any]:
    keys = sorted(set(model) & set(human))
    out: dict[str, Any] = {
        "n": len(keys),
        "pearson": None,
        "pearson_ci": None,
        "spearman": None,
        "spearman_ci": None,
    }
    if len(keys) < 3:
        return out
    # scipy.stats costs about 90 MB of memory to import: only what needs it pays.
    from scipy.stats import rankdata

    a = np.array([[model[k] for k in keys]], dtype=float)
    b = np.array([[human[k] for k in keys]], dtype=float)
    ra, rb = rankdata(a, axis=1), rankdata(b, axis=1)
    pearson, spearman = float(_pearson_rows(a, b)[0]), float(_pearson_rows(ra, rb)[0])
    out["pearson"] = None if math.isnan(pearson) else pearson
    out["spearman"] = None if math.isnan(spearman) else spearman
    if n_boot > 0:
        rng = np.random.default_rng(seed)
        idx = rng.integers(0, len(keys), size=(n_boot, len(keys)))
        ba, bb = a[0][idx], b[0][idx]
        out["pearson_ci"] = _interval(_pearson_rows(ba, bb), level)
        ranks_a, ranks_b = rankdata(ba, axis=1), rankdata(bb, axis=1)
        out["spearman_ci"] = _interval(_pearson_rows(ranks_a, ranks_b), level)
    return out


def human_agreement(
    scores: pl.DataFrame,
    human: HumanScores,
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Per criterion (and scorer): Pearson and Spearman of final scores against human scores.

    `scores` is a final-scores frame (`sample_id, criterion, scorer, score`, and
    `model, question_id` for a tournament's answers). Each row: `criterion`,
    `scorer` (`all scorers`: the mean over scorers), `n` (samples with both),
    `pearson`, `pearson_ci`, `spearman`, `spearman_ci` (null below 3 samples).
    """
    per: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    scorers: dict[str, set[str]] = defaultdict(set)
    for row in scores.iter_rows(named=True):
        if row["score"] is None or row["criterion"] not in human.scores:
            continue
        key = human.key_of(row["sample_id"], row.get("question_id"), row.get("model"))
        per[(row["criterion"], row["scorer"])][key].append(float(row["score"]))
        per[(row["criterion"], ALL_SCORERS)][key].append(float(row["score"]))
        scorers[row["criterion"]].add(row["scorer"])
    out: list[dict[str, Any]] = []
    for criterion in sorted(human.scores):
        names = [ALL_SCORERS] + (sorted(scorers[criterion]) if len(scorers[criterion]) > 1 else [])
        for scorer in names:
            model = {k: sum(v) / len(v) for k, v in per[(criterion, scorer)].items()}
            out.append(
                {
                    "criterion": criterion,
                    "scorer": scorer,
                    **_agreement(model, human.scores[criterion], n_boot, level, seed),
                }
            )
    return out


def human_by_round(
    scores: pl.DataFrame,
    human: HumanScores,
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Per criterion and round: Pearson and Spearman against human scores, round by round.

    `scores` is a final-scores frame with `round_scores` (one entry per round,
    null when unscored). Two rows per (criterion, round r), both over the mean
    of the scorers: `"scores": "round"` (round r's scores alone) and
    `"scores": "mean to round"` (each sample's mean over rounds 1..r). Each row:
    `criterion`, `round`, `scores`, `n`, `pearson`, `pearson_ci`, `spearman`,
    `spearman_ci`.
    """
    # criterion -> key -> scorer -> that scorer's round scores
    per: dict[str, dict[str, list[Sequence[float | None]]]] = defaultdict(lambda: defaultdict(list))
    rounds = 0
    for row in scores.iter_rows(named=True):
        if row["criterion"] not in human.scores:
            continue
        history = list(row["round_scores"] or [])
        rounds = max(rounds, len(history))
        key = human.key_of(row["sample_id"], row.get("question_id"), row.get("model"))
        per[row["criterion"]][key].append(history)
    out: list[dict[str, Any]] = []
    for criterion in sorted(human.scores):
        for r in range(1, rounds + 1):
            alone: dict[str, float] = {}
            upto: dict[str, float] = {}
            for key, histories in per[criterion].items():
                this = [v for h in histories if len(h) >= r and (v := h[r - 1]) is not None]
                means: list[float] = []
                for h in histories:
                    got = [v for v in h[:r] if v is not None]
                    if got:
                        means.append(sum(got) / len(got))
                if this:
                    alone[key] = sum(this) / len(this)
                if means:
                    upto[key] = sum(means) / len(means)
            for kind, model in (("round", alone), ("mean to round", upto)):
                out.append(
                    {
                        "criterion": criterion,
                        "round": r,
                        "scores": kind,
                        **_agreement(model, human.scores[criterion], n_boot, level, seed),
                    }
                )
    return out


LABEL_COPY = "label copy"


def label_copy_agreement(
    samples: Mapping[str, SampleRef],
    human: HumanScores,
    pool: ExamplePool,
    *,
    n_boot: int = 1000,
    level: float = 0.95,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """Per criterion: the label-copy baseline's Pearson and Spearman against human scores.

    `samples`: key (as `human.key_of` gives it) -> (question id, context, text).
    Each row: `criterion`, `scorer` ("label copy"), `k`, `n`, `pearson`,
    `pearson_ci`, `spearman`, `spearman_ci`; `n` counts the samples with a
    human score and at least one eligible pool item.
    """
    out: list[dict[str, Any]] = []
    for criterion in sorted(human.scores):
        copied: dict[str, float] = {}
        for key, ref in samples.items():
            if key not in human.scores[criterion]:
                continue
            value = label_copy(pool, criterion, ref)
            if value is not None:
                copied[key] = value
        out.append(
            {
                "criterion": criterion,
                "scorer": LABEL_COPY,
                "k": pool.config.k,
                **_agreement(copied, human.scores[criterion], n_boot, level, seed),
            }
        )
    return out
