"""report.md and report.html from one run.json (schema 1).

The report is derived from the raw samples and never replaces them. Every figure is the
median with the min–max of the repetitions; a comparison is a ratio to the reference's
requests/s, called "not significant" when the two samples' ranges overlap. The HTML page is
self-contained (inline CSS and SVG, no script, no network) and escapes every string that
comes from the run.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Callable

from arena.stats import Series, StatsError, Summary, group_samples, ratio, summarize

DEFAULT_MODES = ("keepalive", "pipeline16", "close")
MODE_WORDS = {
    "keepalive": "keep-alive connections",
    "pipeline16": "16 requests pipelined per write",
    "close": "a new connection per request",
}


# --------------------------------------------------------------------------- run access


def _entries(run: dict) -> list[dict]:
    """The run's entries, plus a bare entry for any name seen only in samples."""
    entries = list(run.get("entries") or [])
    known = {e.get("name") for e in entries}
    for sample in run.get("samples") or []:
        if sample.get("entry") not in known:
            known.add(sample.get("entry"))
            entries.append({"name": sample.get("entry"), "language": "?", "kind": "?", "available": True,
                            "reason": "sampled but not listed in the run's entries"})
    return entries


def _modes(run: dict) -> list[str]:
    """The configured modes, then any mode seen only in samples."""
    modes = list((run.get("config") or {}).get("modes") or DEFAULT_MODES)
    for sample in run.get("samples") or []:
        if sample.get("mode") not in modes:
            modes.append(sample.get("mode"))
    return modes


def _summary(values: list[float | None]) -> Summary | None:
    """summarize() of the values that are not None, or None when none are left."""
    try:
        return summarize(v for v in values if v is not None)
    except StatsError:
        return None


def _entry_named(run: dict, name: str) -> dict | None:
    return next((e for e in _entries(run) if e.get("name") == name), None)


def reference_problem(run: dict, mode: str, reference: str) -> str | None:
    """Plain words saying why ratios to `reference` cannot be shown in `mode`; None if they can."""
    entry = _entry_named(run, reference)
    if entry is None:
        return f"the reference {reference} is absent from this run: no ratios are shown"
    if not entry.get("available", True):
        why = entry.get("reason") or "no reason given"
        return f"the reference {reference} is unavailable ({why}): no ratios are shown"
    series = group_samples(run.get("samples") or []).get((reference, mode))
    if series is None or not series["rps"]:
        return f"the reference {reference} has no samples in mode {mode}: no ratios are shown for it"
    if min(series["rps"]) <= 0:
        return (f"the reference {reference} answered 0 requests/s in a repetition of mode {mode}: "
                "no ratios are shown for it")
    return None


# --------------------------------------------------------------------------- rows


def _row(entry: dict, series: Series | None, ref_series: Series | None) -> dict:
    """One table row: figures of `series` (None: no samples) and their ratio to the reference's."""
    verify = entry.get("verify") or {}
    startup = _summary(entry.get("startup_ms") or [])
    row = {
        "rank": None,
        "entry": entry.get("name"),
        "language": entry.get("language"),
        "kind": entry.get("kind"),
        "description": entry.get("description"),
        "version": entry.get("version"),
        "available": bool(entry.get("available", True)),
        "reason": None,
        "samples": len(series.reps) if series else 0,
        "artifact_bytes": entry.get("artifact_bytes"),
        "startup_ms": startup.median if startup else None,
        "verify_pass": verify.get("pass"),
        "verify_alt": verify.get("alt"),
        "verify_fail": verify.get("fail"),
        "client_bound": series.client_bound if series else 0,
        "errors": series.error_total if series else 0,
        "non_3xx": series.non_3xx if series else 0,
        "ratio": None, "ratio_lo": None, "ratio_hi": None, "significant": None,
    }
    for key, metric in (("rps", "rps"), ("cpu_us", "cpu_us_per_req")):
        summary = _summary(series[metric]) if series else None
        row[f"{key}_median"] = summary.median if summary else None
        row[f"{key}_lo"] = summary.lo if summary else None
        row[f"{key}_hi"] = summary.hi if summary else None
    for key, metric in (("p50_us", "latency_p50_us"), ("p90_us", "latency_p90_us"),
                        ("p99_us", "latency_p99_us"), ("peak_rss_bytes", "peak_rss_bytes"),
                        ("pss_bytes", "pss_bytes")):
        summary = _summary(series[metric]) if series else None
        row[key] = summary.median if summary else None
    if not row["available"]:
        row["reason"] = entry.get("reason") or "unavailable"
    elif row["rps_median"] is None:
        row["reason"] = "no samples in this mode"
    elif ref_series is not None:
        r = ratio(series["rps"], ref_series["rps"])
        # The reference against itself: 1.0 with its own spread; significance does not apply.
        significant = None if series is ref_series else r.significant
        row.update(ratio=r.median_ratio, ratio_lo=r.lo, ratio_hi=r.hi, significant=significant)
    row["is_reference"] = series is not None and series is ref_series
    return row


