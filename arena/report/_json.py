"""The leaderboard as the documented JSON object (`arena leaderboard --format json`)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from arena.rank import Agreement, AgreementScore, LengthControl, Ranking, RankTable
from arena.report._board import RANKINGS, FloatArray, Leaderboard

__all__ = ["by_model", "leaderboard_dict", "number"]


def by_model(board: Leaderboard) -> tuple[list[str], dict[str, dict[str, float | None]]]:
    """Models best first, and each model's score in every ranking."""
    names = board.contestants
    scores = {name: board.scores(name) for name in RANKINGS}
    return [names[i] for i in board.order], {
        names[i]: {k: number(v[i]) for k, v in scores.items()} for i in range(len(names))
    }


def number(value: float | int | np.floating[Any] | np.integer[Any]) -> float | None:
    as_float = float(value)
    return None if math.isnan(as_float) or math.isinf(as_float) else as_float


def _ranknumber(value: int) -> int | None:
    return int(value) if value > 0 else None


def _model_row(board: Leaderboard, i: int, columns: dict[str, FloatArray]) -> dict[str, Any]:
    r = board.ranking
    ranks = r.default_ranks
    row: dict[str, Any] = {"model": board.contestants[i]}
    row["rank"] = _ranknumber(ranks.rank[i])
    row["rank_low"] = _ranknumber(ranks.rank_low[i])
    row["rank_high"] = _ranknumber(ranks.rank_high[i])
    row["group"] = _ranknumber(ranks.group[i] + 1)
    if ranks is not r.ranks:  # style-controlled ranks: the raw Bradley-Terry ones beside
        row["bt_rank"] = _ranknumber(r.ranks.rank[i])
        row["bt_rank_low"] = _ranknumber(r.ranks.rank_low[i])
        row["bt_rank_high"] = _ranknumber(r.ranks.rank_high[i])
    for name in RANKINGS:
        row[name] = number(columns[name][i])
    order_error = None if r.elo is None or r.elo.order_error is None else r.elo.order_error
    row["elo_order_error"] = (
        None if order_error is None or math.isnan(columns["elo"][i]) else number(order_error[i])
    )
    row["bt_ci_low"] = number(r.bt.ci_low[i])
    row["bt_ci_high"] = number(r.bt.ci_high[i])
    for name, ci in (
        ("win_rate", r.win_rate_ci),
        ("weighted_win_rate", r.weighted_win_rate_ci),
        ("elo", r.elo_ci),
    ):
        row[f"{name}_ci_low"] = number(ci[0, i])
        row[f"{name}_ci_high"] = number(ci[1, i])
    if r.style is not None and r.style_ranks is not None:
        row["bt_style"] = number(r.style.rating[i])
        row["bt_style_ci_low"] = number(r.style.ci_low[i])
        row["bt_style_ci_high"] = number(r.style.ci_high[i])
        row["style_rank"] = _ranknumber(r.style_ranks.rank[i])
    row["wins"] = int(r.counts.wins[i])
    row["ties"] = int(r.counts.ties[i])
    row["losses"] = int(r.counts.losses[i])
    row["battles"] = int(r.counts.battles[i])
    row["questions"] = int(r.questions[i])
    row["few_data"] = bool(r.thin[i])
    return row


def _neighbours(board: Leaderboard, ranks: RankTable) -> list[dict[str, Any]]:
    names = board.contestants
    return [
        {
            "upper": names[n.upper],
            "lower": names[n.lower],
            "share": number(n.share),
            "separated": n.separated,
        }
        for n in ranks.neighbours
    ]


def _style_moves(board: Leaderboard) -> dict[str, dict[str, int | None]]:
    """Per model, the raw minus controlled rank split into the weight refit and the style terms."""
    r = board.ranking
    assert r.style_ranks is not None
    refit = r.style_weight_ranks
    out: dict[str, dict[str, int | None]] = {}
    for i in board.order:
        raw, ctl = int(r.ranks.rank[i]), int(r.style_ranks.rank[i])
        mid = raw if refit is None else int(refit.rank[i])
        known = raw > 0 and ctl > 0 and mid > 0
        out[board.contestants[i]] = {
            "weights": raw - mid if known else None,
            "style": mid - ctl if known else None,
        }
    return out


