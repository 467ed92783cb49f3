"""The leaderboard: every ranking, its diagnostics and context, as one object and as JSON."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from arena.batcheval import HumanScores, batcheval_summary, run_human_scores
from arena.config import ConfigError
from arena.discuss import (
    DiscussionReport,
    apply_discussions,
    discussion_block,
    discussion_report,
    discussion_stats,
    read_discussions,
    read_state,
)
from arena.rank import (
    MIN_BATTLES,
    MIN_QUESTIONS,
    STYLE_FEATURES,
    Agreement,
    AgreementScore,
    BaselineRate,
    LengthControl,
    Ranking,
    RankOptions,
    RankTable,
    answer_style,
    baseline_win_rates,
    encode_reviews,
    human_agreement,
    length_controlled_win_rates,
    rank_correlation,
    rank_reviews,
)
from arena.report._categories import (
    NO_CATEGORY,
    CategoryRanking,
    category_column,
    rank_categories,
    run_categories,
)
from arena.report._inputs import (
    LeaderboardInputError,
    MissingShards,
    load_reviews_file,
    load_run,
    load_runs,
)
from arena.sampling import SAMPLING_TABLE
from arena.store import RunLog

__all__ = [
    "RANKINGS",
    "STYLE_RANKING",
    "Leaderboard",
    "LeaderboardOptions",
    "build_leaderboard",
    "leaderboard_dict",
    "rank_frame",
    "with_answer_style",
]

FloatArray = NDArray[np.float64]

# The rankings every leaderboard reports, by JSON name.
RANKINGS = ("win_rate", "weighted_win_rate", "elo", "bt")


@dataclass(frozen=True)
class LeaderboardOptions:
    """How to rank: the CLI's options (defaults as documented).

    `weights`: "peerrank" or "equal" reviewer weights; `exclude_self`: leave
    out the reviews of a reviewer's own battles (`--no-self`).
    """

    anchor: str | None = None
    elo_orders: int = 100
    bootstrap: int = 200
    seed: int = 0
    weights: str = "reliability"
    exclude_self: bool = False
    # Opponent-balanced win rates (rank.RankOptions.balanced); None: on for a
    # run directory whose reviews come from a sampled design.
    balanced: bool | None = None
    # Report each model's win rate against this model (`vs_baseline`).
    baseline: str | None = None
    # Bradley-Terry intervals: "sandwich" (cluster-robust by question) or "bootstrap".
    intervals: str = "sandwich"
    # Bootstrap rounds for an Elo interval (0: none; see rank.RankOptions).
    elo_bootstrap: int = 0
    # Human-agreement conventions (rank.HUMAN_MERGES, MAJORITIES, KAPPA_CATEGORIES;
    # rank.AGREEMENT_CONVENTIONS["prd"] are the PRD paper's).
    human_merge: str = "plurality"
    majority: str = "plurality"
    kappa_categories: str = "model"
    # With `baseline`: each model's length-controlled win rate against it
    # (rank.length_controlled_win_rates; the JSON `lc_*` fields of `vs_baseline`).
    length_control: bool = False


@dataclass(eq=False)
class Leaderboard:
    """A ranked review set with everything the renderers show."""

    source: str
    ranking: Ranking
    order: list[int]  # contestant indices: by group, then Bradley-Terry rank; unranked last
    anchor: str | None = None
    true_order: list[str] | None = None
    kendall_tau: dict[str, float] | None = None
    agreement: Agreement | None = None
    cost_usd: float | None = None
    warnings: list[str] = field(default_factory=list)
    discussion: dict[str, Any] | None = None  # docs/discussion.md (the JSON `discussion`)
    batcheval: dict[str, Any] | None = None  # docs/batcheval.md (the JSON `batcheval`)
    by_category: list[CategoryRanking] | None = None  # --by category (the JSON `by_category`)
    sampling: dict[str, Any] | None = None  # docs/sampling.md (the JSON `sampling`)
    vs_baseline: list[BaselineRate] | None = None  # --baseline MODEL (the JSON `vs_baseline`)
    baseline: str | None = None
    # Shards missing from a split run (--allow-missing-shards): the JSON `partial`.
    partial: dict[str, Any] | None = None
    # --length-control: the length-controlled win rates against the baseline.
    length_control: LengthControl | None = None

    @property
    def contestants(self) -> tuple[str, ...]:
        """Contestant names in code order."""
        return self.ranking.reviews.contestants

    def scores(self, name: str) -> FloatArray:
        """One score per contestant (code order) for a ranking in RANKINGS."""
        r = self.ranking
        if name == "win_rate":
            return r.peerrank.win_rate
        if name == "weighted_win_rate":
            return r.peerrank.weighted_win_rate
        if name == "elo":
            if r.elo is None:
                return np.full(len(self.contestants), np.nan)
            return np.where(r.counts.battles > 0, r.elo.rating, np.nan)
        if name == "bt":
            return r.bt.rating
        raise KeyError(name)


def _names(names: Sequence[str], indices: Sequence[int] | NDArray[np.int64]) -> str:
    return ", ".join(names[int(i)] for i in indices)


def _peerrank_warning(ranking: Ranking) -> str | None:
    pr = ranking.peerrank
    if pr.converged and pr.damping == 0:
        return None
    if pr.converged:
        return (
            "PeerRank weights did not settle under the plain iteration (it cycled), so it was "
            f"restarted with damping; they settled after {pr.iterations} iterations in all "
            f"(damping {pr.damping:.3g}, remaining |f(w) - w| {pr.residual:.2g})"
        )
    return (
        f"PeerRank weights did not settle within {pr.iterations} iterations, even with "
        f"damping {pr.damping:.3g} (last change {pr.residual:.2g}): the weights shown are "
        "where the iteration stopped"
    )


def _interval_warnings(ranking: Ranking, bootstrap: int) -> list[str]:
    names = ranking.reviews.contestants
    rs = ranking.reviews
    out: list[str] = []
    if bootstrap > 0 and rs.n_questions < 2 and rs.n_battles:
        out.append(
            "all battles come from one question: the bootstrap over questions cannot "
            "estimate any uncertainty, so no intervals are shown"
        )
    battled = ranking.counts.battles > 0
    thin = np.flatnonzero(ranking.thin & battled)
    if thin.size and ranking.intervals:
        out.append(
            f"the intervals of {_names(names, thin)} rest on fewer than {MIN_QUESTIONS} "
            f"questions or {MIN_BATTLES} battles (marked *): treat them as rough"
        )
    top = np.flatnonzero(np.isposinf(ranking.bt.ci_high))
    if top.size:
        out.append(
            f"{_names(names, top)} lost no battle: the virtual ties keep the rating finite, "
            "but the data set no upper bound on it (interval open above)"
        )
    bottom = np.flatnonzero(np.isneginf(ranking.bt.ci_low))
    if bottom.size:
        out.append(
            f"{_names(names, bottom)} won no battle: the data set no lower bound on its "
            "rating (interval open below)"
        )
    return out


def _warnings(ranking: Ranking, bootstrap: int = 0) -> list[str]:
    names = ranking.reviews.contestants
    out: list[str] = []
    idle = [names[i] for i in np.flatnonzero(ranking.counts.battles == 0).tolist()]
    if idle:
        out.append(f"no counted battles for: {', '.join(idle)}")
    parts = [p for p in ranking.bt.components if len(p) > 1]
    if len(parts) > 1:
        groups = " | ".join("{" + ", ".join(names[i] for i in p) + "}" for p in parts)
        out.append(
            "the comparison graph is disconnected: models in different groups were never "
            f"compared, so Bradley-Terry was fitted per group ({groups}); "
            "ratings are comparable only within a group"
        )
    for index in ranking.bt.regularised:
        members = ", ".join(names[i] for i in ranking.bt.components[index])
        out.append(
            f"some model in {{{members}}} wins or loses every comparison: the Bradley-Terry "
            "MLE does not exist there, so one virtual tie per compared pair was added"
        )
    note = _peerrank_warning(ranking)
    if note is not None:
        out.append(note)
    style = ranking.style
    if style is not None and not style.converged:
        out.append(
            f"style-control weights did not settle within {style.iterations} iterations "
            f"(damping {style.damping:.3g})"
        )
    out += _interval_warnings(ranking, bootstrap)
    return out


def _cost(frames: Sequence[pl.DataFrame | None]) -> float | None:
    total, seen = 0.0, False
    for frame in frames:
        if frame is None or "cost_usd" not in frame.columns:
            continue
        column = frame["cost_usd"].cast(pl.Float64, strict=False).drop_nulls()
        if column.len():
            seen = True
            total += float(column.sum())
    return total if seen else None


def rank_frame(
    reviews: pl.DataFrame,
    *,
    source: str,
    options: LeaderboardOptions | None = None,
    contestants: Sequence[str] | None = None,
    reviewers: Sequence[str] | None = None,
    sim_skill: Mapping[str, float] | None = None,
    human: pl.DataFrame | None = None,
    cost_usd: float | None = None,
    answers: pl.DataFrame | None = None,
) -> Leaderboard:
    """Rank a reviews frame (log columns) and assemble its leaderboard.

    `answers` (the log's answers table) gives the answers' style for style
    control through the reviews' `answer_a_id` / `answer_b_id`. Raises
    ValueError for data the ranking cannot use and for an `anchor` that is not
    a contestant.
    """
    opts = options or LeaderboardOptions()
    if "id" in reviews.columns:
        # Canonical order before the seeded Elo shuffles and bootstrap draws: the
        # log holds rows in completion order, which differs between a resumed
        # and an uninterrupted run of the same tournament.
        reviews = reviews.sort("id", nulls_last=True, maintain_order=True)
    if answers is not None:
        reviews = with_answer_style(reviews, answers)
    rs = encode_reviews(
        reviews, contestants=contestants, reviewers=reviewers, exclude_self=opts.exclude_self
    )
    if opts.anchor is not None and opts.anchor not in rs.contestants:
        known = ", ".join(rs.contestants) or "none"
        raise ValueError(f"--anchor {opts.anchor!r} is not a contestant (contestants: {known})")
    if opts.baseline is not None and opts.baseline not in rs.contestants:
        known = ", ".join(rs.contestants) or "none"
        raise ValueError(f"--baseline {opts.baseline!r} is not a contestant (contestants: {known})")
    if opts.length_control and opts.baseline is None:
        raise ValueError("--length-control needs --baseline MODEL")
    ranking = rank_reviews(
        rs,
        RankOptions(
            elo_orders=opts.elo_orders,
            bootstrap=opts.bootstrap,
            seed=opts.seed,
            anchor=opts.anchor,
            elo=opts.elo_orders > 0,
            weights=opts.weights,
            balanced=bool(opts.balanced),
            intervals=opts.intervals,
            elo_bootstrap=opts.elo_bootstrap,
        ),
    )
    board = Leaderboard(
        source, ranking, list(ranking.ranks.order), anchor=opts.anchor, cost_usd=cost_usd
    )
    board.warnings = _warnings(ranking, opts.bootstrap)
    if opts.baseline is not None:
        board.baseline = opts.baseline
        rates = baseline_win_rates(rs, opts.baseline, bootstrap=opts.bootstrap, seed=opts.seed)
        order = {name: k for k, name in enumerate(rs.contestants[i] for i in board.order)}
        board.vs_baseline = sorted(rates, key=lambda rate: order[rate.model])
        if opts.length_control:
            board.length_control = length_controlled_win_rates(
                rs, opts.baseline, bootstrap=opts.bootstrap, seed=opts.seed
            )
    if sim_skill and all(name in sim_skill for name in rs.contestants):
        skills = np.array([sim_skill[name] for name in rs.contestants], dtype=np.float64)
        board.true_order = [rs.contestants[i] for i in np.argsort(-skills, kind="stable")]
        board.kendall_tau = {
            name: rank_correlation(board.scores(name), skills).kendall_tau for name in RANKINGS
        }
        if ranking.style is not None:
            board.kendall_tau[STYLE_RANKING] = rank_correlation(
                ranking.style.rating, skills
            ).kendall_tau
    if human is not None:
        labels = encode_reviews(human, contestants=rs.contestants)
        board.agreement = human_agreement(
            rs,
            labels,
            ranking.peerrank.weights,
            {name: board.scores(name) for name in RANKINGS},
            bootstrap=opts.bootstrap,
            seed=opts.seed,
            human_merge=opts.human_merge,
            majority=opts.majority,
            kappa_categories=opts.kappa_categories,
        )
    return board


def _merged_discussions(
    directories: Sequence[Path], reviews: pl.DataFrame
) -> DiscussionReport | None:
    """The discussions of several shard directories, applied to their merged reviews."""
    if len(directories) == 1:
        return discussion_report(directories[0], reviews)
    states = {d: read_state(d) for d in directories}
    present = {d: s for d, s in states.items() if s is not None}
    if not present:
        return None
    first_dir, state = next(iter(present.items()))
    for directory, other in present.items():
        if other != state:
            raise LeaderboardInputError(
                directory, "", f"discussion settings differ from those of {first_dir}"
            )
    tables = [t for t in (read_discussions(d) for d in directories) if t is not None]
    table = pl.concat(tables, how="diagonal_relaxed")
    adjusted = apply_discussions(
        reviews,
        table,
        outcome="add" if state.outcome == "add" else "replace",
        weight=state.weight,
        context=state.context,
    )
    return DiscussionReport(state, discussion_stats(table, state.context), adjusted, table)


# The style-controlled Bradley-Terry rating, where Kendall tau lists it.
STYLE_RANKING = "bt_style"


def with_answer_style(reviews: pl.DataFrame, answers: pl.DataFrame) -> pl.DataFrame:
    """`reviews` plus the style columns (`length_a`, ..., `bold_b`) of the answers they judge.

    Answers are the log's answers table (`id`, `answer_turns`); an answer's
    text is its turns joined by blank lines. Reviews without answer ids, or
    whose answers are unknown, get nulls (style control then says so).
    """
    if not {"answer_a_id", "answer_b_id"} <= set(reviews.columns):
        return reviews
    if not {"id", "answer_turns"} <= set(answers.columns) or answers.height == 0:
        return reviews
    text = answers["answer_turns"].list.join("\n\n")
    style = answer_style(text).with_columns(answers["id"].cast(pl.String).alias("_answer"))
    style = style.unique("_answer", keep="last", maintain_order=True)
    out = reviews.drop([c for c in reviews.columns if _is_style_column(c)])
    for side in ("a", "b"):
        renamed = style.rename({name: f"{name}_{side}" for name in STYLE_FEATURES})
        out = out.join(
            renamed,
            left_on=pl.col(f"answer_{side}_id").cast(pl.String),
            right_on="_answer",
            how="left",
            maintain_order="left",
        )
        if "_answer" in out.columns:
            out = out.drop("_answer")
    return out


def _is_style_column(name: str) -> bool:
    return any(name in (f"{f}_a", f"{f}_b") for f in STYLE_FEATURES)


def build_leaderboard(
    path: str | Path | Sequence[str | Path] | None = None,
    *,
    reviews_file: str | Path | Sequence[str | Path] | None = None,
    human_file: str | Path | None = None,
    options: LeaderboardOptions | None = None,
    human_scores_file: str | Path | None = None,
    by: str | None = None,
    ratings_only: bool = False,
    reviews_format: str | None = None,
    strong_win_weight: float = 3.0,
    allow_missing_shards: bool = False,
) -> Leaderboard:
    """The leaderboard of a run directory or a reviews file (see `arena leaderboard`).

    `ratings_only` computes only what the models' ratings and counts need (the
    history snapshot of a run): no second ranking of the reviews as written
    when discussions replace verdicts, no style control, no cost, no
    discussion or BatchEval block.

    `path` is a run directory or a reviews file, or several run directories of
    one tournament (the shards of a split run, read as one: see `load_runs`);
    `reviews_file` supplies the reviews instead of the run's log (a run
    directory then still gives the contestants and sim skills; any reviewer
    counts). `by="category"` adds a ranking within each question category.
    `reviews_file` may be several files or folders (read as one set);
    `reviews_format` forces a judgments format and `strong_win_weight` weighs
    arena-hard's strong verdicts (see `load_reviews_file`).
    Raises LeaderboardInputError for bad input.
    Shard directories that are not the whole split are refused unless
    `allow_missing_shards`: the board is then marked partial (`partial`, and a
    warning). Raises LeaderboardInputError for bad input.
    """
    opts = options or LeaderboardOptions()
    if isinstance(reviews_file, str | Path):
        reviews_file = [reviews_file]
    elif reviews_file is not None:
        reviews_file = list(reviews_file) or None
    paths = [] if path is None else [Path(path)] if isinstance(path, str | Path) else list(path)
    for shard in paths if len(paths) > 1 else []:  # the shard directories of one tournament
        if not Path(shard).is_dir() or reviews_file is not None:
            raise LeaderboardInputError(
                shard, "", "several sources must all be run directories (and no --reviews)"
            )
    target = Path(paths[0]) if paths else None
    directories = [Path(p) for p in paths] if target is not None and target.is_dir() else []
    if target is None and reviews_file is None:
        raise LeaderboardInputError(
            "arena leaderboard", "", "give a run directory or a reviews file"
        )
    if target is not None and not target.exists():
        raise LeaderboardInputError(target, "", "no such run directory or reviews file")
    if target is not None and reviews_file is not None and not target.is_dir():
        raise LeaderboardInputError(target, "", "give the reviews file once (here or --reviews)")
    human = (
        None
        if human_file is None
        else load_reviews_file(human_file, strong_win_weight=strong_win_weight)
    )
    human_scores = _human_scores(target, paths, human_scores_file)
    contestants = reviewers = None
    skills: dict[str, float] = {}
    answers = scored = None
    partial: MissingShards | None = None
    if target is not None and target.is_dir():
        run = load_runs(
            directories,
            ranking_only=True,
            style=not ratings_only,
            allow_missing_shards=allow_missing_shards,
        )
        partial = run.missing_shards
        contestants, reviewers, skills, answers, scored = (
            run.contestants,
            run.reviewers,
            run.sim_skill,
            run.answers,
            run.batcheval,
        )
        reviews, source = run.reviews, ", ".join(str(d) for d in directories)
    if reviews_file is not None or (target is not None and not target.is_dir()):
        files = [Path(f) for f in reviews_file] if reviews_file is not None else [target]
        assert all(f is not None for f in files)
        reviews = load_reviews_file(
            [f for f in files if f is not None],
            format=reviews_format,
            strong_win_weight=strong_win_weight,
        )
        source = ", ".join(str(f) for f in files)
        if reviews_file is not None and target is not None:
            # Judgments from elsewhere: the run's contestants, whoever judged.
            source, reviewers = f"{source} (tournament {target})", None
    run_dir = reviews_file is None and target is not None and target.is_dir()
    design = None
    if target is not None and target.is_dir():
        design = sampling_block(target, reviews)
        if opts.balanced is None:
            opts = dataclasses.replace(opts, balanced=design is not None)
    # A run's discussions: rank with their agreed verdicts, and report both rankings.
    discussed = None
    if reviews_file is None and target is not None and target.is_dir():
        discussed = _merged_discussions(directories, reviews)
    extra = None if discussed is None else discussed.discussions
    try:
        board = rank_frame(
            reviews if discussed is None else discussed.reviews,
            source=source,
            options=opts,
            contestants=contestants,
            reviewers=reviewers if discussed is None else discussed.reviewers(reviewers),
            sim_skill=skills,
            human=human,
            # A run directory: every billed attempt in its log (retried failures
            # and superseded rows included); a file: the cost column it has. The
            # history snapshot (ratings_only) keeps no cost: it is not read.
            cost_usd=None
            if ratings_only
            else sum(RunLog(d).spent_usd() for d in directories)
            if run_dir and target is not None
            else _cost([reviews, answers, extra, scored]),
            answers=answers if reviews_file is None and not ratings_only else None,
        )
        if discussed is not None and not ratings_only:
            plain = rank_frame(
                reviews,
                source=source,
                options=opts,
                contestants=contestants,
                reviewers=reviewers,
                sim_skill=skills,
                answers=answers,
            )
            _judge_diagnostics_from(board, plain)
            tau = plain.kendall_tau
            board.discussion = discussion_block(
                discussed,
                *_by_model(board),
                *_by_model(plain),
                None if tau is None else {k: _number(v) for k, v in tau.items()},
            )
        if design is not None:
            design["balanced_win_rates"] = bool(opts.balanced)
            board.sampling = design
        if partial is not None:
            board.partial = partial.to_json()
            board.warnings.insert(0, partial.note())
        if ratings_only:
            return board
        if directories:  # one run directory, or the shards of one tournament together
            board.batcheval = _batcheval_block(board, directories, opts.seed, human_scores)
        if by == "category":
            ranked = reviews if discussed is None else discussed.reviews
            board.by_category = _by_category(
                ranked,
                target if run_dir else None,
                lambda part: leaderboard_dict(
                    rank_frame(
                        part,
                        source=source,
                        options=opts,
                        contestants=contestants,
                        reviewers=reviewers
                        if discussed is None
                        else discussed.reviewers(reviewers),
                        sim_skill=skills,
                    )
                ),
            )
        return board
    except ValueError as exc:
        raise LeaderboardInputError(source, "", str(exc)) from None


def _by_category(
    reviews: pl.DataFrame, run_dir: Path | None, rank: Callable[[pl.DataFrame], dict[str, Any]]
) -> list[CategoryRanking]:
    """Rankings within each category: the run's question categories, or a `category` column."""
    if run_dir is not None and run_dir.is_dir():
        try:
            categories = run_categories(run_dir, load_run(run_dir).tournament)
        except ConfigError as exc:
            raise LeaderboardInputError(exc.file, exc.key, exc.problem) from None
        column = category_column(reviews, categories)
    elif "category" in reviews.columns:
        column = reviews["category"].cast(pl.String).fill_null(NO_CATEGORY)
    else:
        raise LeaderboardInputError(
            "arena leaderboard", "--by category", "the reviews file has no `category` column"
        )
    return rank_categories(reviews, column, rank)