def ranked_table(run: dict, mode: str, reference: str = "nginx-lua") -> list[dict]:
    """Rows of one mode ranked by requests/s median, descending; entries without figures last.

    Each row is a flat dict (None where there is no figure): entry, language, kind,
    rps_median/lo/hi, ratio/ratio_lo/ratio_hi/significant (to the reference's requests/s;
    None when there is no usable reference; significant is None on the reference's own row,
    which has is_reference True),
    cpu_us_median/lo/hi (server CPU µs per request), p50_us/p90_us/p99_us (latency medians),
    peak_rss_bytes, pss_bytes (medians), artifact_bytes, startup_ms (median), client_bound
    (repetitions), errors, non_3xx, verify_pass/alt/fail, available, reason, rank.
    """
    groups = group_samples(run.get("samples") or [])
    ref_series = None if reference_problem(run, mode, reference) else groups[(reference, mode)]
    rows = [_row(e, groups.get((e.get("name"), mode)), ref_series) for e in _entries(run)]
    measured = sorted((r for r in rows if r["reason"] is None),
                      key=lambda r: (-r["rps_median"], str(r["entry"])))
    for rank, row in enumerate(measured, start=1):
        row["rank"] = rank
    return measured + [r for r in rows if r["reason"] is not None]


# --------------------------------------------------------------------------- warnings


LATENCY_METRICS = frozenset({"latency_p50_us", "latency_p90_us", "latency_p99_us"})


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _series_warnings(series: Series, reference: str, ref_series: Series | None,
                     explained: frozenset[str] = frozenset()) -> list[str]:
    """Plain-words warnings about one (entry, mode); metrics in `explained` are missing
    for a reason already stated once for the whole mode."""
    out = []
    name, mode, reps = series.entry, series.mode, len(series.reps)
    if series.client_bound:
        out.append(f"the load generator was the bottleneck for {name} in mode {mode} "
                   f"({series.client_bound} of {reps} repetitions): these figures measure wrk, "
                   "not the server; give the load generator more cores")
    if series.error_total:
        kinds = ", ".join(f"{k} {n}" for k, n in series.errors.items() if n)
        out.append(f"{name} in mode {mode} had {_plural(series.error_total, 'socket error')} "
                   f"({kinds}) over {_plural(reps, 'repetition')}")
    if series.non_3xx:
        out.append(f"{name} in mode {mode} gave {_plural(series.non_3xx, 'answer')} that "
                   f"{'was' if series.non_3xx == 1 else 'were'} not 3xx over {_plural(reps, 'repetition')}")
    for metric, count in series.missing.items():
        if count and metric not in explained:
            out.append(f"{name} in mode {mode}: {metric} is missing from {count} of {reps} samples")
    if ref_series is not None and name != reference and series["rps"]:
        r = ratio(series["rps"], ref_series["rps"])
        if not r.significant:
            why = ("the min–max ranges overlap" if len(series["rps"]) >= 2 and len(ref_series["rps"]) >= 2
                   else "fewer than 2 repetitions")
            out.append(f"{name} vs {reference} in mode {mode}: {_fmt_ratio(r.median_ratio, r.lo, r.hi)} "
                       f"is not significant ({why})")
    return out