def _style_dict(board: Leaderboard) -> dict[str, Any]:
    r = board.ranking
    style = r.style
    if style is None or r.style_ranks is None:
        return {"available": False, "reason": r.style_note}
    return {
        "available": True,
        "features": list(style.features),
        "dropped": list(style.dropped),
        "coefficients": {
            name: {
                "coef": number(style.coef[k]),
                "ci_low": number(style.coef_low[k]),
                "ci_high": number(style.coef_high[k]),
                "scale": number(style.scale[k]),
            }
            for k, name in enumerate(style.features)
        },
        "reviewer_weights": {
            name: float(w) for name, w in zip(r.reviews.reviewers, style.weights, strict=True)
        },
        "converged": style.converged,
        "iterations": style.iterations,
        "damping": style.damping,
        "bootstrap_rounds": style.bootstrap_rounds,
        "neighbours": _neighbours(board, r.style_ranks),
        "moved": _style_moves(board),
    }


def leaderboard_dict(board: Leaderboard) -> dict[str, Any]:
    """The leaderboard as the documented JSON object (NaN and infinities become null)."""
    r = board.ranking
    names = board.contestants
    rs = r.reviews
    columns = {name: board.scores(name) for name in RANKINGS}
    models = [_model_row(board, i, columns) for i in board.order]
    pairwise = {
        names[i]: {names[j]: number(r.pairwise[i, j]) for j in board.order if j != i}
        for i in board.order
    }
    pair_battles = {
        names[i]: {names[j]: int(r.pair_battles[i, j]) for j in board.order if j != i}
        for i in board.order
    }
    bias = r.length_bias
    out: dict[str, Any] = {
        "models": models,
        "reviewer_weights": {
            name: float(w) for name, w in zip(rs.reviewers, r.peerrank.weights, strict=True)
        },
        "weighting": r.weighting,
        "bt_intervals": r.intervals or None,
        "iterations": r.peerrank.iterations,
        "peerrank": {
            "converged": r.peerrank.converged,
            "iterations": r.peerrank.iterations,
            "damping": r.peerrank.damping,
        },
        "neighbours": _neighbours(board, r.default_ranks),
        "style_control": _style_dict(board),
        "diagnostics": {
            "reviewers": [
                {
                    "reviewer": d.reviewer,
                    "position_a_share": number(d.position_a_share),
                    "swap_consistency": number(d.swap_consistency),
                    "self_preference": number(d.self_preference),
                    "tie_rate": number(d.tie_rate),
                    "invalid_rate": number(d.invalid_rate),
                    "length_bias": None if bias is None else number(bias[k]),
                    "battles": d.battles,
                }
                for k, d in enumerate(r.diagnostics)
            ],
            "pairwise": pairwise,
            "pair_battles": pair_battles,
            "fleiss_kappa": number(r.fleiss_kappa),
        },
        "counts": {
            "reviews": rs.n_rows,
            "invalid": rs.n_invalid,
            "failed": rs.n_failed,
            "questions": rs.n_questions,
            "self_excluded": rs.n_self_excluded,
        },
    }
    if r.default_ranks is not r.ranks:
        # Only then, so a leaderboard without a style effect reads as it always did.
        out["rank_by"] = r.order_by
        out["bt_neighbours"] = _neighbours(board, r.ranks)
    if r.reliability is not None:
        out["reliability"] = _reliability_dict(r)
    if board.true_order is not None and board.kendall_tau is not None:
        out["true_order"] = board.true_order
        out["kendall_tau"] = {k: number(v) for k, v in board.kendall_tau.items()}
    if board.agreement is not None:
        out["agreement"] = _agreement_dict(board.agreement)
    if board.vs_baseline is not None:
        out["baseline"] = board.baseline
        out["vs_baseline"] = [
            {
                "model": rate.model,
                "win_rate": number(rate.win_rate),
                "discrete_win_rate": number(rate.discrete_win_rate),
                "ci_low": number(rate.ci_low),
                "ci_high": number(rate.ci_high),
                "n": rate.n,
                "avg_length": number(rate.avg_length),
            }
            for rate in board.vs_baseline
        ]
        if board.length_control is not None:
            out["length_control"] = _length_control_dict(board.length_control)
            controlled = {lc.model: lc for lc in board.length_control.rates}
            for entry in out["vs_baseline"]:
                lc = controlled[entry["model"]]
                entry["lc_win_rate"] = number(lc.lc_win_rate)
                entry["lc_ci_low"] = number(lc.lc_ci_low)
                entry["lc_ci_high"] = number(lc.lc_ci_high)
    if board.cost_usd is not None:
        out["cost_usd"] = board.cost_usd
    parts = [p for p in r.bt.components if len(p) > 1]
    if len(parts) > 1:
        out["bt_components"] = [[names[i] for i in p] for p in parts]
    if board.warnings:
        out["warnings"] = list(board.warnings)
    if board.discussion is not None:
        out["discussion"] = board.discussion
    if board.batcheval is not None:
        out["batcheval"] = board.batcheval
    if board.by_category is not None:
        out["by_category"] = {c.category: c.to_json() for c in board.by_category}
    if board.sampling is not None:
        out["sampling"] = board.sampling
    if board.partial is not None:
        out["partial"] = board.partial
    out.update(board.stage_blocks)  # stages declared in packages of their own
    return out


