"""Progress figures: per stage done/total as totals grow, rate, ETA, spend, retries, failures."""

from __future__ import annotations

import io
import time
from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from arena.progress import (
    BarsView,
    Figures,
    LineView,
    RunProgress,
    Snapshot,
    StageCounts,
    format_duration,
    plain_line,
)
from tests.conftest import small_tournament


def snap(at: float, answers: int, reviews: int, reviews_total: int, **kw: float) -> Snapshot:
    return Snapshot(
        at,
        (StageCounts("answers", answers, 100), StageCounts("reviews", reviews, reviews_total, 2)),
        **kw,  # type: ignore[arg-type]
    )


def test_rates_and_eta_per_stage_and_overall() -> None:
    figures = Figures(window_s=30.0)
    figures.add(snap(0.0, 0, 0, 400))
    figures.add(snap(10.0, 100, 100, 400))
    answers, reviews, overall = figures.stages()
    assert (answers.done, answers.total, answers.rate, answers.eta_s) == (100, 100, 10.0, 0.0)
    assert (reviews.rate, reviews.eta_s) == (10.0, 30.0)  # 300 left at 10/s
    assert (overall.done, overall.total, overall.rate) == (200, 500, 20.0)
    assert overall.eta_s == 15.0


def test_totals_grow_as_stages_add_work() -> None:
    figures = Figures()
    figures.add(snap(0.0, 100, 400, 400))
    figures.add(
        Snapshot(5.0, (*snap(5.0, 100, 400, 400).stages, StageCounts("discussion", 10, 30)))
    )
    names = [(s.name, s.done, s.total) for s in figures.stages()]
    assert names == [
        ("answers", 100, 100),
        ("reviews", 400, 400),
        ("discussion", 10, 30),
        ("all", 510, 530),
    ]
    # A stage never shows more done than total (a count caught between updates).
    figures.add(Snapshot(6.0, (StageCounts("discussion", 40, 30),)))
    assert figures.stages()[0].total == 40


def test_rate_uses_a_sliding_window() -> None:
    figures = Figures(window_s=10.0)
    figures.add(snap(0.0, 0, 0, 1000))
    figures.add(snap(100.0, 100, 0, 1000))  # slow start: 1 call/s
    figures.add(snap(105.0, 100, 100, 1000))
    figures.add(snap(115.0, 100, 300, 1000))  # now 20 calls/s
    overall = figures.stages()[-1]
    assert overall.rate == 20.0
    assert overall.eta_s == (1100 - 400) / 20.0


def test_plain_line_has_every_figure() -> None:
    figures = Figures()
    figures.add(snap(0.0, 0, 0, 400, spent_usd=0.0))
    figures.add(snap(4.0, 100, 20, 400, spent_usd=0.125, retries=7))
    line = plain_line(figures)
    assert line.startswith("answers 100/100 reviews 20/400 | 30.0 calls/s")
    assert "ETA 0:13" in line  # 380 left at 30/s
    assert "spent $0.1250" in line and "retries 7" in line and "failed 2" in line
    assert "elapsed 0:04" in line


def test_line_view_writes_one_stamped_line_per_sample() -> None:
    out = io.StringIO()
    view = LineView(out, clock=lambda: 0.0)
    view.show(snap(0.0, 0, 0, 10))
    view.show(snap(1.0, 100, 10, 10))
    lines = out.getvalue().splitlines()
    assert len(lines) == 2
    stamp = time.strftime("[%Y-%m-%dT%H:%M:%S] ", time.localtime(0.0))
    assert lines[0].startswith(stamp + "answers 0/100 reviews 0/10 | -- calls/s")
    assert "ETA 0:00" in lines[1]


def test_format_duration() -> None:
    assert format_duration(None) == "--:--"
    assert format_duration(59.6) == "1:00"
    assert format_duration(3725) == "1:02:05"


def test_bars_view_shows_each_stage_and_the_totals() -> None:
    from rich.console import Console

    out = io.StringIO()
    view = BarsView(Console(file=out, force_terminal=True, width=160))
    view.show(snap(0.0, 0, 0, 400))
    view.show(snap(4.0, 100, 20, 400, spent_usd=0.5, retries=3))
    view.close()
    text = out.getvalue()
    assert "100/100" in text and "20/400" in text
    assert "30.0/s" in text and "retries 3" in text and "failed 2" in text and "$0.5000" in text


def test_a_run_reports_every_figure_on_stderr(tmp_path: Path) -> None:
    # Not a terminal: timestamped lines; the last one has the final counts and the retries
    # the scheduler made for the simulator's transient failures.
    path = small_tournament(tmp_path, models=3, questions=3, sim={"failure_rate": 0.3})
    result = CliRunner().invoke(main, ["run", str(path)])
    assert result.exit_code in (0, 3), result.output
    lines = [line for line in result.stderr.splitlines() if " calls/s " in line]
    assert lines, result.stderr
    last = lines[-1]
    assert "answers 9/9 reviews 54/54" in last
    retries = int(last.split("retries ")[1].split()[0])
    assert retries > 0 and "spent $0.0000" in last and "ETA 0:00" in last


def test_run_progress_shows_at_most_once_per_interval() -> None:
    shown: list[Snapshot] = []

    class Collect:
        def show(self, snapshot: Snapshot) -> None:
            shown.append(snapshot)

        def close(self) -> None:
            shown.append(Snapshot(-1.0, ()))

    now = [0.0]
    progress = RunProgress(Collect(), interval=10.0, clock=lambda: now[0])
    for k in range(1, 6):
        now[0] = 3.0 * k
        progress("answers", k, 5)
    progress.close()
    # shown at 3 s (first), 15 s (12 s later), then the final figures and the close
    assert [s.at for s in shown] == [3.0, 15.0, 15.0, -1.0]
    assert shown[2].stages == (StageCounts("answers", 5, 5),) and shown[2].spent_usd is None
