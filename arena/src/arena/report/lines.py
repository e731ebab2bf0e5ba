"""Line charts as self-contained SVG (no script, no network): one line per series, each
axis linear or logarithmic, ticks given by the caller (position and label)."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass

from .svg import PALETTE

W, H = 640, 300
LEFT, RIGHT, TOP, BOTTOM = 70, 150, 30, 40


@dataclass
class Line:
    name: str
    points: list[tuple[float, float]]  # (x, y) in the chart's units; y > 0 on a log axis
    mark: tuple[float, float] | None = None  # a point drawn circled on the line (a sweep's knee)
    mark_note: str = ""  # the circle's tooltip


def _scale(values: list[float], log: bool) -> tuple[float, float]:
    vals = [math.log10(v) for v in values if v > 0] if log else values
    lo, hi = (min(vals), max(vals)) if vals else (0.0, 1.0)
    if not log:
        lo = min(lo, 0.0)
    return (lo, hi if hi > lo else lo + 1)


def chart(
    title: str,
    lines: list[Line],
    x_ticks: list[tuple[float, str]],
    y_label: str,
    x_label: str,
    x_log: bool = False,
    y_log: bool = False,
    y_unit=lambda v: f"{v:g}",
) -> str:
    """An SVG line chart; x_ticks are (x value, label) in the chart's units."""
    xs = [x for line in lines for x, _ in line.points] + [x for x, _ in x_ticks]
    ys = [y for line in lines for _, y in line.points if y is not None]
    (x0, x1), (y0, y1) = _scale(xs, x_log), _scale(ys, y_log)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x: float) -> float:
        v = math.log10(x) if x_log else x
        return LEFT + (v - x0) / (x1 - x0) * pw

    def py(y: float) -> float:
        v = math.log10(max(y, 1e-9)) if y_log else y
        return TOP + ph - (v - y0) / (y1 - y0) * ph

    e = html.escape
    out = [
        f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" role="img" '
        f'aria-label="{e(title)}"><text class="heading" x="{LEFT}" y="18">{e(title)}</text>'
    ]
    if y_log:  # 1, 2, 5 times each power of ten in range
        y_ticks = [m * 10**k for k in range(math.floor(y0), math.ceil(y1) + 1) for m in (1, 2, 5)]
    else:
        y_ticks = [y0 + (y1 - y0) * i / 4 for i in range(5)]
    for t in y_ticks:
        y = py(t)
        if TOP - 1 <= y <= TOP + ph + 1:
            out.append(f'<line class="grid" x1="{LEFT}" x2="{LEFT + pw}" y1="{y:.1f}" y2="{y:.1f}"/>')
            out.append(f'<text class="tick" x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{e(y_unit(t))}</text>')
    for x_value, label in x_ticks:
        x = px(x_value)
        out.append(f'<line class="grid" x1="{x:.1f}" x2="{x:.1f}" y1="{TOP}" y2="{TOP + ph}"/>')
        out.append(f'<text class="tick" x="{x:.1f}" y="{TOP + ph + 16}" text-anchor="middle">{e(label)}</text>')
    out.append(f'<text class="label" x="{LEFT + pw / 2}" y="{H - 4}" text-anchor="middle">{e(x_label)}</text>')
    out.append(
        f'<text class="label" x="12" y="{TOP + ph / 2}" transform="rotate(-90 12 {TOP + ph / 2})" '
        f'text-anchor="middle">{e(y_label)}</text>'
    )
    for i, line in enumerate(lines):
        colour = PALETTE[i % len(PALETTE)]
        pts = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in line.points if y is not None)
        out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="2" points="{pts}"/>')
        if line.mark is not None:
            mx, my = px(line.mark[0]), py(line.mark[1])
            out.append(
                f'<circle class="mark" cx="{mx:.1f}" cy="{my:.1f}" r="6" fill="none" stroke="{colour}" '
                f'stroke-width="2"><title>{e(line.name)}: {e(line.mark_note)}</title></circle>'
            )
        ly = TOP + 14 + i * 16
        out.append(
            f'<line x1="{LEFT + pw + 12}" x2="{LEFT + pw + 30}" y1="{ly - 4}" y2="{ly - 4}" '
            f'stroke="{colour}" stroke-width="2"/>'
        )
        out.append(f'<text class="label" x="{LEFT + pw + 34}" y="{ly}">{e(line.name)}</text>')
    out.append("</svg>")
    return "".join(out)