def _reliability_dict(r: Ranking) -> dict[str, Any]:
    """The reliability model behind `--weights reliability` (docs/ranking.md)."""
    fit = r.reliability
    assert fit is not None
    return {
        "converged": fit.converged,
        "iterations": fit.iterations,
        "reviewers": [
            {
                "reviewer": name,
                "weight": number(fit.weights[k]),
                "discrimination": number(fit.discrimination[k]),
                "position_bias": number(fit.position_bias[k]),
                "self_preference": number(fit.self_preference[k]),
                "accuracy": number(fit.accuracy[k]),
                "battles": int(round(float(fit.battles[k]))),
            }
            for k, name in enumerate(fit.reviewers)
        ],
    }


def _score_dict(score: AgreementScore) -> dict[str, Any]:
    return {
        "n": score.n,
        "accuracy": number(score.accuracy),
        "accuracy_ci_low": number(score.accuracy_low),
        "accuracy_ci_high": number(score.accuracy_high),
        "kappa": number(score.kappa),
    }


def _agreement_dict(agreement: Agreement) -> dict[str, Any]:
    return {
        "battles": agreement.battles,
        "reviewers": [
            {"reviewer": name, **_score_dict(score)} for name, score in agreement.reviewers.items()
        ],
        "weighted_majority": _score_dict(agreement.weighted_majority),
        "conventions": {
            "human_merge": agreement.human_merge,
            "majority": agreement.majority,
            "kappa_categories": agreement.kappa_categories,
        },
        "human_win_rate": {k: number(v) for k, v in agreement.human_win_rate.items()},
        "rankings": {
            name: {"kendall_tau": number(c.kendall_tau), "spearman": number(c.spearman)}
            for name, c in agreement.rankings.items()
        },
    }


def _length_control_dict(lc: LengthControl) -> dict[str, Any]:
    """The JSON `length_control`: the fit's settings and length coefficients."""
    table = lc.difficulty
    return {
        "fit": "per-model",
        "difficulty": {"source": "none"}
        if table is None
        else {
            "source": "table",
            "file": table.file,
            "baseline": table.baseline,
            "reference_models": list(table.reference_models),
            "questions": len(table.questions),
            "reference_length_coef": number(table.length_coef),
        },
        "length_prior": {"mean": number(lc.prior_mean), "sd": number(lc.prior_sd)},
        "length_sd": number(lc.length_sd),
        "interval": "question bootstrap",
        "bootstrap": lc.bootstrap,
        "length_coef": {rate.model: number(rate.length_coef) for rate in lc.rates},
    }