def warnings(run: dict, reference: str = "nginx-lua") -> list[str]:
    """Everything a reader must know before trusting the figures, in plain words."""
    out = []
    if (run.get("config") or {}).get("quick"):
        out.append("this was a quick run: durations and repetitions are too short to compare entries")
    listed = {e.get("name") for e in run.get("entries") or []}
    for name in dict.fromkeys(s.get("entry") for s in run.get("samples") or []):
        if name not in listed:
            out.append(f"samples name {name}, which is not among the run's entries: its language and kind are unknown")
    groups = group_samples(run.get("samples") or [])
    problems = {mode: reference_problem(run, mode, reference) for mode in _modes(run)}
    for problem in dict.fromkeys(p for p in problems.values() if p):
        out.append(problem)
    notes = {s.get("mode"): s["latency_note"] for s in run.get("samples") or [] if s.get("latency_note")}
    for mode, note in notes.items():
        out.append(f"mode {mode}: {note}")
    for mode in _modes(run):
        ref_series = None if problems[mode] else groups[(reference, mode)]
        explained = LATENCY_METRICS if mode in notes else frozenset()
        for entry in _entries(run):
            series = groups.get((entry.get("name"), mode))
            if series is not None:
                out.extend(_series_warnings(series, reference, ref_series, explained))
    for entry in _entries(run):
        failed = (entry.get("verify") or {}).get("fail") or 0
        if failed:
            out.append(f"{entry.get('name')} failed {_plural(failed, 'conformance case')}")
    return out


# --------------------------------------------------------------------------- formatting


def _fmt_count(value: float | None) -> str:
    """Requests/s and other counts: 150,000."""
    return "–" if value is None else f"{value:,.0f}"


def _fmt_compact(value: float) -> str:
    """Chart labels: 1.5M, 150k, 4.22k, 310, 2.5."""
    if value >= 1e6:
        return f"{value / 1e6:.3g}M"
    if value >= 1e3:
        return f"{value / 1e3:.3g}k"
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def _fmt_us(value: float | None) -> str:
    """Microseconds: 2.10, 19.9, 1,500."""
    if value is None:
        return "–"
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _fmt_ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def _fmt_bytes(value: float | None) -> str:
    """Decimal units: 612 kB, 1.9 MB, 16.0 MB."""
    if value is None:
        return "–"
    if value >= 1e9:
        return f"{value / 1e9:.2f} GB"
    if value >= 1e6:
        return f"{value / 1e6:.1f} MB"
    if value >= 1e3:
        return f"{value / 1e3:.0f} kB" if value >= 1e4 else f"{value / 1e3:.1f} kB"
    return f"{value:.0f} B"


def _fmt_range(median: float | None, lo: float | None, hi: float | None, fmt: Callable) -> str:
    """median (min–max), or – when there is no figure."""
    return "–" if median is None else f"{fmt(median)} ({fmt(lo)}–{fmt(hi)})"


def _fmt_ratio(median: float, lo: float, hi: float) -> str:
    return f"{median:.2f}× ({lo:.2f}–{hi:.2f})"


def _fmt_date(stamp: str | None) -> str:
    try:
        return datetime.fromisoformat(stamp).strftime("%Y-%m-%d %H:%M UTC")
    except (TypeError, ValueError):
        return stamp or "date unknown"


def _text(value) -> str:
    """A data value as one line of text."""
    return "–" if value is None else " ".join(str(value).split())


# --------------------------------------------------------------------------- tables (shared by md and html)


