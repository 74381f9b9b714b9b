"""One picture per domain: runs over time as stacked bars, open flags as a line (pure geometry).

The template draws what this computes; every number in the SVG comes from here, every text
label is escaped by the template.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from custodian_runtime.review.runs import RunRow

WIDTH, HEIGHT = 640, 180
LEFT, RIGHT, TOP, BOTTOM = 36, 12, 12, 28
SERIES = ("executed", "queued", "denied")


@dataclass(frozen=True)
class Bar:
    """One segment of a run's stacked bar."""

    series: str
    x: float
    y: float
    width: float
    height: float
    title: str


@dataclass(frozen=True)
class Chart:
    """Everything the SVG needs: bars, the open-flags line, axis ticks and labels."""

    width: int
    height: int
    bars: tuple[Bar, ...]
    flags_points: str
    flags_dots: tuple[tuple[float, float, str], ...]
    y_ticks: tuple[tuple[float, int], ...]
    x_labels: tuple[tuple[float, str, str], ...]  # x, text, text-anchor (kept inside the box)
    empty: bool
    failures: tuple[tuple[float, str], ...] = ()  # x and title of each run that failed


def _x_positions(times: Sequence[datetime], plot_w: float) -> list[float]:
    if len(times) == 1:
        return [LEFT + plot_w / 2]
    first, last = times[0], times[-1]
    span = (last - first).total_seconds() or 1.0
    return [LEFT + plot_w * (t - first).total_seconds() / span for t in times]


def _stack(row: RunRow, x: float, bar_w: float, scale: float) -> list[Bar]:
    bars: list[Bar] = []
    base = float(HEIGHT - BOTTOM)
    for series in SERIES:
        value = row.count(series)
        if value == 0:
            continue
        height = value * scale
        base -= height
        title = f"{row.started} {row.run_id}: {series} {value}"
        bars.append(Bar(series, x - bar_w / 2, base, bar_w, height, title))
    return bars


def build_chart(rows: Sequence[RunRow], times: Sequence[datetime]) -> Chart:
    """The chart of `rows` (scheduled runs, oldest first) placed at `times`."""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    if not rows:
        return Chart(WIDTH, HEIGHT, (), "", (), (), (), True)
    top = max(
        max(sum(r.count(s) for s in SERIES) for r in rows),
        max((r.open_flags or 0) for r in rows),
        1,
    )
    scale = plot_h / top
    xs = _x_positions(times, plot_w - 16)
    xs = [x + 8 for x in xs]
    bar_w = max(3.0, min(24.0, (plot_w - 16) / (len(rows) * 2)))
    bars = [bar for row, x in zip(rows, xs, strict=True) for bar in _stack(row, x, bar_w, scale)]
    dots = tuple(
        (x, HEIGHT - BOTTOM - r.open_flags * scale, f"{r.started}: {r.open_flags} open flag(s)")
        for r, x in zip(rows, xs, strict=True)
        if r.open_flags is not None
    )
    points = " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in dots)
    ticks = tuple((HEIGHT - BOTTOM - v * scale, v) for v in sorted({0, top // 2, top}))
    failures = tuple(
        (x, f"{r.started} {r.run_id}: {r.status}")
        for r, x in zip(rows, xs, strict=True)
        if r.tone == "bad"
    )
    return Chart(
        WIDTH, HEIGHT, tuple(bars), points, dots, ticks, _labels(xs, times), False, failures
    )


def _labels(xs: Sequence[float], times: Sequence[datetime]) -> tuple[tuple[float, str, str], ...]:
    """The first and last time; the first anchored at its start, the last at its end."""
    text = [t.strftime("%m-%d %H:%M") for t in times]
    if len(xs) == 1:
        return ((xs[0], text[0], "middle"),)
    return ((max(xs[0], float(LEFT)), text[0], "start"), (xs[-1], text[-1], "end"))