def _judge_diagnostics_from(board: Leaderboard, plain: Leaderboard) -> None:
    """Describe each judge by its own reviews, not by the discussion verdicts that replaced them.

    The ratings use the discussed reviews; position bias, swap consistency,
    self-preference, length bias and agreement are properties of the reviewers, so they
    come from the reviews as written (weights stay those of the ranking).
    """
    weights = {d.reviewer: d.weight for d in board.ranking.diagnostics}
    diagnostics = [
        dataclasses.replace(d, weight=weights.get(d.reviewer, d.weight))
        for d in plain.ranking.diagnostics
    ]
    board.ranking = dataclasses.replace(
        board.ranking,
        diagnostics=diagnostics,
        fleiss_kappa=plain.ranking.fleiss_kappa,
        length_bias=plain.ranking.length_bias,
    )


def _human_scores(
    target: Path | None, paths: Sequence[str | Path], path: str | Path | None
) -> HumanScores | None:
    """Human BatchEval scores of a run's answers (`--human-scores`), checked before ranking."""
    if path is None:
        return None
    if target is None or not target.is_dir():
        raise LeaderboardInputError(path, "", "--human-scores needs a run directory")
    try:
        return run_human_scores(list(paths), path)
    except ConfigError as exc:
        raise LeaderboardInputError(exc.file, exc.key, exc.problem) from None