@dataclass
class Table:
    """Cells as plain, unescaped text; each renderer escapes for its own format."""

    headers: list[str]
    rows: list[list[str]]
    numeric: set[int] = field(default_factory=set)  # right-aligned column indices
    wrap: set[int] = field(default_factory=set)  # numeric columns whose text may wrap in HTML
    muted: set[int] = field(default_factory=set)  # row indices shown greyed (no figures)


def _ratio_cell(row: dict, reference: str) -> str:
    if row["is_reference"]:
        return "reference"
    if row["ratio"] is None:
        return "–"
    text = _fmt_ratio(row["ratio"], row["ratio_lo"], row["ratio_hi"])
    return text if row["significant"] else f"{text} not significant"


def mode_table(rows: list[dict], reference: str) -> Table:
    """The ranked table of one mode, as text cells."""
    table = Table(["#", "entry", "language", "kind", "requests/s median (min–max)", f"vs {reference}",
                   "CPU µs/req median (min–max)", "latency p50 / p99 µs", "peak RSS", "PSS",
                   "client-bound reps"], [], numeric={0, 4, 5, 6, 7, 8, 9, 10}, wrap={5})
    for row in rows:
        if row["reason"] is not None:
            table.muted.add(len(table.rows))
            table.rows.append(["–", _text(row["entry"]), _text(row["language"]), _text(row["kind"]),
                               ("unavailable: " if not row["available"] else "") + _text(row["reason"]),
                               "", "", "", "", "", ""])
            continue
        bound = f"{row['client_bound']} of {row['samples']}" if row["client_bound"] else "0"
        table.rows.append([
            str(row["rank"]), _text(row["entry"]), _text(row["language"]), _text(row["kind"]),
            _fmt_range(row["rps_median"], row["rps_lo"], row["rps_hi"], _fmt_count),
            _ratio_cell(row, reference),
            _fmt_range(row["cpu_us_median"], row["cpu_us_lo"], row["cpu_us_hi"], _fmt_us),
            f"{_fmt_count(row['p50_us'])} / {_fmt_count(row['p99_us'])}",
            _fmt_bytes(row["peak_rss_bytes"]), _fmt_bytes(row["pss_bytes"]), bound,
        ])
    return table


def footprint_table(run: dict) -> Table:
    """Size on disk, startup and memory per entry; memory over all samples of all modes."""
    groups = group_samples(run.get("samples") or [])
    table = Table(["entry", "artifact size", "startup ms median (min–max)",
                   "peak RSS median (min–max)", "PSS median (min–max)"], [], numeric={1, 2, 3, 4})
    for entry in _entries(run):
        mine = [s for (name, _), s in groups.items() if name == entry.get("name")]
        cells = [_text(entry.get("name")), _fmt_bytes(entry.get("artifact_bytes"))]
        startup = _summary(entry.get("startup_ms") or [])
        cells.append(_fmt_range(*(startup.median, startup.lo, startup.hi) if startup else (None,) * 3, _fmt_ms))
        for metric in ("peak_rss_bytes", "pss_bytes"):
            s = _summary([v for series in mine for v in series[metric]])
            cells.append(_fmt_range(*(s.median, s.lo, s.hi) if s else (None,) * 3, _fmt_bytes))
        if not entry.get("available", True):
            table.muted.add(len(table.rows))
            cells[1] = "unavailable: " + _text(entry.get("reason") or "no reason given")
        table.rows.append(cells)
    return table


def conformance_table(run: dict) -> Table:
    """The verifier's pass / alt / fail counts per entry."""
    table = Table(["entry", "pass", "alt", "fail"], [], numeric={1, 2, 3})
    for entry in _entries(run):
        verify = entry.get("verify")
        if verify is None:
            table.muted.add(len(table.rows))
            table.rows.append([_text(entry.get("name")), "not verified", "", ""])
        else:
            table.rows.append([_text(entry.get("name"))] + [_text(verify.get(k, 0)) for k in ("pass", "alt", "fail")])
    return table


