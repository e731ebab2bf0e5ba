"""report.html: the view as one self-contained page (inline CSS and SVG, no script, no
network), every string from the run escaped."""

from __future__ import annotations

import html

from . import svg
from .tables import (
    FAILED_WORDS,
    INSTRUCTIONS_WORDS,
    Part,
    Section,
    Table,
    conformance_table,
    entries_table,
    failed_table,
    failing_cases,
    footprint_table,
    instruction_profiles,
    instructions_table,
    machine_lines,
    method_lines,
    mode_heading,
    mode_table,
    section_links,
    section_table,
    title,
)
from .view import View
from .warnings import WarningGroup, grouped

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


def table(t: Table) -> str:
    def cell(tag: str, i: int, text: str) -> str:
        cls = (
            ' class="num wrap"'
            if i in t.wrap
            else ' class="num"'
            if i in t.numeric
            else ' class="name"'
            if t.headers[i] == "entry"
            else ""
        )
        return f"<{tag}{cls}>{html.escape(text)}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(t.headers))
    muted = ' class="muted"'
    body = "".join(
        f"<tr{muted if n in t.muted else ''}>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>"
        for n, row in enumerate(t.rows)
    )
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def sections(parts: list[Section], level: int) -> list[str]:
    """Each section as a heading of that level, its table and its charts."""
    return [x for s in parts for x in (f"<h{level}>{html.escape(s.heading)}</h{level}>", table(s.table), *s.charts)]


def load_part(part: Part) -> list[str]:
    """A latency or sweep measurement of the run: heading, method, link, its sections."""
    e = html.escape
    own = f'Its own report: <a href="{e(part.href)}">{e(part.href)}</a>.'
    return [f"<h2>{e(part.heading)}</h2>", f"<p>{e(part.method)} {own}</p>", *sections(part.sections, 3)]


def warnings_list(groups: list[WarningGroup]) -> str:
    """One line per kind of warning, folded (<details>): its first sentence, for whom, and the
    other sentences of its kind folded again."""
    if not groups:
        return "<p>None.</p>"
    e = html.escape
    items = []
    for g in groups:
        item = e(g.example)
        if len(g.sentences) > 1:
            rest = "".join(f"<li>{e(s)}</li>" for s in g.sentences[1:])
            item += (
                f"<details><summary>{len(g.sentences) - 1} more like it: {e(g.applies_to())}</summary>"
                f"<ul>{rest}</ul></details>"
            )
        items.append(f"<li>{item}</li>")
    count = sum(len(g.sentences) for g in groups)
    summary = f"{len(groups)} kinds of warning ({count} in all): read them before trusting a figure"
    return f'<details class="warnings"><summary>{e(summary)}</summary><ul>{"".join(items)}</ul></details>'


def render(view: View, loads: list[Part] = ()) -> str:
    """loads: the latency and sweep measurements written into this run's directory."""
    e = html.escape
    parts = [f"<h1>{e(title(view))}</h1>"]
    for mv in view.modes:  # the answer first: each mode's ranking, its table and charts
        parts += [f"<h2>{e(mode_heading(mv))}</h2>", f"<p>{e(mv.ranks_on)}</p>"]
        if mv.reference_problem:
            parts.append(f'<p class="note">Note: {e(mv.reference_problem)}.</p>')
        parts += [table(mode_table(view, mv)), svg.rps_chart(mv)]
        if mv.mode.timed:
            parts.append(svg.latency_chart(mv))
    parts += ["<h2>CPU cost</h2>", svg.efficiency_chart(view), svg.cpu_chart(view), "<h2>Machine</h2><ul>"]
    parts += [f"<li>{e(line)}</li>" for line in machine_lines(view)] + ["</ul>", "<h2>Method</h2>"]
    parts += ["<p>" + "<br>".join(e(line) for line in method_lines(view)) + "</p>", "<h2>Warnings</h2>"]
    parts.append(warnings_list(grouped(view)))
    failed = failed_table(view)
    if failed is not None:
        parts += ["<h2>Failed samples</h2>", f"<p>{e(FAILED_WORDS)}</p>", table(failed)]
    counts = instructions_table(view)
    if counts is not None:
        parts += ["<h2>Instructions per request</h2>", f"<p>{e(INSTRUCTIONS_WORDS)}</p>", table(counts)]
        links = ", ".join(f'<a href="{e(href)}">{e(label)}</a>' for label, href in instruction_profiles(view))
        parts += [f"<p>Top functions (callgrind_annotate): {links}.</p>"] if links else []
    for part in loads:
        parts += load_part(part)
    parts += ["<h2>Footprint</h2>", table(footprint_table(view)), svg.rss_chart(view)]
    parts += ["<h2>Conformance</h2>", table(conformance_table(view))]
    matrix = section_table(view)
    if matrix is not None:
        links = ", ".join(f'<a href="{e(href)}">{e(name)}</a>' for name, href in section_links())
        parts += [
            "<h3>By section of the spec</h3>",
            f"<p>Each cell: pass · allowed alternative · fail. Rules: {links}.</p>",
        ]
        parts.append(table(matrix))
        for entry, failures in failing_cases(view):
            items = "".join(
                f"<li>{e(f['section'])} <code>{e(f['name'])}</code>: {e(f['detail'])}</li>" for f in failures
            )
            parts.append(
                f"<details><summary>{e(entry)}: {len(failures)} failing cases</summary><ul>{items}</ul></details>"
            )
    parts += ["<h2>Entries</h2>", table(entries_table(view))]
    return page(title(view), parts)


def page(heading: str, parts: list[str]) -> str:
    """A whole document: heading (plain text) as its <title>, parts (HTML) as its body."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(heading)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(parts)
        + "\n</body></html>\n"
    )