def _batcheval_block(
    board: Leaderboard, run_dirs: list[Path], seed: int, human: HumanScores | None = None
) -> dict[str, Any] | None:
    """The run's BatchEval scores of the board's contestants, correlated with its BT ratings."""
    names = board.contestants
    bt = board.scores("bt")
    ratings = {names[i]: float(bt[i]) for i in range(len(names)) if not math.isnan(bt[i])}
    block = batcheval_summary(run_dirs, ratings, seed=seed, human=human)
    if block is None:
        return None
    # Models left out of the leaderboard (removed since the scores were made) are left out here.
    rank = {names[i]: k for k, i in enumerate(board.order)}
    block["rows"] = sorted(
        (r for r in block["rows"] if r["model"] in rank),
        key=lambda r: (rank[r["model"]], r["criterion"]),
    )
    block["against"] = "bt"
    return block if block["rows"] else None


def _by_model(board: Leaderboard) -> tuple[list[str], dict[str, dict[str, float | None]]]:
    """Models best first, and each model's score in every ranking."""
    names = board.contestants
    scores = {name: board.scores(name) for name in RANKINGS}
    return [names[i] for i in board.order], {
        names[i]: {k: _number(v[i]) for k, v in scores.items()} for i in range(len(names))
    }


def _number(value: float | int | np.floating[Any] | np.integer[Any]) -> float | None:
    as_float = float(value)
    return None if math.isnan(as_float) or math.isinf(as_float) else as_float