def entries_table(run: dict) -> Table:
    table = Table(["entry", "language", "kind", "version", "description", "status"], [])
    for entry in _entries(run):
        available = entry.get("available", True)
        if not available:
            table.muted.add(len(table.rows))
        table.rows.append([_text(entry.get(k)) for k in ("name", "language", "kind", "version", "description")]
                          + ["measured" if available else "unavailable: " + _text(entry.get("reason"))])
    return table


# --------------------------------------------------------------------------- header prose


def _tool_version(name: str, version: str) -> str:
    """"wrk 4.1.0" from ("wrk", "4.1.0"), and "go version go1.26" as it is, not doubled."""
    return version if version.lower().startswith(name.lower()) else f"{name} {version}"


def machine_lines(run: dict) -> list[str]:
    m = run.get("machine") or {}
    tools = ", ".join(_tool_version(k, str(v)) for k, v in (m.get("tools") or {}).items()) or "not recorded"
    memory = _fmt_bytes(m.get("memory_bytes")) if m.get("memory_bytes") else "memory not recorded"
    return [f"CPU: {_text(m.get('cpu_model'))}, {_text(m.get('cores'))} cores, {memory}",
            f"System: {_text(m.get('os'))}, kernel {_text(m.get('kernel'))}",
            f"Tools: {_text(tools)}"]


def method_lines(run: dict, reference: str) -> list[str]:
    config = run.get("config") or {}

    def g(key: str) -> str:
        return _text(config.get(key, "?"))

    return [
        f"Each server is pinned to CPU {g('server_cpus')} and the load generator (wrk, "
        f"{g('connections')} connections) to CPU {g('client_cpus')}.",
        f"{g('repetitions')} repetitions of {g('duration_s')} s after a {g('warmup_s')} s warm-up, per entry "
        "and mode, with entries interleaved (A B C A B C …).",
        "Figures are the median with the min–max of the repetitions; CPU µs/req is the server's "
        "utime + stime divided by the requests it answered.",
        f"Ratios compare requests/s to {reference}: the ratio of medians with the range of the extreme "
        "pairings, \"not significant\" when the two ranges overlap.",
    ]


def title(run: dict) -> str:
    return f"renard arena: run {_text(run.get('run_id'))}, {_fmt_date(run.get('started'))}"


# --------------------------------------------------------------------------- markdown


def _md_cell(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "\\|")


def markdown_table(table: Table) -> str:
    align = ["---:" if i in table.numeric else "---" for i in range(len(table.headers))]
    lines = [table.headers, align] + table.rows
    return "\n".join("| " + " | ".join(_md_cell(c) if n != 1 else c for c in line) + " |"
                     for n, line in enumerate(lines))


def render_markdown(run: dict, reference: str = "nginx-lua") -> str:
    out = [f"# {_md_cell(title(run))}", "", "## Machine", ""]
    out += [f"- {_md_cell(line)}" for line in machine_lines(run)]
    out += ["", "## Method", ""] + [f"- {_md_cell(line)}" for line in method_lines(run, reference)]
    found = warnings(run, reference)
    out += ["", "## Warnings", ""] + ([f"- {_md_cell(w)}" for w in found] or ["None."])
    for mode in _modes(run):
        out += ["", f"## Requests per second: {_md_cell(mode)} ({MODE_WORDS.get(mode, 'custom mode')})", ""]
        problem = reference_problem(run, mode, reference)
        if problem:
            out += [f"Note: {_md_cell(problem)}.", ""]
        out.append(markdown_table(mode_table(ranked_table(run, mode, reference), reference)))
    out += ["", "## Footprint", "", markdown_table(footprint_table(run))]
    out += ["", "## Conformance", "", markdown_table(conformance_table(run))]
    out += ["", "## Entries", "", markdown_table(entries_table(run)), ""]
    return "\n".join(out)


# --------------------------------------------------------------------------- svg charts


