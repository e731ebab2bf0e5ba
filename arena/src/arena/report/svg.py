"""Horizontal bar charts with min–max whiskers, as self-contained SVG (no script, no network)."""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.stats import Series, summarize
from ..core.modes import KINDS
from . import format as fmt
from .view import ModeView, Row, View, ranked_cpu

PALETTE = ("#3b6ea5", "#e07b39", "#4f9a55", "#b8487a")
LABEL_W, PLOT_X = 150, 160  # px: the entries' labels end at LABEL_W, the bars start at PLOT_X
CHART_W = 760  # px: a chart's width by default (the README's picture, ranking_chart)
# px: a chart of the report, the page's width (html.CSS: max-width 1180 less its padding)
REPORT_W = 1140
VALUE_ROOM = 160  # px right of the plot for a bar's value label ("185k ⚠ client-bound")
BAR_H, BAR_GAP, GROUP_GAP = 14, 3, 10
# px per character a legend label is given: wider than the widest lower-case glyph's average of
# the fonts a browser picks for system-ui at 11 px (DejaVu Sans' is 6.6), so labels never meet
LEGEND_CHAR_W, LEGEND_KEY_W, LEGEND_GAP, LEGEND_LINE_H = 8, 14, 12, 16


@dataclass
class Bar:
    """One bar: median with a min–max whisker, in the chart's unit; median None draws the note."""

    series: str  # legend name; picks the colour
    median: float | None
    lo: float | None = None
    hi: float | None = None
    flagged: bool = False  # drawn pale: the load generator limited a repetition
    note: str = ""  # tooltip text, or the text drawn in place of a missing bar
    tag: str = ""  # said after the bar's value ("whole core")


@dataclass
class Group:
    label: str
    bars: list[Bar]


def nice_ticks(top: float, count: int = 4) -> list[float]:
    """Round tick values (1, 2, 2.5 or 5 times a power of ten apart) from 0 up to at least `top`."""
    if top <= 0:
        return [0.0, 1.0]
    raw = top / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    ticks = [0.0]
    while ticks[-1] < top:
        ticks.append(ticks[-1] + step)
    return ticks


def log_ticks(low: float, top: float) -> list[float]:
    """Powers of ten from the one below low (at most half of it, so that the shortest bar is seen)
    up to the first at or above top: a log axis's ticks. low and top > 0."""
    start = 10 ** math.floor(math.log10(low))
    if start > low / 2:
        start /= 10
    ticks = [start]
    while ticks[-1] < top:
        ticks.append(ticks[-1] * 10)
    return ticks


@dataclass(frozen=True)
class Axis:
    """Where a value lies along the plot, from its first tick (at x 0) to its last (at width)."""

    ticks: list[float]
    width: float  # px
    log: bool = False

    def x(self, value: float) -> float:
        low, high = self.ticks[0], self.ticks[-1]
        if self.log:
            share = (math.log10(max(value, low)) - math.log10(low)) / (math.log10(high) - math.log10(low))
        else:
            share = value / high
        return share * self.width