def _rank_number(value: int) -> int | None:
    return int(value) if value > 0 else None


def _model_row(board: Leaderboard, i: int, columns: dict[str, FloatArray]) -> dict[str, Any]:
    r = board.ranking
    ranks = r.ranks
    row: dict[str, Any] = {"model": board.contestants[i]}
    row["rank"] = _rank_number(ranks.rank[i])
    row["rank_low"] = _rank_number(ranks.rank_low[i])
    row["rank_high"] = _rank_number(ranks.rank_high[i])
    row["group"] = _rank_number(ranks.group[i] + 1)
    for name in RANKINGS:
        row[name] = _number(columns[name][i])
    order_error = None if r.elo is None or r.elo.order_error is None else r.elo.order_error
    row["elo_order_error"] = (
        None if order_error is None or math.isnan(columns["elo"][i]) else _number(order_error[i])
    )
    row["bt_ci_low"] = _number(r.bt.ci_low[i])
    row["bt_ci_high"] = _number(r.bt.ci_high[i])
    for name, ci in (
        ("win_rate", r.win_rate_ci),
        ("weighted_win_rate", r.weighted_win_rate_ci),
        ("elo", r.elo_ci),
    ):
        row[f"{name}_ci_low"] = _number(ci[0, i])
        row[f"{name}_ci_high"] = _number(ci[1, i])
    if r.style is not None and r.style_ranks is not None:
        row["bt_style"] = _number(r.style.rating[i])
        row["bt_style_ci_low"] = _number(r.style.ci_low[i])
        row["bt_style_ci_high"] = _number(r.style.ci_high[i])
        row["style_rank"] = _rank_number(r.style_ranks.rank[i])
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
            "share": _number(n.share),
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
                "coef": _number(style.coef[k]),
                "ci_low": _number(style.coef_low[k]),
                "ci_high": _number(style.coef_high[k]),
                "scale": _number(style.scale[k]),
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
        names[i]: {names[j]: _number(r.pairwise[i, j]) for j in board.order if j != i}
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
        "neighbours": _neighbours(board, r.ranks),
        "style_control": _style_dict(board),
        "diagnostics": {
            "reviewers": [
                {
                    "reviewer": d.reviewer,
                    "position_a_share": _number(d.position_a_share),
                    "swap_consistency": _number(d.swap_consistency),
                    "self_preference": _number(d.self_preference),
                    "tie_rate": _number(d.tie_rate),
                    "invalid_rate": _number(d.invalid_rate),
                    "length_bias": None if bias is None else _number(bias[k]),
                    "battles": d.battles,
                }
                for k, d in enumerate(r.diagnostics)
            ],
            "pairwise": pairwise,
            "pair_battles": pair_battles,
            "fleiss_kappa": _number(r.fleiss_kappa),
        },
        "counts": {
            "reviews": rs.n_rows,
            "invalid": rs.n_invalid,
            "failed": rs.n_failed,
            "questions": rs.n_questions,
            "self_excluded": rs.n_self_excluded,
        },
    }
    if r.reliability is not None:
        out["reliability"] = _reliability_dict(r)
    if board.true_order is not None and board.kendall_tau is not None:
        out["true_order"] = board.true_order
        out["kendall_tau"] = {k: _number(v) for k, v in board.kendall_tau.items()}
    if board.agreement is not None:
        out["agreement"] = _agreement_dict(board.agreement)
    if board.vs_baseline is not None:
        out["baseline"] = board.baseline
        out["vs_baseline"] = [
            {
                "model": rate.model,
                "win_rate": _number(rate.win_rate),
                "discrete_win_rate": _number(rate.discrete_win_rate),
                "ci_low": _number(rate.ci_low),
                "ci_high": _number(rate.ci_high),
                "n": rate.n,
                "avg_length": _number(rate.avg_length),
            }
            for rate in board.vs_baseline
        ]
        if board.length_control is not None:
            out["length_control"] = _length_control_dict(board.length_control)
            controlled = {lc.model: lc for lc in board.length_control.rates}
            for entry in out["vs_baseline"]:
                lc = controlled[entry["model"]]
                entry["lc_win_rate"] = _number(lc.lc_win_rate)
                entry["lc_ci_low"] = _number(lc.lc_ci_low)
                entry["lc_ci_high"] = _number(lc.lc_ci_high)
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
                "weight": _number(fit.weights[k]),
                "discrimination": _number(fit.discrimination[k]),
                "position_bias": _number(fit.position_bias[k]),
                "self_preference": _number(fit.self_preference[k]),
                "accuracy": _number(fit.accuracy[k]),
                "battles": int(round(float(fit.battles[k]))),
            }
            for k, name in enumerate(fit.reviewers)
        ],
    }


