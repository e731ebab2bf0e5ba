"""The history's trend page (`arena history --html DIR`): one static index.html, as asv
publishes its benchmarks, from history.trends: a section per tier (modes.TIERS, as in the
ranking), in it one chart per entry and figure (<figure class="chart" data-entry=…
data-figure="MODE METRIC">, an inline SVG): each run a point with its interval over the run's
repetitions (when the history has it), each level a line at its median, each change a dashed
line labelled and linked with its commit range; then the changes in words. No script, no
outside file: it opens from disk."""

from __future__ import annotations

import html
from pathlib import Path
from statistics import median

from ..analysis.history import METRICS, Change, Trend

WIDTH, HEIGHT = 640, 200  # of a chart, px
LEFT, RIGHT, TOP, BOTTOM = 56, 12, 12, 24  # margins, px

STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; max-width: 1400px; }
.charts { display: flex; flex-wrap: wrap; gap: 1em; }
figure.chart { margin: 0; border: 1px solid #ddd; padding: .5em; }
figcaption { font-weight: 600; }
svg text { font-size: 11px; fill: #555; }
.axis { stroke: #999; } .run { fill: #2b6cb0; } .interval { stroke: #2b6cb0; }
.level { stroke: #c05621; stroke-width: 2; } .change { stroke: #c53030; stroke-dasharray: 4 3; }
a text.commits { fill: #c53030; text-decoration: underline; }
"""


def _link(change: Change, commit_url: str | None) -> str | None:
    """The URL of the commit that starts a level, from commit_url (a template with {commit});
    none for a server the arena did not build (its commits are not this repository's)."""
    if change.service or not commit_url or not change.commit:
        return None
    return commit_url.format(commit=change.commit)


def chart(trend: Trend, commit_url: str | None = None) -> str:
    """One trend as a <figure class="chart"> holding an inline SVG."""
    values = [p.value for p in trend.points]
    ys = values + [v for p in trend.points for v in (p.lo, p.hi) if v is not None]
    low, high = min(ys), max(ys)
    pad = (high - low) * 0.1 or abs(high) * 0.05 or 1.0
    low, high = low - pad, high + pad
    inner_w, inner_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = inner_w / max(len(values) - 1, 1)

    def x(i: float) -> float:
        return LEFT + i * step

    def y(v: float) -> float:
        return TOP + (high - v) / (high - low) * inner_h

    out = [f'<svg class="trend" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}">']
    out.append(f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{TOP + inner_h}"/>')
    out.append(f'<line class="axis" x1="{LEFT}" y1="{TOP + inner_h}" x2="{LEFT + inner_w}" y2="{TOP + inner_h}"/>')
    for v in (low + pad, (low + high) / 2, high - pad):
        out.append(f'<text x="{LEFT - 4}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.3g}</text>')
    out.append(f'<text x="{LEFT}" y="{HEIGHT - 6}">{html.escape(trend.points[0].run_id)}</text>')
    last = html.escape(trend.points[-1].run_id)
    out.append(f'<text x="{LEFT + inner_w}" y="{HEIGHT - 6}" text-anchor="end">{last}</text>')
    bounds = [0, *(c.index for c in trend.changes), len(values)]
    levels = [trend.changes[0].before, *(c.after for c in trend.changes)] if trend.changes else [median(values)]
    for a, b, level in zip(bounds[:-1], bounds[1:], levels, strict=True):
        left, right = max(x(a - 0.4), LEFT), min(x(b - 1 + 0.4), LEFT + inner_w)  # a level of one run shows too
        ends = f'x1="{left:.1f}" x2="{right:.1f}" y1="{y(level):.1f}" y2="{y(level):.1f}"'
        out.append(f'<line class="level" {ends}/>')
    for i, p in enumerate(trend.points):
        if p.lo is not None and p.hi is not None:
            ends = f'x1="{x(i):.1f}" x2="{x(i):.1f}" y1="{y(p.lo):.1f}" y2="{y(p.hi):.1f}"'
            out.append(f'<line class="interval" {ends}/>')
        title = html.escape(f"{p.run_id} {(p.commit or '')[:12]}: {p.value:.4g}")
        out.append(f'<circle class="run" cx="{x(i):.1f}" cy="{y(p.value):.1f}" r="3"><title>{title}</title></circle>')
    for k, c in enumerate(trend.changes):
        cx = x(c.index - 0.5)
        out.append(f'<line class="change" x1="{cx:.1f}" y1="{TOP}" x2="{cx:.1f}" y2="{TOP + inner_h}"/>')
        shown = html.escape((c.commit or "?")[:7])  # the level's first commit; the range is in its title
        label = (
            f'<text class="commits" x="{cx + 3:.1f}" y="{TOP + 10 + 12 * (k % 3)}">{shown}'
            f"<title>{html.escape(c.commits)}</title></text>"
        )
        url = _link(c, commit_url)
        out.append(f'<a href="{html.escape(url)}">{label}</a>' if url else label)
    out.append("</svg>")
    caption = f"{trend.entry} · {trend.mode} · {METRICS[trend.metric][0]}"
    return (
        f'<figure class="chart" data-entry="{html.escape(trend.entry)}" '
        f'data-figure="{html.escape(trend.mode)} {trend.metric}"><figcaption>{html.escape(caption)}</figcaption>'
        + "".join(out)
        + "</figure>"
    )


def page(trends: list[Trend], source: str, commit_url: str | None = None) -> str:
    """The whole page: source names the history file, in words."""
    parts = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8"><title>renard: the bench history</title>',
        f"<style>{STYLE}</style></head><body>",
        "<h1>The bench history</h1>",
        f"<p>{html.escape(source)}: {len({p.run_id for t in trends for p in t.points})} runs; each figure a ratio "
        "to the floor measured in the same run unless said; a bar is the interval over the run's repetitions; "
        "a dashed line is a change of level (E-Divisive, p &lt; 0.01; a count: a step beyond 1%), labelled with the "
        "first commit of the new level (the range in its tooltip and below).</p>",
    ]
    tier = None
    for trend in trends:
        if trend.tier != tier:
            closing = "</div>" if tier is not None else ""
            parts.append(f'{closing}<h2>{html.escape(trend.tier)}</h2><div class="charts">')
            tier = trend.tier
        parts.append(chart(trend, commit_url))
    if tier is not None:
        parts.append("</div>")
    found = [c for t in trends for c in t.changes]
    parts.append(f"<h2>Changes ({len(found)})</h2><ul>")
    for c in found:
        url = _link(c, commit_url)
        words = html.escape(c.words())
        parts.append(
            f'<li class="found"><a href="{html.escape(url)}">{words}</a></li>'
            if url
            else f'<li class="found">{words}</li>'
        )
    parts.append("</ul></body></html>\n")
    return "\n".join(parts)


def write_page(trends: list[Trend], out_dir: Path, source: str, commit_url: str | None = None) -> Path:
    """Writes out_dir/index.html; returns it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "index.html"
    path.write_text(page(trends, source, commit_url), encoding="utf-8")
    return path
