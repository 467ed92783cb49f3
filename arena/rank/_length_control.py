"""Length-controlled win rates against one baseline model (`--length-control`).

Every model is fitted alone, on its own battles with the baseline, so its
figure does not depend on which other models were imported. A battle of m
against the baseline on question q is a logistic observation of m's share of
the win y (graded verdicts as given, weighted by the battle's weight):

    logit P(m beats the baseline on q) = theta_m + phi_m * tanh(delta / s_m) - d_q

delta = length(m's answer) - length(the baseline's answer) in characters, s_m
the standard deviation of delta over m's battles, and d_q the question's
difficulty, held fixed (the spec's gamma * difficulty_q with gamma = -1: d_q
is in logits). The figure is the prediction at the baseline's length,
averaged over the questions m played:

    lc_win_rate(m) = mean_q sigmoid(theta_m - d_q)

Where d_q comes from (`DifficultyTable`): a reference set of models' battles
with the baseline, fitted once and jointly (`reference_difficulty`):

    logit P = theta_m + phi_ref * tanh(delta / s_m) - d_q,  d_q ~ N(0, DIFFICULTY_PRIOR_SD^2)

one strength per reference model, one length slope phi_ref for all, one
difficulty per question. The table (questions, d_q, phi_ref, the reference
models and the baseline) is saved and read back (`save_difficulty_table`,
`load_difficulty_table`). Without a table every d_q is 0.

The length slope phi_m. One model's battles hardly separate phi_m from
theta_m when its answers are nearly all longer (or all shorter) than the
baseline's, so phi_m has a normal prior. Shrinking it toward zero, as the
method notes suggest, hands a model that pads its answers the judge's
reward for length (its extra wins go to theta_m) and misses AlpacaEval's
published figures (docs/anchors.md). Instead phi_m is shrunk toward the
judge's own taste for length as the data show it:

- with a table: N(phi_ref, TABLE_PRIOR_SD^2), phi_ref the reference fit's slope;
- without one: N(DEFAULT_PRIOR_MEAN, DEFAULT_PRIOR_SD^2).

The two widths and the default centre are constants, each chosen on half of
AlpacaEval 2.0's models and checked on the other half (benchmarks/bench_lc.py).
theta_m has a wide N(0, THETA_PRIOR_SD^2) prior that only keeps a model that
won (or lost) every battle finite. The per-model fit is Newton steps on the
two parameters.

The interval: the 2.5 / 97.5 percentiles over `bootstrap` resamples of the
questions, each round refitted (the point estimate is the full data's fit,
whatever the rounds).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

from arena.rank._aggregate import bootstrap_counts
from arena.rank._encode import ReviewSet

__all__ = [
    "DEFAULT_PRIOR_MEAN",
    "DEFAULT_PRIOR_SD",
    "DIFFICULTY_PRIOR_SD",
    "TABLE_PRIOR_SD",
    "DifficultyTable",
    "DifficultyTableError",
    "LengthControl",
    "LengthControlled",
    "length_controlled_win_rates",
    "load_difficulty_table",
    "reference_difficulty",
    "save_difficulty_table",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

# The length slope's prior (logits per unit of tanh(delta / s_m)): its width
# around a table's reference slope, and its centre and width without a table.
TABLE_PRIOR_SD = 0.3
DEFAULT_PRIOR_MEAN = 0.9
DEFAULT_PRIOR_SD = 0.1
THETA_PRIOR_SD = 10.0
# The reference fit: prior standard deviation (logits) of a question's difficulty,
# and of the strengths and the shared slope (wide: only keeps them finite).
DIFFICULTY_PRIOR_SD = 2.0
REFERENCE_PRIOR_SD = 10.0

_TABLE_HEADER = "arena length-control difficulty table"
_TABLE_KEYS = ("baseline", "reference_models", "length_coef", "battles")


@dataclass(frozen=True)
class LengthControlled:
    """One model's length-controlled win rate against the baseline (fractions; NaN: none)."""

    model: str
    lc_win_rate: float
    lc_ci_low: float
    lc_ci_high: float
    length_coef: float  # phi_m
    n: int  # battles against the baseline with both lengths known
    length_sd: float = float("nan")  # s_m


