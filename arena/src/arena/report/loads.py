"""The reports of `arena sweep` and `arena latency`: report.md (tables) and report.html
(tables and line charts), beside their JSON, every string from the results escaped."""

from __future__ import annotations

import html
from pathlib import Path

from . import lines
from .html import page as html_page
from .html import table as html_table
from .markdown import table as md_table
from .tables import Table

PERCENTILES = ("p50", "p90", "p99", "p99.9", "p99.99", "max")


def _us(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:,.0f} µs" if v < 10_000 else f"{v / 1000:,.1f} ms"


def _write(out_dir: Path, title: str, intro: str, sections: list[tuple[str, Table, list[str]]]) -> tuple[Path, Path]:
    """sections: (heading, table, svg charts)."""
    md = [f"# {html.escape(title, quote=False)}", "", html.escape(intro, quote=False)]
    page = [f"<h1>{html.escape(title)}</h1>", f"<p>{html.escape(intro)}</p>"]
    for heading, tbl, charts in sections:
        md += ["", f"## {html.escape(heading, quote=False)}", "", md_table(tbl)]
        page += [f"<h2>{html.escape(heading)}</h2>", html_table(tbl), *charts]
    md_path, html_path = out_dir / "report.md", out_dir / "report.html"
    md_path.write_text("\n".join(md) + "\n", encoding="utf-8")
    html_path.write_text(html_page(title, page), encoding="utf-8")
    return md_path, html_path


def sweep_report(sweeps: list, out_dir: Path, intro: str) -> tuple[Path, Path]:
    summary = Table(["entry", "knee", "best requests/s", "at connections", "steps"], [], numeric={2, 3, 4})
    for s in sweeps:
        best = max(s.steps, key=lambda st: st.rps, default=None)
        summary.rows.append(
            [
                s.entry,
                s.knee_words() + (f"; stopped: {s.error}" if s.error else ""),
                f"{best.rps:,.0f}" if best else "–",
                str(best.connections) if best else "–",
                str(len(s.steps)),
            ]
        )
    sections = [("Knee per entry", summary, [])]
    ticks = [(s.connections, str(s.connections)) for s in max(sweeps, key=lambda s: len(s.steps)).steps]
    charts = (
        [
            lines.chart(
                "requests/s against concurrency",
                [lines.Line(s.entry, [(st.connections, st.rps) for st in s.steps]) for s in sweeps],
                ticks,
                "requests/s",
                "connections",
                x_log=True,
                y_unit=lambda v: f"{v / 1000:,.0f}k" if v >= 1000 else f"{v:,.0f}",
            ),
            lines.chart(
                "p99 latency against concurrency",
                [lines.Line(s.entry, [(st.connections, st.p99_us) for st in s.steps]) for s in sweeps],
                ticks,
                "p99 (µs, log)",
                "connections",
                x_log=True,
                y_log=True,
                y_unit=_us,
            ),
        ]
        if any(s.steps for s in sweeps)
        else []
    )
    for s in sweeps:
        t = Table(["connections", "requests/s", "p50", "p99", "max", "socket errors"], [], numeric={0, 1, 2, 3, 4, 5})
        for st in s.steps:
            t.rows.append(
                [str(st.connections), f"{st.rps:,.0f}", _us(st.p50_us), _us(st.p99_us), _us(st.max_us), str(st.errors)]
            )
        sections.append((s.entry, t, []))
    sections[0] = (sections[0][0], sections[0][1], charts)
    return _write(out_dir, "renard arena: saturation sweep", intro, sections)


def latency_report(results: list, out_dir: Path, intro: str) -> tuple[Path, Path]:
    summary = Table(
        ["entry", "capacity requests/s", "p99 passes 1 ms at", "p99 passes 10 ms at"], [], numeric={1, 2, 3}
    )
    sections = [("Where p99 passes 1 ms and 10 ms", summary, [])]
    for r in results:
        summary.rows.append([r.entry, f"{r.capacity:,.0f}", r.passes_words(1_000), r.passes_words(10_000)])
        t = Table(["rate", "achieved requests/s", *PERCENTILES, "non-302"], [], numeric=set(range(1, 9)))
        for p in r.points:
            t.rows.append(
                [
                    f"{p.share:.0%} ({p.rate:,.0f}/s)",
                    f"{p.achieved:,.0f}",
                    *(_us(p.latency_us.get(k)) for k in PERCENTILES),
                    str(p.failed),
                ]
            )
        chart = (
            lines.chart(
                f"{r.entry}: latency by percentile at a fixed rate",
                [lines.Line(f"{p.share:.0%} of capacity", p.curve()) for p in r.points],
                [
                    (1 / (1 - q), label)
                    for q, label in ((0.5, "50%"), (0.9, "90%"), (0.99, "99%"), (0.999, "99.9%"), (0.9999, "99.99%"))
                ],
                "latency (log)",
                "percentile",
                x_log=True,
                y_log=True,
                y_unit=_us,
            )
            if r.points
            else ""
        )
        sections.append((r.entry, t, [chart]))
    return _write(out_dir, "renard arena: latency at fixed rates", intro, sections)