def legend_layout(names: list[str], width: float) -> list[tuple[float, float]]:
    """(x, line) of each legend item, left to right in columns as wide as the longest label
    allows (LEGEND_CHAR_W a character), a new line when the next column would pass width."""
    column = LEGEND_KEY_W + LEGEND_CHAR_W * max((len(n) for n in names), default=0) + LEGEND_GAP
    per_line = max(1, int((width - PLOT_X) // column))
    return [(PLOT_X + (i % per_line) * column, i // per_line) for i in range(len(names))]


def _text(x: float, y: float, text: str, anchor: str = "start", extra: str = "") -> str:
    return f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>{html.escape(text)}</text>'


def bar_chart(
    title: str,
    metric: str,
    groups: list[Group],
    unit: Callable[[float], str],
    mode: str | None = None,
    series_order: tuple[str, ...] = (),
    width: int = CHART_W,
    log: bool = False,
) -> str:
    """One <svg class="chart"> `width` px wide. Colours follow series_order (so that one name
    keeps its colour across charts), then the order in which other series first appear. log: a
    log axis (powers of ten), for figures that span decades (latency percentiles)."""
    series = list(dict.fromkeys([*series_order, *(b.series for g in groups for b in g.bars)]))
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(series)}
    tops = [v for g in groups for b in g.bars for v in (b.median, b.hi) if v is not None]
    lows = [v for g in groups for b in g.bars for v in (b.median, b.lo) if v is not None and v > 0]
    log = log and bool(lows)
    ticks = log_ticks(min(lows), max(tops)) if log else nice_ticks(max(tops, default=1.0))
    axis_of = Axis(ticks, width - PLOT_X - VALUE_ROOM, log)
    drawn = [n for n in series if n in {b.series for g in groups for b in g.bars}]
    with_legend = len(drawn) > 1 or bool(series_order)
    shown = drawn if with_legend else []  # the legend's names
    places = legend_layout(shown, width)
    top = 30 + (LEGEND_LINE_H * (places[-1][1] + 1) + 2 if places else 0)
    y = top
    body = []
    for group in groups:
        height = len(group.bars) * (BAR_H + BAR_GAP) - BAR_GAP
        body.append(_text(LABEL_W, y + height / 2 + 4, group.label, "end", ' class="label"'))
        for bar in group.bars:
            body.append(_bar(bar, y, axis_of, colours[bar.series], unit))
            y += BAR_H + BAR_GAP
        y += GROUP_GAP - BAR_GAP
    axis = [
        f'<line x1="{PLOT_X + axis_of.x(t):.1f}" y1="{top - 4}" x2="{PLOT_X + axis_of.x(t):.1f}" y2="{y:.1f}" '
        'class="grid"/>' + _text(PLOT_X + axis_of.x(t), y + 14, unit(t) if t else "0", "middle", ' class="tick"')
        for t in ticks
    ]
    legend = [
        f'<rect x="{x}" y="{26 + LEGEND_LINE_H * line}" width="10" height="10" fill="{colours[name]}"/>'
        + _text(x + LEGEND_KEY_W, 35 + LEGEND_LINE_H * line, name, extra=' class="tick"')
        for name, (x, line) in zip(shown, places, strict=True)
    ]
    height = y + 24
    mode_attr = f' data-mode="{html.escape(mode)}"' if mode else ""
    scale_attr = ' data-axis="log"' if log else ""
    return (
        f'<svg class="chart" data-metric="{html.escape(metric)}"{mode_attr}{scale_attr} role="img" '
        f'xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height:.0f}" '
        f'width="{width}" height="{height:.0f}">'
        f"<title>{html.escape(title)}</title>"
        + _text(0, 16, title, extra=' class="heading"')
        + (f'<g class="legend">{"".join(legend)}</g>' if legend else "")
        + "".join(axis)
        + "".join(body)
        + "</svg>"
    )


def _bar(bar: Bar, y: float, axis: Axis, colour: str, unit: Callable[[float], str]) -> str:
    """The bar, its whisker and its value label, at top edge y."""
    mid = y + BAR_H / 2
    if bar.median is None:
        return _text(PLOT_X + 4, mid + 4, bar.note or "no figure", extra=' class="missing"')
    width = max(axis.x(bar.median), 1.0)
    tip = f"{bar.series}: {unit(bar.median)}" + (f" ({unit(bar.lo)}–{unit(bar.hi)})" if bar.lo is not None else "")
    tip += f"; {bar.note}" if bar.note else ""
    parts = [
        f'<rect class="bar" x="{PLOT_X}" y="{y:.1f}" width="{width:.1f}" height="{BAR_H}" fill="{colour}"'
        + (' fill-opacity="0.4" stroke="#333" stroke-dasharray="3 2"' if bar.flagged else "")
        + f"><title>{html.escape(tip)}</title></rect>"
    ]
    end = PLOT_X + width
    if bar.lo is not None and bar.hi is not None:
        lo, hi = PLOT_X + axis.x(bar.lo), PLOT_X + axis.x(bar.hi)
        parts.append(
            f'<path d="M{lo:.1f} {mid:.1f}H{hi:.1f}M{lo:.1f} {y + 3:.1f}V{y + BAR_H - 3:.1f}'
            f'M{hi:.1f} {y + 3:.1f}V{y + BAR_H - 3:.1f}" class="whisker"/>'
        )
        end = max(end, hi)
    label = unit(bar.median) + (" ⚠ client-bound" if bar.flagged else "") + (f" {bar.tag}" if bar.tag else "")
    parts.append(_text(end + 6, mid + 4, label, extra=' class="value"'))
    return "".join(parts)


def _bar_of(series: Series | None, metric: str, name: str, note: str = "") -> Bar:
    summary = series.summary(metric) if series else None
    if summary is None:
        return Bar(name, None, note=note or "no samples")
    bound = series.client_bound
    return Bar(
        name,
        summary.median,
        summary.lo,
        summary.hi,
        flagged=bool(bound),
        note=note
        or (f"load generator was the bottleneck in {bound} of {len(series.samples)} repetitions" if bound else ""),
    )


def rps_chart(mv: ModeView, view: View | None = None) -> str:
    """The mode's rows in their order, as bars of the figure they are ranked on: the server's CPU
    µs per request where the mode ranks on it (view.ranked_figure; with view, a row the cap
    distorts by its whole core's, view.ranked_cpu, tagged so), else requests/s."""
    if mv.figure.startswith("Server CPU"):
        groups = [Group(fmt.text(r.entry.name), [_cpu_bar(r, view)]) for r in mv.rows]
        title, metric, unit = f"Server CPU µs per request, {mv.mode.name}, lower is better", "cpu_us_per_req", fmt.us
    else:
        groups = [
            Group(fmt.text(r.entry.name), [_bar_of(r.series, "rps", r.entry.kind, r.reason or "")]) for r in mv.rows
        ]
        title, metric, unit = f"Requests per second, {mv.mode.name}", "rps", fmt.compact
    return bar_chart(title + " (median, min–max whiskers)", metric, groups, unit, mv.mode.name, KINDS, REPORT_W)


def _cpu_bar(row: Row, view: View | None) -> Bar:
    """A row's CPU µs per request it is ranked on (view.ranked_cpu; without view, Row.cpu), pale
    where wrk was the limit, tagged where it is the whole core's."""
    cpu, whole = ranked_cpu(view, row) if view is not None else (row.cpu, False)
    if cpu is None:
        return Bar(row.entry.kind, None, note=row.reason or "no CPU figure")
    bound = row.client_bound
    note = f"load generator was the bottleneck in {bound} of {row.samples} repetitions" if bound else ""
    tag = "whole core (the cap distorts it)" if whole else ""
    return Bar(row.entry.kind, cpu.median, cpu.lo, cpu.hi, flagged=bool(bound), note=note, tag=tag)


def latency_chart(mv: ModeView) -> str:
    groups = [
        Group(fmt.text(r.entry.name), [_bar_of(r.series, f"latency_{p}_us", p) for p in ("p50", "p90", "p99")])
        for r in mv.rows
        if r.reason is None
    ]
    return bar_chart(
        f"Latency percentiles µs, {mv.mode.name} (median, min–max whiskers; log scale)",
        "latency",
        groups,
        fmt.compact,
        mv.mode.name,
        width=REPORT_W,
        log=True,
    )


def per_mode_chart(view: View, metric: str, title: str, unit: Callable[[float], str]) -> str:
    """metric's bars for each available entry, one per mode of the run (the CPU cost charts)."""
    groups = [
        Group(fmt.text(e.name), [_bar_of(view.groups.get((e.name, m)), metric, m) for m in view.run.config.modes])
        for e in view.run.entries
        if e.available
    ]
    return bar_chart(title + " (median, min–max whiskers)", metric, groups, unit, width=REPORT_W)


def efficiency_chart(view: View) -> str:
    return per_mode_chart(view, "efficiency", "Requests per server CPU-second, higher is better", fmt.compact)


def cpu_chart(view: View) -> str:
    return per_mode_chart(view, "cpu_us_per_req", "Server CPU µs per request, lower is better", fmt.us)


def rss_chart(view: View) -> str:
    groups = []
    for e in view.run.entries:
        if e.available:
            values = [v for s in view.series_of(e.name) for v in s["peak_rss_bytes"]]
            s = summarize(values) if values else None
            bar = Bar(e.kind, s.median, s.lo, s.hi) if s else Bar(e.kind, None, note="no samples")
            groups.append(Group(fmt.text(e.name), [bar]))
    return bar_chart(
        "Peak RSS of the process tree, all modes (median, min–max whiskers)",
        "peak_rss_bytes",
        groups,
        fmt.size,
        series_order=KINDS,
        width=REPORT_W,
    )


# What the report's page gives its charts (html.CSS), for a chart that stands alone as a file:
# its own fonts, strokes and a white ground (a README in a dark theme would hide black text).
STANDALONE_STYLE = (
    "<style>text{font-family:system-ui,sans-serif;font-size:12px;fill:#222}.heading{font-weight:600;font-size:13px}"
    ".tick{fill:#555;font-size:11px}.grid{stroke:#e6e6e6}.whisker{stroke:#222;stroke-width:1.2;fill:none}"
    ".value{fill:#333;font-size:11px}.missing{fill:#888;font-style:italic}</style>"
    '<rect width="100%" height="100%" fill="#fff"/>'
)


def ranking_chart(view: View, names: list[str], mode: str) -> str:
    """The README's picture of its table: one bar per entry of names (in that order), the
    server's CPU µs per request in mode (median, min–max whisker), coloured by kind; a
    self-contained SVG file (STANDALONE_STYLE): the figure each row is ranked on, as the table's
    cell (view.ranked_cpu), a whole core's tagged so. Raises KeyError for a name the run lacks."""
    rows = {r.entry.name: r for mv in view.modes if mv.mode.name == mode for r in mv.rows}
    groups = []
    for name in names:
        entry, row = view.run.entry(name), rows.get(name)
        if entry is None:
            raise KeyError(name)
        cpu, whole = ranked_cpu(view, row)
        note = (row.reason if row is not None else None) or f"not measured in {mode}"
        tag = "whole core (the cap distorts it)" if whole else ""
        bar = Bar(entry.kind, cpu.median, cpu.lo, cpu.hi, tag=tag) if cpu else Bar(entry.kind, None, note=note)
        groups.append(Group(fmt.text(name), [bar]))
    title = f"Server CPU µs per request, {mode}, lower is better (run {view.run.run_id})"
    chart = bar_chart(title, "cpu_us_per_req", groups, fmt.us, mode, KINDS)
    opening = chart.index(">") + 1
    return chart[:opening] + STANDALONE_STYLE + chart[opening:]