@dataclass(frozen=True)
class DifficultyTable:
    """Question difficulties (logits) from a reference set's joint fit, held fixed."""

    baseline: str
    questions: tuple[str, ...]
    difficulty: FloatArray
    length_coef: float  # phi_ref: the reference fit's shared length slope
    reference_models: tuple[str, ...]
    battles: int  # the reference battles fitted
    file: str | None = None  # where it was read from or saved to


@dataclass(frozen=True)
class LengthControl:
    """The fit: per-model rates (contestant order, baseline left out) and its settings."""

    baseline: str
    rates: list[LengthControlled]
    # The standard deviation of the length difference over all the battles with the
    # baseline (characters; each model's own s_m is in its rate).
    length_sd: float
    bootstrap: int
    difficulty: DifficultyTable | None  # None: every difficulty 0
    prior_mean: float  # the length slope's prior
    prior_sd: float


class DifficultyTableError(ValueError):
    """An unusable difficulty table file: names the file, the field and the problem."""

    def __init__(self, file: str | Path, field: str, problem: str) -> None:
        self.file, self.field, self.problem = str(file), field, problem
        where = f"{file}: {field}: " if field else f"{file}: "
        super().__init__(where + problem)


@dataclass(frozen=True)
class _Battles:
    """The battles with the baseline, one row each, from the other model's side."""

    model: IntArray
    question: IntArray
    share: FloatArray  # the model's share of the win
    weight: FloatArray
    delta: FloatArray  # its answer's length minus the baseline's


def _battles(rs: ReviewSet, base: int) -> _Battles:
    if rs.style_a is None or rs.style_b is None or "length" not in rs.style_names:
        raise ValueError(
            "--length-control needs the answers' lengths (answer texts or length_a / "
            "length_b columns); these reviews carry none"
        )
    k = rs.style_names.index("length")
    a, b = rs.model_a.astype(np.int64), rs.model_b.astype(np.int64)
    first = a != base  # the model was shown first
    score = rs.score.astype(np.float64)
    p_a = (1.0 - score) / 2.0 if rs.p_a is None else rs.p_a
    weight = np.ones(rs.n_battles) if rs.weight is None else rs.weight
    delta = np.where(
        first, rs.style_a[:, k] - rs.style_b[:, k], rs.style_b[:, k] - rs.style_a[:, k]
    )
    keep = ((a == base) | (b == base)) & (a != b) & np.isfinite(delta) & (weight > 0)
    if not keep.any():
        raise ValueError(
            "--length-control needs battles against the baseline with both answers' "
            "lengths known; there are none"
        )
    return _Battles(
        model=np.where(first, a, b)[keep],
        question=rs.question.astype(np.int64)[keep],
        share=np.where(first, p_a, 1.0 - p_a)[keep].astype(np.float64),
        weight=weight[keep].astype(np.float64),
        delta=delta[keep].astype(np.float64),
    )


def _scaled(delta: FloatArray) -> tuple[FloatArray, float]:
    """tanh(delta / s) and s, the standard deviation of delta (0: no variation, all 0)."""
    sd = float(np.std(delta, ddof=1)) if delta.size > 1 else 0.0
    if sd > 0 and math.isfinite(sd):
        return np.tanh(delta / sd), sd
    return np.zeros_like(delta), sd


def _sigmoid(z: FloatArray) -> FloatArray:
    out: FloatArray = np.exp(-np.logaddexp(0.0, -z))
    return out


