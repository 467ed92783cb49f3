"""Leaderboard assembly: read the input, rank it, add each stage's block and the diagnostics."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from numpy.typing import NDArray

from arena.config import ConfigError
from arena.rank import (
    MIN_BATTLES,
    MIN_QUESTIONS,
    STYLE_FEATURES,
    DifficultyTableError,
    LengthControl,
    Ranking,
    RankOptions,
    ReviewSet,
    answer_style,
    baseline_win_rates,
    encode_reviews,
    human_agreement,
    length_controlled_win_rates,
    load_difficulty_table,
    prefetch_kernels,
    rank_correlation,
    rank_reviews,
    reference_difficulty,
    save_difficulty_table,
)
from arena.report._board import RANKINGS, STYLE_RANKING, Leaderboard, LeaderboardOptions
from arena.report._categories import (
    NO_CATEGORY,
    PER_CATEGORY_BASELINE,
    CategoryRanking,
    category_baseline,
    category_column,
    rank_categories,
    run_categories,
)
from arena.report._inputs import (
    STYLE_COLUMNS,
    LeaderboardInputError,
    MissingShards,
    is_run_directory,
    judgment_sources,
    load_reviews_file,
    load_run,
    load_runs,
)
from arena.report._json import by_model, leaderboard_dict, number
from arena.report._order import sort_by_id
from arena.report._trust import bias_warnings, self_judged_warnings
from arena.runtime import one_blas_thread
from arena.stage import BoardInputs, BoardReviews
from arena.stages import all_parts
from arena.store import RunLog, part_rows

__all__ = ["build_leaderboard", "rank_frame", "with_answer_style"]

FloatArray = NDArray[np.float64]


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


def _spend_of(directories: Sequence[Path]) -> Future[float]:
    """The spend of the run directories' logs (`RunLog.spent_usd`), added up in a thread
    while the caller reads and ranks the reviews: it reads other columns of every
    table, and polars and NumPy let go of the interpreter while they work."""
    pool = ThreadPoolExecutor(1, thread_name_prefix="arena-spend")
    try:
        return pool.submit(lambda: float(sum(RunLog(d).spent_usd() for d in directories)))
    finally:
        pool.shutdown(wait=False)  # the thread ends with its one task


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
    return _rank_frame(
        [reviews],
        source=source,
        options=options,
        contestants=contestants,
        reviewers=reviewers,
        sim_skill=sim_skill,
        human=human,
        cost_usd=cost_usd,
        answers=answers,
    )


def _rank_frame(held: list[pl.DataFrame], **kwargs: Any) -> Leaderboard:
    """`_ranked` with BLAS on this thread alone: ranking's solves are small, and
    spinning BLAS threads would take the cores from its own (`arena.runtime`)."""
    with one_blas_thread():
        return _ranked(held, **kwargs)


def _ranked(
    held: list[pl.DataFrame],
    *,
    source: str,
    options: LeaderboardOptions | None = None,
    contestants: Sequence[str] | None = None,
    reviewers: Sequence[str] | None = None,
    sim_skill: Mapping[str, float] | None = None,
    human: pl.DataFrame | None = None,
    cost_usd: float | None = None,
    answers: pl.DataFrame | None = None,
    bias: bool = True,
) -> Leaderboard:
    """`rank_frame` of the one frame in `held`, which it takes out: once the reviews are
    coded, a caller that kept no other reference has their memory back for the ranking.
    `bias` False leaves out the bias warnings (a history snapshot keeps no warning)."""
    reviews = held.pop()
    opts = options or LeaderboardOptions()
    if "id" in reviews.columns:
        # Canonical order before the seeded Elo shuffles and bootstrap draws: the
        # log holds rows in completion order, which differs between a resumed
        # and an uninterrupted run of the same tournament.
        reviews = sort_by_id(reviews, nulls_last=True)
    if answers is not None:
        reviews = with_answer_style(reviews, answers)
    # What coding does not read goes first: the ids (the order is set), and grades
    # that no review has (a million rows of nulls still hold their values' memory).
    unused = [c for c in ("id", *STYLE_COLUMNS) if c in reviews.columns]
    unused += [
        c
        for c in ("p_a", "weight")
        if c in reviews.columns and reviews[c].null_count() == reviews.height
    ]
    # A frame of the columns kept, not `drop`: polars' drop (or select) copied the
    # other columns for a moment (the Int128 ids of a 3M-review log: 46 MB more).
    reviews = pl.DataFrame([reviews[c] for c in reviews.columns if c not in unused])
    rs = encode_reviews(
        reviews, contestants=contestants, reviewers=reviewers, exclude_self=opts.exclude_self
    )
    del reviews  # the sorted, styled copy: the ranking reads `rs` (a million rows' columns)
    if opts.anchor is not None and opts.anchor not in rs.contestants:
        known = ", ".join(rs.contestants) or "none"
        raise ValueError(f"--anchor {opts.anchor!r} is not a contestant (contestants: {known})")
    if opts.baseline is not None and opts.baseline not in rs.contestants:
        known = ", ".join(rs.contestants) or "none"
        raise ValueError(f"--baseline {opts.baseline!r} is not a contestant (contestants: {known})")
    if opts.length_control and opts.baseline is None:
        raise ValueError("--length-control needs --baseline MODEL")
    if (opts.difficulty or opts.save_difficulty) and not opts.length_control:
        raise ValueError("--difficulty and --save-difficulty need --length-control")
    if opts.difficulty and opts.save_difficulty:
        raise ValueError("give --difficulty FILE or --save-difficulty FILE, not both")
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
        source, ranking, list(ranking.default_ranks.order), anchor=opts.anchor, cost_usd=cost_usd
    )
    board.warnings = self_judged_warnings(rs, opts.weights) + _warnings(ranking, opts.bootstrap)
    if bias:
        board.warnings += bias_warnings(ranking)
    if opts.baseline is not None:
        board.baseline = opts.baseline
        rates = baseline_win_rates(rs, opts.baseline, bootstrap=opts.bootstrap, seed=opts.seed)
        order = {name: k for k, name in enumerate(rs.contestants[i] for i in board.order)}
        board.vs_baseline = sorted(rates, key=lambda rate: order[rate.model])
        if opts.length_control:
            board.length_control = _length_control(rs, opts.baseline, opts)
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


def _stage_reviews(
    directories: Sequence[Path], reviews: pl.DataFrame
) -> tuple[str, BoardReviews] | None:
    """The reviews with a stage's outcomes applied (a run's agreed discussions), if any,
    with the stage's key in the leaderboard."""
    try:
        for part in all_parts():
            changed = None if part.board is None else part.board.reviews(directories, reviews)
            if changed is not None and part.board is not None:
                return part.board.key, changed
    except ConfigError as exc:
        raise LeaderboardInputError(exc.file, exc.key, exc.problem) from None
    return None


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
    style = answer_style(text)
    # Each answer id's last row of the answers table (a retried answer's latest).
    last = (
        pl.DataFrame({"_answer": answers["id"].cast(pl.String)})
        .with_row_index("_style")
        .unique("_answer", keep="last", maintain_order=True)
    )
    out = reviews.drop([c for c in reviews.columns if _is_style_column(c)])
    added: list[pl.Series] = []
    for side in ("a", "b"):
        # The row of each review's answer (null: unknown), found on the ids alone; the
        # reviews' other columns are not copied (a million rows of them).
        ids = reviews[f"answer_{side}_id"]
        if isinstance(ids.dtype, pl.Enum):  # coded (`RunLog.read_coded`): by code
            of_code = pl.DataFrame({"_answer": ids.dtype.categories}).join(
                last, on="_answer", how="left", maintain_order="left"
            )["_style"]
            where = of_code.gather(ids.to_physical())
        else:
            where = pl.DataFrame({"_answer": ids.cast(pl.String)}).join(
                last, on="_answer", how="left", maintain_order="left"
            )["_style"]
        picked = style.select(pl.all().gather(where))  # a null row where `where` is null
        added += [picked[name].alias(f"{name}_{side}") for name in STYLE_FEATURES]
    return out.with_columns(added)


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
    when discussions replace verdicts, no style control, no bias warnings, no
    cost, no discussion or BatchEval block.

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
    per_category = opts.baseline == PER_CATEGORY_BASELINE  # arena-hard v2.0's baselines
    if per_category:
        by, opts = "category", dataclasses.replace(opts, baseline=None, length_control=False)
    if isinstance(reviews_file, str | Path):
        reviews_file = [reviews_file]
    elif reviews_file is not None:
        reviews_file = list(reviews_file) or None
    paths = [] if path is None else [Path(path)] if isinstance(path, str | Path) else list(path)
    # Judgment files, glob patterns and folders of them given as sources: as --reviews.
    # (Folders and patterns with --reviews too: all of them are read as one set.)
    lone_file = len(paths) == 1 and Path(paths[0]).is_file()
    if paths and not lone_file and judgment_sources(paths):
        reviews_file, paths = [*(reviews_file or []), *(Path(p) for p in paths)], []
    for shard in paths if len(paths) > 1 else []:  # the shard directories of one tournament
        if not is_run_directory(Path(shard)) or reviews_file is not None:
            raise LeaderboardInputError(
                shard,
                "",
                "several sources must all be run directories (the shards of one tournament) "
                "or all judgment files and folders; with a run directory, give judgments "
                "with --reviews (repeatable)",
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
        # Several human labels on one battle are the design (majority-voted): all kept.
        else load_reviews_file(human_file, strong_win_weight=strong_win_weight, duplicates="all")
    )
    prepared = _stage_options(target, paths, human_scores_file)
    spend: Future[float] | None = None
    contestants = reviewers = None
    skills: dict[str, float] = {}
    answers = scored = None
    partial: MissingShards | None = None
    input_notes: list[str] = []  # what reading the files found (repeated reviews)
    if target is not None and target.is_dir():
        # A big log's ranking runs compiled kernels: numba readies them meanwhile.
        # (`part_rows` creates nothing: the directory is not checked yet.) Not for a
        # run's history snapshot: numba and its kernels, which are large, would stand
        # beside the reading of the log, the end of a long run's peak; they load when
        # the coding needs them, with less of the log held.
        if not ratings_only:
            prefetch_kernels(lambda: sum(part_rows(d, "reviews") for d in directories))
        # The run's spend, while it reads and ranks: only in what `load_run` will take for
        # a run directory (`RunLog` makes `log/` when it is missing).
        if not ratings_only and reviews_file is None and all(map(is_run_directory, directories)):
            spend = _spend_of(directories)
        run = load_runs(
            directories,
            ranking_only=True,
            style=not ratings_only,
            allow_missing_shards=allow_missing_shards,
            coded=by is None,  # the categories are found on the question ids' texts
            duplicates=opts.duplicates,
            notes=input_notes,
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
        del run  # its reviews are `reviews` now (see the hand-over to the ranking below)
    if reviews_file is not None or (target is not None and not target.is_dir()):
        files = [Path(f) for f in reviews_file] if reviews_file is not None else [target]
        assert all(f is not None for f in files)
        reviews = load_reviews_file(
            [f for f in files if f is not None],
            format=reviews_format,
            strong_win_weight=strong_win_weight,
            duplicates=opts.duplicates,
            notes=input_notes,
            games=opts.games,
        )
        source = ", ".join(str(f) for f in files)
        if reviews_file is not None and target is not None:
            # Judgments from elsewhere: the run's contestants, whoever judged.
            source, reviewers = f"{source} (tournament {target})", None
    run_dir = reviews_file is None and target is not None and target.is_dir()
    design = None
    if target is not None and target.is_dir():
        design = _design_block(target, reviews)
        if opts.balanced is None:
            opts = dataclasses.replace(opts, balanced=design is not None)
        if design is not None and design[1].get("baseline") and opts.baseline is None:
            # A baseline run leads with the win rate against its baseline, no flag needed.
            opts = dataclasses.replace(opts, baseline=design[1]["baseline"])
    # A run's discussions: rank with their agreed verdicts, and report both rankings.
    discussed: BoardReviews | None = None
    discussed_key = ""
    if reviews_file is None and target is not None and target.is_dir():
        found = _stage_reviews(directories, reviews)
        if found is not None:
            discussed_key, discussed = found
    extra = None if discussed is None else discussed.calls
    try:
        # A run directory: every billed attempt in its log (retried failures and
        # superseded rows included); a file: the cost column it has. The history
        # snapshot (ratings_only) keeps no cost: it is not read.
        cost_usd = (
            None
            if ratings_only
            else spend.result()
            if spend is not None
            else _cost([reviews, answers, extra, scored])
        )
        # The frame to rank is handed over: unless it is ranked again (the reviews as
        # written, beside the discussed ones) or split by category, no reference is
        # kept, so a million reviews' columns are freed once coded, before the peak.
        held = [reviews if discussed is None else discussed.reviews]
        kept = reviews if discussed is not None or by == "category" else None
        del reviews
        board = _rank_frame(
            held,
            source=source,
            options=opts,
            contestants=contestants,
            reviewers=reviewers if discussed is None else discussed.reviewers(reviewers),
            sim_skill=skills,
            human=human,
            cost_usd=cost_usd,
            answers=answers if reviews_file is None and not ratings_only else None,
            bias=not ratings_only,
        )
        if discussed is not None and not ratings_only:
            assert kept is not None
            plain = rank_frame(
                kept,
                source=source,
                options=opts,
                contestants=contestants,
                reviewers=reviewers,
                sim_skill=skills,
                answers=answers,
            )
            _judge_diagnostics_from(board, plain)
            tau = plain.kendall_tau
            block = discussed.block(
                *by_model(board),
                *by_model(plain),
                None if tau is None else {k: number(v) for k, v in tau.items()},
                human=human,
                seed=opts.seed,
            )
            board.set_block(discussed_key, block)
        if design is not None:
            design[1]["balanced_win_rates"] = bool(opts.balanced)
            board.set_block(design[0], design[1])
            if design[1].get("baseline") == board.baseline and board.vs_baseline is not None:
                # The baseline design's headline: best win rate against the baseline first.
                board.vs_baseline = sorted(
                    board.vs_baseline,
                    key=lambda rate: -rate.win_rate if rate.win_rate == rate.win_rate else 1.0,
                )
        board.warnings[:0] = input_notes
        if partial is not None:
            board.partial = partial.to_json()
            board.warnings.insert(0, partial.note())
        if ratings_only:
            return board
        if directories:  # one run directory, or the shards of one tournament together
            _stage_blocks(board, directories, opts.seed, prepared)
        if by == "category":
            assert kept is not None
            ranked = kept if discussed is None else discussed.reviews
            # Within a category, the whole set's difficulty table (saved above, if asked).
            inner = dataclasses.replace(
                opts, difficulty=opts.save_difficulty or opts.difficulty, save_difficulty=None
            )
            board.by_category = _by_category(
                ranked,
                target if run_dir else None,
                lambda part, name: leaderboard_dict(
                    rank_frame(
                        part,
                        source=source,
                        options=dataclasses.replace(opts, baseline=category_baseline(part, name))
                        if per_category
                        else inner,
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


def _length_control(rs: ReviewSet, baseline: str, opts: LeaderboardOptions) -> LengthControl:
    """--length-control, with its difficulty table read, or computed from the models
    imported and saved; a bad table file is an input error naming it."""
    try:
        table = None
        if opts.difficulty is not None:
            table = load_difficulty_table(opts.difficulty)
        elif opts.save_difficulty is not None:
            table = save_difficulty_table(reference_difficulty(rs, baseline), opts.save_difficulty)
        return length_controlled_win_rates(
            rs, baseline, bootstrap=opts.bootstrap, seed=opts.seed, difficulty=table
        )
    except DifficultyTableError as exc:
        raise LeaderboardInputError(exc.file, exc.field, exc.problem) from None
    except OSError as exc:
        raise LeaderboardInputError(opts.save_difficulty or "", "", str(exc)) from None


def _by_category(
    reviews: pl.DataFrame,
    run_dir: Path | None,
    rank: Callable[[pl.DataFrame, str], dict[str, Any]],
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
            "arena leaderboard",
            "--by category",
            "the judgments read carry no category (FastChat's MT-bench files have none; "
            "AlpacaEval's `dataset`, arena-hard's and Chatbot Arena's `category` and a "
            "`category` column of arena's own format do): rank without --by category, or "
            "add a `category` field to each judgment",
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


def _stage_options(
    target: Path | None, paths: Sequence[str | Path], human_scores: str | Path | None
) -> dict[str, Any]:
    """Each stage's prepared leaderboard options (`--human-scores`), checked before ranking."""
    if human_scores is not None and (target is None or not target.is_dir()):
        raise LeaderboardInputError(human_scores, "", "--human-scores needs a run directory")
    options = {"human_scores": human_scores}
    prepared: dict[str, Any] = {}
    try:
        for part in all_parts():
            if part.board is not None:
                prepared[part.name] = part.board.prepare([Path(p) for p in paths], options)
    except ConfigError as exc:
        raise LeaderboardInputError(exc.file, exc.key, exc.problem) from None
    return prepared


def _stage_blocks(
    board: Leaderboard, run_dirs: list[Path], seed: int, prepared: dict[str, Any]
) -> None:
    """Each stage's block of the board (BatchEval scores correlated with its BT ratings)."""
    names = board.contestants
    bt = board.scores("bt")
    ratings = {names[i]: float(bt[i]) for i in range(len(names)) if not math.isnan(bt[i])}
    order = [names[i] for i in board.order]
    for part in all_parts():
        if part.board is None:
            continue
        inputs = BoardInputs(run_dirs, order, ratings, seed, prepared.get(part.name))
        block = part.board.block(inputs)
        if block is not None:
            board.set_block(part.board.key, block)


def _design_block(directory: Path, reviews: pl.DataFrame) -> tuple[str, dict[str, Any]] | None:
    """The review design a run's log records, with the stage's board key (None: a full design)."""
    for part in all_parts():
        design = None if part.board is None else part.board.design(directory, reviews)
        if design is not None and part.board is not None:
            return part.board.key, design
    return None