def sampling_block(directory: Path, reviews: pl.DataFrame) -> dict[str, Any] | None:
    """A sampled run's design, from its `sampling` table (None for a full design).

    `strategy`, the `rounds` selected, `units` and `selected_review_calls` (of the
    current log), and `ranked_review_calls`: the reviews the leaderboard counts
    that belong to selected units.
    """
    if not (directory / "log").is_dir():
        return None
    columns = ["round", "strategy", "review_ab_id", "review_ba_id"]
    frame = RunLog(directory).read(SAMPLING_TABLE, columns=columns)
    if frame.height == 0:
        return None
    selected = pl.concat([frame["review_ab_id"], frame["review_ba_id"]])
    ranked = int(reviews["id"].is_in(selected.implode()).sum()) if reviews.height else 0
    strategies = frame["strategy"].unique().to_list()
    return {
        "strategy": strategies[0] if len(strategies) == 1 else "mixed",
        "rounds": int(frame["round"].n_unique()),
        "units": frame.height,
        "selected_review_calls": 2 * frame.height,
        "ranked_review_calls": ranked,
    }


def _score_dict(score: AgreementScore) -> dict[str, Any]:
    return {
        "n": score.n,
        "accuracy": _number(score.accuracy),
        "accuracy_ci_low": _number(score.accuracy_low),
        "accuracy_ci_high": _number(score.accuracy_high),
        "kappa": _number(score.kappa),
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
        "human_win_rate": {k: _number(v) for k, v in agreement.human_win_rate.items()},
        "rankings": {
            name: {"kendall_tau": _number(c.kendall_tau), "spearman": _number(c.spearman)}
            for name, c in agreement.rankings.items()
        },
    }


def _length_control_dict(lc: LengthControl) -> dict[str, Any]:
    """The JSON `length_control`: the fit's settings and length coefficients."""
    return {
        "length_terms": lc.length_terms,
        "length_sd": _number(lc.length_sd),
        "interval": "question bootstrap",
        "bootstrap": lc.bootstrap,
        "length_coef": {rate.model: _number(rate.length_coef) for rate in lc.rates},
    }