def _newton(
    x: FloatArray,
    offset: FloatArray,
    share: FloatArray,
    weight: FloatArray,
    prior: tuple[float, float],
    start: FloatArray | None = None,
) -> FloatArray:
    """(theta, phi) maximising the penalised log-likelihood of
    logit P = theta + phi * x + offset, for each row of `weight` (rounds, n), all
    rounds at once (the problem is concave)."""
    rounds = weight.shape[0]
    mean = np.array([0.0, prior[0]])
    precision = np.array([1.0 / THETA_PRIOR_SD**2, 1.0 / prior[1] ** 2])
    coef = np.tile(mean if start is None else start, (rounds, 1))
    for _ in range(100):
        p = _sigmoid(coef[:, :1] + coef[:, 1:] * x[None, :] + offset[None, :])
        r = weight * (share[None, :] - p)
        v = weight * p * (1.0 - p)
        grad = np.stack([r.sum(axis=1), (r * x).sum(axis=1)], axis=1) - precision * (coef - mean)
        h00 = v.sum(axis=1) + precision[0]
        h01 = (v * x).sum(axis=1)
        h11 = (v * x * x).sum(axis=1) + precision[1]
        det = h00 * h11 - h01 * h01
        step = np.stack(
            [
                (h11 * grad[:, 0] - h01 * grad[:, 1]) / det,
                (h00 * grad[:, 1] - h01 * grad[:, 0]) / det,
            ],
            axis=1,
        )
        step = np.clip(step, -5.0, 5.0)  # far from the optimum (a model that won everything)
        coef = coef + step
        if float(np.abs(step).max()) < 1e-10:
            break
    return coef


def reference_difficulty(
    rs: ReviewSet, baseline: str, models: list[str] | None = None
) -> DifficultyTable:
    """The difficulty table of a reference set: `models` (default: every contestant
    with battles against `baseline`), fitted jointly (module docstring)."""
    from scipy.optimize import minimize  # only when a table is built

    if baseline not in rs.contestants:
        raise ValueError(f"baseline model {baseline!r} is not a contestant")
    base = rs.contestants.index(baseline)
    battles = _battles(rs, base)
    names = [m for m in (models if models is not None else rs.contestants) if m != baseline]
    unknown = [m for m in names if m not in rs.contestants]
    if unknown:
        raise ValueError(f"reference models not among the contestants: {', '.join(unknown)}")
    codes = [rs.contestants.index(m) for m in names]
    codes = [c for c in codes if bool((battles.model == c).any())]
    if not codes:
        raise ValueError("the reference set has no battles against the baseline")
    keep = np.isin(battles.model, codes)
    model = np.searchsorted(np.array(sorted(codes)), battles.model[keep])
    x = np.empty(int(keep.sum()))
    for m in range(len(codes)):  # each model's own s_m, as in its per-model fit
        rows = model == m
        x[rows] = _scaled(battles.delta[keep][rows])[0]
    played, question = np.unique(battles.question[keep], return_inverse=True)
    question = question.ravel()
    y, w = battles.share[keep], battles.weight[keep]
    n_m, n_q = len(codes), played.size
    precision = np.concatenate(
        [np.full(n_m + 1, 1.0 / REFERENCE_PRIOR_SD**2), np.full(n_q, 1.0 / DIFFICULTY_PRIOR_SD**2)]
    )

    def objective(c: FloatArray) -> tuple[float, FloatArray]:
        z = c[model] + c[n_m] * x - c[n_m + 1 + question]
        # -log-likelihood of a fractional outcome y: w * (log(1 + e^z) - y z)
        loss = float(np.sum(w * (np.logaddexp(0.0, z) - y * z)))
        r = w * (_sigmoid(z) - y)
        grad = np.concatenate(
            [
                np.bincount(model, weights=r, minlength=n_m),
                [float(np.sum(r * x))],
                -np.bincount(question, weights=r, minlength=n_q),
            ]
        )
        return loss + 0.5 * float(np.sum(precision * c * c)), grad + precision * c

    fit = minimize(
        objective,
        np.zeros(n_m + 1 + n_q),
        jac=True,
        method="L-BFGS-B",
        options={"maxiter": 5000, "gtol": 1e-9},
    )
    coef = np.asarray(fit.x, dtype=np.float64)
    ordered = sorted(codes)
    return DifficultyTable(
        baseline=baseline,
        questions=tuple(rs.questions[q] for q in played),
        difficulty=coef[n_m + 1 :].copy(),
        length_coef=float(coef[n_m]),
        reference_models=tuple(rs.contestants[c] for c in ordered),
        battles=int(keep.sum()),
    )