@dataclass
class Bar:
    """One bar: median with a min–max whisker, in the chart's unit; median None draws the note."""

    series: str  # legend name; picks the colour
    median: float | None
    lo: float | None = None
    hi: float | None = None
    flagged: bool = False  # drawn pale: the load generator limited a repetition
    note: str = ""  # tooltip text, or the text drawn in place of a missing bar


@dataclass
class Group:
    label: str
    bars: list[Bar]


KINDS = ("ours", "peer")  # legend order, hence colours, of the per-entry charts
PALETTE = ("#3b6ea5", "#e07b39", "#4f9a55", "#b8487a")
LABEL_W, PLOT_X, PLOT_W, CHART_W = 150, 160, 440, 760
BAR_H, BAR_GAP, GROUP_GAP = 14, 3, 10


def _nice_ticks(top: float, count: int = 4) -> list[float]:
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


def _svg_text(x: float, y: float, text: str, anchor: str = "start", extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>'
            f"{html.escape(text)}</text>")


def svg_bar_chart(chart_title: str, metric: str, groups: list[Group], fmt: Callable[[float], str],
                  mode: str | None = None, series_order: tuple[str, ...] = ()) -> str:
    """A horizontal bar chart with min–max whiskers, as one self-contained <svg class="chart">.

    Colours follow series_order (so that one name keeps its colour across charts), then the
    order in which other series first appear.
    """
    series = list(dict.fromkeys([*series_order, *(b.series for g in groups for b in g.bars)]))
    colours = {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(series)}
    tops = [v for g in groups for b in g.bars for v in (b.median, b.hi) if v is not None]
    ticks = _nice_ticks(max(tops, default=1.0))
    scale = PLOT_W / ticks[-1]
    top = 30 + (18 if len({b.series for g in groups for b in g.bars}) > 1 or series_order else 0)
    y = top
    body = []
    for group in groups:
        height = len(group.bars) * (BAR_H + BAR_GAP) - BAR_GAP
        body.append(_svg_text(LABEL_W, y + height / 2 + 4, group.label, "end", ' class="label"'))
        for bar in group.bars:
            body.append(_svg_bar(bar, y, scale, colours[bar.series], fmt))
            y += BAR_H + BAR_GAP
        y += GROUP_GAP - BAR_GAP
    axis = [f'<line x1="{PLOT_X + t * scale:.1f}" y1="{top - 4}" '
            f'x2="{PLOT_X + t * scale:.1f}" y2="{y:.1f}" class="grid"/>'
            + _svg_text(PLOT_X + t * scale, y + 14, fmt(t) if t else "0", "middle", ' class="tick"')
            for t in ticks]
    legend = []
    drawn = {b.series for g in groups for b in g.bars}
    if len(drawn) > 1 or series_order:
        x = PLOT_X
        for name in (n for n in series if n in drawn):
            legend.append(f'<rect x="{x}" y="26" width="10" height="10" fill="{colours[name]}"/>'
                          + _svg_text(x + 14, 35, name, extra=' class="tick"'))
            x += 24 + 7 * len(name)
    height = y + 24
    mode_attr = f' data-mode="{html.escape(mode)}"' if mode else ""
    return (f'<svg class="chart" data-metric="{html.escape(metric)}"{mode_attr} role="img" '
            f'xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {CHART_W} {height:.0f}" '
            f'width="{CHART_W}" height="{height:.0f}">'
            f"<title>{html.escape(chart_title)}</title>"
            + _svg_text(0, 16, chart_title, extra=' class="heading"')
            + "".join(legend) + "".join(axis) + "".join(body) + "</svg>")


