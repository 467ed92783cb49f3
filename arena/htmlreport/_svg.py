"""Static inline SVG charts: ratings with intervals, the pairwise heatmap, history lines.

Each function returns one `<svg>` element as a string. Every label passes
through `html.escape`; numbers are formatted here. Nothing is scripted:
hovering shows `<title>` tooltips, which browsers render natively.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

__all__ = ["PALETTE", "Series", "heatmap", "interval_chart", "line_chart", "trajectory_chart"]

# Colour-blind-safe palette (Okabe-Ito), cycled.
PALETTE = (
    "#0072b2",
    "#e69f00",
    "#009e73",
    "#cc79a7",
    "#56b4e9",
    "#d55e00",
    "#f0e442",
    "#000000",
)

_FONT = 'font-family="system-ui, sans-serif" font-size="12"'


@dataclass(frozen=True)
class Series:
    """One set of estimates with intervals, one entry per model (None where missing)."""

    label: str
    values: Sequence[float | None]
    low: Sequence[float | None]
    high: Sequence[float | None]


def _ok(value: float | None) -> bool:
    return value is not None and math.isfinite(value)


def _ticks(low: float, high: float, count: int = 6) -> list[float]:
    """Round tick values covering [low, high]."""
    span = high - low
    if span <= 0:
        return [low]
    raw = span / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = min((m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw), default=raw)
    first = math.ceil(low / step) * step
    out = []
    value = first
    while value <= high + step * 1e-9:
        out.append(round(value, 10))
        value += step
    return out


def _text_width(text: str) -> float:
    """A generous estimate of a label's width in pixels at the charts' 12px font."""
    return 7.5 * len(text)


def _open(width: float, height: float, css_id: str) -> str:
    ident = f' id="{escape(css_id)}"' if css_id else ""
    return (
        f'<svg class="chart"{ident} xmlns="http://www.w3.org/2000/svg" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" role="img" {_FONT}>'
    )


def _num(value: float, digits: int) -> str:
    return f"{value:.{digits}f}"


def interval_chart(
    names: Sequence[str], series: Sequence[Series], *, digits: int = 0, css_id: str = ""
) -> str:
    """Dots with interval whiskers, one row per model (in the order given), a colour per series."""
    label_w, right, row_h, top = 150, 30, 26, 34
    plot_w = 560
    width = label_w + plot_w + right
    height = top + row_h * len(names) + 28
    points = [
        v
        for s in series
        for seq in (s.values, s.low, s.high)
        for v in seq
        if v is not None and _ok(v)
    ]
    if not points:
        return '<p class="empty">No estimates to plot.</p>'
    lo, hi = min(points), max(points)
    pad = (hi - lo) * 0.05 or 1.0
    lo, hi = lo - pad, hi + pad

    def x(v: float) -> float:
        return label_w + (v - lo) / (hi - lo) * plot_w

    parts = [_open(width, height, css_id)]
    for tick in _ticks(lo, hi):
        tx = x(tick)
        parts.append(
            f'<line x1="{tx:.1f}" y1="{top - 6}" x2="{tx:.1f}" y2="{height - 24}" '
            'stroke="#e4e7ec"/>'
            f'<text x="{tx:.1f}" y="{height - 8}" text-anchor="middle" fill="#555">'
            f"{escape(_num(tick, 0 if abs(tick) >= 10 else 2))}</text>"
        )
    lx = label_w
    for k, s in enumerate(series):
        colour = PALETTE[k % len(PALETTE)]
        parts.append(
            f'<circle cx="{lx + 6}" cy="14" r="5" fill="{colour}"/>'
            f'<text x="{lx + 16}" y="18">{escape(s.label)}</text>'
        )
        lx += 40 + 7 * len(s.label)
    offsets = [(k - (len(series) - 1) / 2) * 7 for k in range(len(series))]
    for row, name in enumerate(names):
        cy = top + row * row_h + row_h / 2
        parts.append(
            f'<text class="label" x="{label_w - 8}" y="{cy + 4:.1f}" text-anchor="end">'
            f"{escape(name)}</text>"
        )
        for k, s in enumerate(series):
            colour = PALETTE[k % len(PALETTE)]
            y = cy + offsets[k]
            value, low, high = s.values[row], s.low[row], s.high[row]
            tip = f"{name}, {s.label}: "
            if value is not None and _ok(value):
                tip += _num(value, digits)
            if low is not None and high is not None and _ok(low) and _ok(high):
                tip += f" [{_num(low, digits)}, {_num(high, digits)}]"
                parts.append(
                    f'<line class="whisker" x1="{x(low):.1f}" y1="{y:.1f}" x2="{x(high):.1f}" '
                    f'y2="{y:.1f}" stroke="{colour}" stroke-width="2"/>'
                )
            if value is not None and _ok(value):
                parts.append(
                    f'<circle class="point" cx="{x(value):.1f}" cy="{y:.1f}" r="4" '
                    f'fill="{colour}"><title>{escape(tip)}</title></circle>'
                )
    parts.append("</svg>")
    return "".join(parts)


def _heat(rate: float) -> str:
    """Red (0) through white (0.5) to blue (1)."""
    t = max(0.0, min(1.0, rate))
    if t < 0.5:
        f = t / 0.5
        r, g, b = 214 + (255 - 214) * f, 96 + (255 - 96) * f, 77 + (255 - 77) * f
    else:
        f = (t - 0.5) / 0.5
        r, g, b = 255 + (33 - 255) * f, 255 + (102 - 255) * f, 255 + (172 - 255) * f
    return f"#{round(r):02x}{round(g):02x}{round(b):02x}"


def heatmap(
    names: Sequence[str],
    rates: Mapping[str, Mapping[str, float | None]],
    counts: Mapping[str, Mapping[str, int]],
    *,
    css_id: str = "heatmap",
) -> str:
    """The pairwise matrix: row beats column, each cell its win rate and battle count.

    The margins grow with the longest model name, so no name is clipped: the
    row labels' width, and the height and the overhang to the right of the
    column labels, which are turned by 40 degrees.
    """
    cell = 64
    longest = max((_text_width(name) for name in names), default=0.0)
    label_w = max(150, math.ceil(longest + 16))
    top = max(80, math.ceil(longest * math.sin(math.radians(40)) + 16))
    overhang = max(10, math.ceil(longest * math.cos(math.radians(40)) - cell / 2 + 10))
    n = len(names)
    width, height = label_w + cell * n + overhang, top + cell * n + 10
    parts = [_open(width, height, css_id)]
    for j, col in enumerate(names):
        cx = label_w + j * cell + cell / 2
        parts.append(
            f'<text x="{cx:.1f}" y="{top - 8}" transform="rotate(-40 {cx:.1f} {top - 8})">'
            f"{escape(col)}</text>"
        )
    for i, row in enumerate(names):
        y = top + i * cell
        parts.append(
            f'<text x="{label_w - 8}" y="{y + cell / 2 + 4:.1f}" text-anchor="end">'
            f"{escape(row)}</text>"
        )
        for j, col in enumerate(names):
            x = label_w + j * cell
            if i == j:
                parts.append(
                    f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="#eceff3"/>'
                )
                continue
            rate = rates.get(row, {}).get(col)
            n_battles = counts.get(row, {}).get(col, 0)
            fill = "#f6f7f9" if rate is None else _heat(rate)
            text = "-" if rate is None else f"{rate:.2f}"
            ink = "#fff" if rate is not None and abs(rate - 0.5) > 0.35 else "#1d2330"
            tip = f"{row} vs {col}: " + (
                "never compared" if rate is None else f"wins {rate:.3f} of {n_battles} battles"
            )
            parts.append(
                f'<g class="cell"><title>{escape(tip)}</title>'
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" fill="{fill}" '
                'stroke="#fff"/>'
                f'<text x="{x + cell / 2}" y="{y + cell / 2 - 2}" text-anchor="middle" '
                f'font-weight="bold" fill="{ink}">{escape(text)}</text>'
                f'<text x="{x + cell / 2}" y="{y + cell / 2 + 14}" text-anchor="middle" '
                f'fill="{ink}" font-size="10">n={n_battles}</text></g>'
            )
    parts.append("</svg>")
    return "".join(parts)


def line_chart(
    labels: Sequence[str], lines: Mapping[str, Sequence[float | None]], *, css_id: str = ""
) -> str:
    """One line per name over the labelled points (x), e.g. a model's rating per snapshot."""
    left, right, top, bottom = 60, 150, 20, 50
    plot_w, plot_h = max(240, 90 * (len(labels) - 1)), 260
    width, height = left + plot_w + right, top + plot_h + bottom
    values = [v for seq in lines.values() for v in seq if v is not None and _ok(v)]
    if not values or len(labels) < 2:
        return '<p class="empty">Not enough snapshots to draw.</p>'
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 or 1.0
    lo, hi = lo - pad, hi + pad

    def x(k: int) -> float:
        return left + k / (len(labels) - 1) * plot_w

    def y(v: float) -> float:
        return top + (hi - v) / (hi - lo) * plot_h

    parts = [_open(width, height, css_id)]
    for tick in _ticks(lo, hi):
        ty = y(tick)
        parts.append(
            f'<line x1="{left}" y1="{ty:.1f}" x2="{left + plot_w}" y2="{ty:.1f}" '
            'stroke="#e4e7ec"/>'
            f'<text x="{left - 6}" y="{ty + 4:.1f}" text-anchor="end" fill="#555">'
            f"{tick:.0f}</text>"
        )
    for k, label in enumerate(labels):
        parts.append(
            f'<text x="{x(k):.1f}" y="{top + plot_h + 18}" text-anchor="middle" fill="#555">'
            f"{escape(label)}</text>"
        )
    for n, (name, seq) in enumerate(lines.items()):
        colour = PALETTE[n % len(PALETTE)]
        pts = [(x(k), y(v)) for k, v in enumerate(seq) if v is not None and _ok(v)]
        if len(pts) > 1:
            path = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
            parts.append(
                f'<polyline class="line" points="{path}" fill="none" stroke="{colour}" '
                'stroke-width="2"/>'
            )
        for k, v in enumerate(seq):
            if v is not None and _ok(v):
                parts.append(
                    f'<circle cx="{x(k):.1f}" cy="{y(v):.1f}" r="3" fill="{colour}">'
                    f"<title>{escape(f'{name}, {labels[k]}: {v:.0f}')}</title></circle>"
                )
        parts.append(
            f'<text x="{left + plot_w + 10}" y="{top + 14 + 16 * n}" fill="{colour}">'
            f"{escape(name)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def trajectory_chart(
    steps: Sequence[int], lines: Mapping[str, Sequence[float]], *, css_id: str = "elo-trajectory"
) -> str:
    """One line per name over a numeric x (e.g. reviews applied), labelled at its right end."""
    left, right, top, bottom = 60, 170, 20, 50
    plot_w, plot_h = 560, 280
    width, height = left + plot_w + right, top + plot_h + bottom
    values = [v for seq in lines.values() for v in seq if _ok(v)]
    if not values or len(steps) < 2 or steps[-1] <= steps[0]:
        return '<p class="empty">Not enough reviews to draw.</p>'
    lo, hi = min(values), max(values)
    pad = (hi - lo) * 0.08 or 1.0
    lo, hi = lo - pad, hi + pad
    first, last = steps[0], steps[-1]

    def x(step: float) -> float:
        return left + (step - first) / (last - first) * plot_w

    def y(v: float) -> float:
        return top + (hi - v) / (hi - lo) * plot_h

    parts = [_open(width, height, css_id)]
    for tick in _ticks(lo, hi):
        ty = y(tick)
        parts.append(
            f'<line x1="{left}" y1="{ty:.1f}" x2="{left + plot_w}" y2="{ty:.1f}" '
            'stroke="#e4e7ec"/>'
            f'<text x="{left - 6}" y="{ty + 4:.1f}" text-anchor="end" fill="#555">'
            f"{tick:.0f}</text>"
        )
    for tick in _ticks(first, last):
        parts.append(
            f'<text x="{x(tick):.1f}" y="{top + plot_h + 18}" text-anchor="middle" '
            f'fill="#555">{escape(f"{tick:,.0f}")}</text>'
        )
    parts.append(
        f'<text x="{left + plot_w / 2}" y="{height - 8}" text-anchor="middle" fill="#555">'
        "reviews applied</text>"
    )
    ends: list[tuple[float, str, str]] = []
    for n, (name, seq) in enumerate(lines.items()):
        colour = PALETTE[n % len(PALETTE)]
        pts = [(x(s), y(v)) for s, v in zip(steps, seq, strict=True) if _ok(v)]
        if len(pts) < 2:
            continue
        path = " ".join(f"{px:.1f},{py:.1f}" for px, py in pts)
        final = next(v for v in reversed(seq) if _ok(v))
        parts.append(
            f'<polyline class="trajectory" points="{path}" fill="none" stroke="{colour}" '
            f'stroke-width="2"><title>{escape(f"{name}: {final:.0f} at the end")}</title>'
            "</polyline>"
        )
        ends.append((pts[-1][1], name, colour))
    # End labels top to bottom, at least 14 px apart.
    placed = top - 14.0
    for end_y, name, colour in sorted(ends):
        placed = max(end_y + 4, placed + 14)
        parts.append(
            f'<text x="{left + plot_w + 8}" y="{placed:.1f}" fill="{colour}">{escape(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