def save_difficulty_table(table: DifficultyTable, path: str | Path) -> DifficultyTable:
    """Write the table as CSV (`# key: JSON value` header lines, then question_id,
    difficulty); returns it with `file` set."""
    path = Path(path)
    meta = {
        "baseline": table.baseline,
        "reference_models": list(table.reference_models),
        "length_coef": table.length_coef,
        "battles": table.battles,
    }
    with path.open("w", newline="", encoding="utf-8") as handle:
        handle.write(f"# {_TABLE_HEADER}\n")
        for key in _TABLE_KEYS:
            handle.write(f"# {key}: {json.dumps(meta[key])}\n")
        writer = csv.writer(handle)
        writer.writerow(["question_id", "difficulty"])
        for q, d in zip(table.questions, table.difficulty, strict=True):
            writer.writerow([q, repr(float(d))])
    return dataclasses.replace(table, file=str(path))


def load_difficulty_table(path: str | Path) -> DifficultyTable:
    """Read a table `save_difficulty_table` wrote. Raises DifficultyTableError
    naming the file, the field and the problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DifficultyTableError(path, "", f"cannot read the difficulty table ({exc})") from None
    lines = text.splitlines()
    meta: dict[str, object] = {}
    body = 0
    while body < len(lines) and lines[body].startswith("#"):
        key, sep, value = lines[body][1:].strip().partition(":")
        if sep and key.strip() in _TABLE_KEYS:
            try:
                meta[key.strip()] = json.loads(value)
            except json.JSONDecodeError:
                raise DifficultyTableError(path, key.strip(), "not a JSON value") from None
        body += 1
    for key in _TABLE_KEYS:
        if key not in meta:
            raise DifficultyTableError(
                path, key, "missing (a `# key: value` header line of a difficulty table)"
            )
    baseline, reference = meta["baseline"], meta["reference_models"]
    coef, battles = meta["length_coef"], meta["battles"]
    if not isinstance(baseline, str) or not baseline:
        raise DifficultyTableError(path, "baseline", "must be a model name")
    if not isinstance(reference, list) or not all(isinstance(m, str) for m in reference):
        raise DifficultyTableError(path, "reference_models", "must be a list of model names")
    if isinstance(coef, bool) or not isinstance(coef, int | float) or not math.isfinite(coef):
        raise DifficultyTableError(path, "length_coef", "must be a finite number")
    if isinstance(battles, bool) or not isinstance(battles, int) or battles < 0:
        raise DifficultyTableError(path, "battles", "must be a non-negative integer")
    rows = list(csv.reader(lines[body:]))
    if not rows or [c.strip() for c in rows[0]] != ["question_id", "difficulty"]:
        raise DifficultyTableError(
            path, "question_id", "the columns must be question_id,difficulty"
        )
    questions: list[str] = []
    values: list[float] = []
    for number, row in enumerate(rows[1:], start=body + 2):
        if not row:
            continue
        if len(row) != 2:
            raise DifficultyTableError(path, f"line {number}", "needs question_id,difficulty")
        try:
            level = float(row[1])
        except ValueError:
            level = float("nan")
        if not math.isfinite(level):
            raise DifficultyTableError(
                path, "difficulty", f"line {number}: {row[1]!r} is not a finite number"
            )
        questions.append(row[0])
        values.append(level)
    if not questions:
        raise DifficultyTableError(path, "question_id", "the table has no questions")
    if len(set(questions)) != len(questions):
        raise DifficultyTableError(path, "question_id", "a question appears twice")
    return DifficultyTable(
        baseline=baseline,
        questions=tuple(questions),
        difficulty=np.array(values, dtype=np.float64),
        length_coef=float(coef),
        reference_models=tuple(reference),
        battles=battles,
        file=str(path),
    )


def _difficulties(rs: ReviewSet, table: DifficultyTable, played: IntArray) -> FloatArray:
    """d_q for every question code of `rs` (0 for those no battle uses)."""
    index = {q: i for i, q in enumerate(table.questions)}
    out = np.zeros(rs.n_questions)
    missing = [rs.questions[q] for q in played if rs.questions[q] not in index]
    if missing:
        where = table.file or "the difficulty table"
        raise DifficultyTableError(
            where,
            "question_id",
            f"{len(missing)} question(s) of the battles with the baseline are not in the "
            f"table (e.g. {missing[0]!r}): it was built on another question set",
        )
    for q in played:
        out[q] = table.difficulty[index[rs.questions[q]]]
    return out


def length_controlled_win_rates(
    rs: ReviewSet,
    baseline: str,
    *,
    bootstrap: int = 200,
    seed: int = 0,
    difficulty: DifficultyTable | None = None,
    length_prior: tuple[float, float] | None = None,
) -> LengthControl:
    """Each contestant's length-controlled win rate against `baseline` (module docstring).

    `difficulty`: the fixed question difficulties and reference slope (None:
    difficulties 0 and the default slope prior). `length_prior`: (mean, sd) of the
    slope's prior instead of the table's or the default (for choosing the
    constants out of sample: benchmarks/bench_lc.py). Raises ValueError when
    `baseline` is not a contestant, the reviews carry no answer lengths, or the
    table is for another baseline or lacks questions played.
    """
    if baseline not in rs.contestants:
        raise ValueError(f"baseline model {baseline!r} is not a contestant")
    if difficulty is not None and difficulty.baseline != baseline:
        raise DifficultyTableError(
            difficulty.file or "the difficulty table",
            "baseline",
            f"the table was built against {difficulty.baseline!r}, not {baseline!r}",
        )
    base = rs.contestants.index(baseline)
    battles = _battles(rs, base)
    overall = _scaled(battles.delta)[1]
    if difficulty is None:
        prior = (DEFAULT_PRIOR_MEAN, DEFAULT_PRIOR_SD)
        d = np.zeros(rs.n_questions)
    else:
        prior = (difficulty.length_coef, TABLE_PRIOR_SD)
        d = _difficulties(rs, difficulty, np.unique(battles.question))
    if length_prior is not None:
        prior = length_prior
    draws = (
        bootstrap_counts(rs.n_questions, bootstrap, seed)
        if bootstrap > 0 and rs.n_questions >= 2
        else None
    )
    out: list[LengthControlled] = []
    for i, name in enumerate(rs.contestants):
        if i == base:
            continue
        rows = battles.model == i
        n = int(rows.sum())
        if n == 0:
            nan = float("nan")
            out.append(LengthControlled(name, nan, nan, nan, nan, 0, nan))
            continue
        x, sd = _scaled(battles.delta[rows])
        question = battles.question[rows]
        offset = -d[question]
        share, weight = battles.share[rows], battles.weight[rows]
        coef = _newton(x, offset, share, weight[None, :], prior)[0]
        played = np.unique(question)
        rate = float(np.mean(_sigmoid(coef[0] - d[played])))
        low = high = float("nan")
        if draws is not None:
            refits = _newton(x, offset, share, weight[None, :] * draws[:, question], prior, coef)
            counts = draws[:, played]
            p = _sigmoid(refits[:, :1] - d[played][None, :])
            with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # a round without its questions
                rates = (counts * p).sum(axis=1) / counts.sum(axis=1)
                low, high = (float(v) for v in np.nanpercentile(rates, [2.5, 97.5]))
        out.append(LengthControlled(name, rate, low, high, float(coef[1]), n, sd))
    return LengthControl(
        baseline=baseline,
        rates=out,
        length_sd=overall,
        bootstrap=bootstrap,
        difficulty=difficulty,
        prior_mean=prior[0],
        prior_sd=prior[1],
    )