def _svg_bar(bar: Bar, y: float, scale: float, colour: str, fmt: Callable[[float], str]) -> str:
    """The bar, its whisker and its value label, at top edge y."""
    mid = y + BAR_H / 2
    if bar.median is None:
        return _svg_text(PLOT_X + 4, mid + 4, bar.note or "no figure", extra=' class="missing"')
    width = max(bar.median * scale, 1.0)
    tip = f"{bar.series}: {fmt(bar.median)}" + (f" ({fmt(bar.lo)}–{fmt(bar.hi)})" if bar.lo is not None else "")
    tip += f"; {bar.note}" if bar.note else ""
    parts = [f'<rect x="{PLOT_X}" y="{y:.1f}" width="{width:.1f}" height="{BAR_H}" fill="{colour}"'
             + (' fill-opacity="0.4" stroke="#333" stroke-dasharray="3 2"' if bar.flagged else "")
             + f"><title>{html.escape(tip)}</title></rect>"]
    end = PLOT_X + width
    if bar.lo is not None and bar.hi is not None:
        lo, hi = PLOT_X + bar.lo * scale, PLOT_X + bar.hi * scale
        parts.append(f'<path d="M{lo:.1f} {mid:.1f}H{hi:.1f}M{lo:.1f} {y + 3:.1f}V{y + BAR_H - 3:.1f}'
                     f'M{hi:.1f} {y + 3:.1f}V{y + BAR_H - 3:.1f}" class="whisker"/>')
        end = max(end, hi)
    label = fmt(bar.median) + (" ⚠ client-bound" if bar.flagged else "")
    parts.append(_svg_text(end + 6, mid + 4, label, extra=' class="value"'))
    return "".join(parts)


# --------------------------------------------------------------------------- charts of a run


def _bar(series: Series | None, metric: str, name: str, note: str = "") -> Bar:
    summary = _summary(series[metric]) if series else None
    if summary is None:
        return Bar(name, None, note=note or "no samples")
    return Bar(name, summary.median, summary.lo, summary.hi, flagged=bool(series.client_bound),
               note=note or (f"load generator was the bottleneck in {series.client_bound} of "
                             f"{len(series.reps)} repetitions" if series.client_bound else ""))


def _unavailable_note(row: dict) -> str:
    return ("unavailable: " if not row["available"] else "") + _text(row["reason"])


def rps_chart(run: dict, mode: str, reference: str) -> str:
    groups = group_samples(run.get("samples") or [])
    bars = [Group(_text(r["entry"]), [_bar(groups.get((r["entry"], mode)), "rps", _text(r["kind"]),
                                           _unavailable_note(r) if r["reason"] else "")])
            for r in ranked_table(run, mode, reference)]
    return svg_bar_chart(f"Requests per second, {mode} (median, min–max whiskers)", "rps", bars,
                         _fmt_compact, mode, KINDS)


def latency_chart(run: dict, mode: str, reference: str) -> str:
    groups = group_samples(run.get("samples") or [])
    bars = []
    for row in ranked_table(run, mode, reference):
        if row["reason"] is None:
            series = groups[(row["entry"], mode)]
            bars.append(Group(_text(row["entry"]), [_bar(series, f"latency_{p}_us", p) for p in ("p50", "p90", "p99")]))
    return svg_bar_chart(f"Latency percentiles µs, {mode} (median, min–max whiskers)", "latency", bars,
                         _fmt_compact, mode)


def cpu_chart(run: dict) -> str:
    groups = group_samples(run.get("samples") or [])
    bars = []
    for entry in _entries(run):
        if entry.get("available", True):
            bars.append(Group(_text(entry.get("name")),
                              [_bar(groups.get((entry.get("name"), m)), "cpu_us_per_req", m) for m in _modes(run)]))
    return svg_bar_chart("Server CPU µs per request, lower is better (median, min–max whiskers)",
                         "cpu_us_per_req", bars, _fmt_us)


def rss_chart(run: dict) -> str:
    groups = group_samples(run.get("samples") or [])
    bars = []
    for entry in _entries(run):
        if entry.get("available", True):
            values = [v for (name, _), s in groups.items() if name == entry.get("name") for v in s["peak_rss_bytes"]]
            summary = _summary(values)
            bar = Bar(_text(entry.get("kind")), summary.median, summary.lo, summary.hi) if summary \
                else Bar(_text(entry.get("kind")), None, note="no samples")
            bars.append(Group(_text(entry.get("name")), [bar]))
    return svg_bar_chart("Peak RSS of the process tree, all modes (median, min–max whiskers)",
                         "peak_rss_bytes", bars, _fmt_bytes, series_order=KINDS)


# --------------------------------------------------------------------------- html


CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1d1f;background:#fff;
 max-width:1180px;margin:2em auto;padding:0 1.2em}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:14px}
th,td{border-bottom:1px solid #e3e3e3;padding:.3em .65em;text-align:left;vertical-align:top}
th{background:#f4f5f7;font-weight:600;font-size:13px}th.num{text-align:right}
td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
td.name{white-space:nowrap}td.wrap{white-space:normal;min-width:9em}.scroll{overflow-x:auto}
tr.muted td{color:#888;font-style:italic}
.warnings{background:#fff6dc;border-left:4px solid #d9a400;padding:.4em 1em .4em 2em}
.note{color:#8a5a00}
svg.chart{display:block;max-width:100%;height:auto;margin:1em 0;font-size:12px}
svg .heading{font-weight:600;font-size:13px}svg .label{font-size:12px}svg .tick{fill:#555;font-size:11px}
svg .grid{stroke:#e6e6e6}svg .whisker{stroke:#222;stroke-width:1.2;fill:none}
svg .value{fill:#333;font-size:11px}svg .missing{fill:#888;font-style:italic}
"""


def html_table(table: Table) -> str:
    def cell(tag: str, i: int, text: str) -> str:
        cls = (' class="num wrap"' if i in table.wrap else ' class="num"' if i in table.numeric
               else ' class="name"' if table.headers[i] == "entry" else "")
        return f"<{tag}{cls}>{html.escape(text)}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(table.headers))
    muted = ' class="muted"'
    body = "".join(f"<tr{muted if n in table.muted else ''}>"
                   + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>"
                   for n, row in enumerate(table.rows))
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def render_html(run: dict, reference: str = "nginx-lua") -> str:
    e = html.escape
    found = warnings(run, reference)
    parts = [f"<h1>{e(title(run))}</h1>", "<h2>Machine</h2><ul>"]
    parts += [f"<li>{e(line)}</li>" for line in machine_lines(run)] + ["</ul>", "<h2>Method</h2>"]
    parts += ["<p>" + "<br>".join(e(line) for line in method_lines(run, reference)) + "</p>", "<h2>Warnings</h2>"]
    parts.append('<ul class="warnings">' + "".join(f"<li>{e(w)}</li>" for w in found) + "</ul>"
                 if found else "<p>None.</p>")
    for mode in _modes(run):
        parts.append(f"<h2>Requests per second: {e(mode)} ({e(MODE_WORDS.get(mode, 'custom mode'))})</h2>")
        problem = reference_problem(run, mode, reference)
        if problem:
            parts.append(f'<p class="note">Note: {e(problem)}.</p>')
        parts += [html_table(mode_table(ranked_table(run, mode, reference), reference)),
                  rps_chart(run, mode, reference), latency_chart(run, mode, reference)]
    parts += ["<h2>CPU cost</h2>", cpu_chart(run)]
    parts += ["<h2>Footprint</h2>", html_table(footprint_table(run)), rss_chart(run)]
    parts += ["<h2>Conformance</h2>", html_table(conformance_table(run))]
    parts += ["<h2>Entries</h2>", html_table(entries_table(run))]
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{e(title(run))}</title><style>{CSS}</style></head><body>\n"
            + "\n".join(parts) + "\n</body></html>\n")


def write_reports(run: dict, out_dir: Path, reference: str = "nginx-lua") -> tuple[Path, Path]:
    """Write out_dir/report.md and out_dir/report.html; returns their paths in that order."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    md_path, html_path = out_dir / "report.md", out_dir / "report.html"
    md_path.write_text(render_markdown(run, reference), encoding="utf-8")
    html_path.write_text(render_html(run, reference), encoding="utf-8")
    return md_path, html_path
