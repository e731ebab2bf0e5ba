"""report.html: the report's blocks (sections.py) as one self-contained page (inline CSS and
SVG, no script, no network), every string from the run escaped."""

from __future__ import annotations

import html

from .sections import Block, Chart, Failing, Heading, Lines, Links, OwnReport, Table, Text, Warnings, blocks
from .tables import Part, title
from .view import View
from .warnings import WarningGroup

CSS = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d1d1f;background:#fff;
 max-width:1180px;margin:2em auto;padding:0 1.2em}
h1{font-size:1.6em;margin-bottom:.2em}h2{margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:14px}
th,td{border-bottom:1px solid #e3e3e3;padding:.3em .65em;text-align:left;vertical-align:top;white-space:nowrap}
th{background:#f4f5f7;font-weight:600;font-size:13px}th.num{text-align:right}
td.num{text-align:right;font-variant-numeric:tabular-nums}.scroll{overflow-x:auto}
tr.muted td{color:#888;font-style:italic}
.warnings{background:#fff6dc;border-left:4px solid #d9a400;padding:.4em 1em .4em 2em}
.note{color:#8a5a00}
svg.chart{display:block;width:100%;height:auto;margin:1em 0;font-size:12px}
svg .heading{font-weight:600;font-size:13px}svg .label{font-size:12px}svg .tick{fill:#555;font-size:11px}
svg .grid{stroke:#e6e6e6}svg .whisker{stroke:#222;stroke-width:1.2;fill:none}
svg .value{fill:#333;font-size:11px}svg .missing{fill:#888;font-style:italic}
"""


def table(t: Table) -> str:
    def cell(tag: str, i: int, text: str) -> str:
        cls = ' class="num"' if i in t.numeric else ' class="name"' if t.headers[i] == "entry" else ""
        return f"<{tag}{cls}>{html.escape(text)}</{tag}>"

    head = "".join(cell("th", i, h) for i, h in enumerate(t.headers))
    muted = ' class="muted"'
    body = "".join(
        f"<tr{muted if n in t.muted else ''}>" + "".join(cell("td", i, c) for i, c in enumerate(row)) + "</tr>"
        for n, row in enumerate(t.rows)
    )
    return f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


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


def block(b: Block) -> list[str]:
    """A block's lines of HTML (a list opens on the line of the heading before it)."""
    e = html.escape
    if isinstance(b, Heading):
        return [f"<h{b.level}>{e(b.text)}</h{b.level}>"]
    if isinstance(b, Text):
        return [f'<p class="note">{e(b.text)}</p>' if b.note else f"<p>{e(b.text)}</p>"]
    if isinstance(b, Links):
        links = ", ".join(f'<a href="{e(href)}">{e(label)}</a>' for label, href in b.links)
        return [f"<p>{e(b.before)}{links}.</p>"]
    if isinstance(b, Lines):
        if b.paragraph:
            return ["<p>" + "<br>".join(e(line) for line in b.lines) + "</p>"]
        return ["<ul>", *(f"<li>{e(line)}</li>" for line in b.lines), "</ul>"]
    if isinstance(b, Chart):
        return [b.draw()]
    if isinstance(b, Warnings):
        return [warnings_list(b.groups)]
    if isinstance(b, Failing):
        items = "".join(f"<li>{e(f['section'])} <code>{e(f['name'])}</code>: {e(f['detail'])}</li>" for f in b.failures)
        return [f"<details><summary>{e(b.entry)}: {len(b.failures)} failing cases</summary><ul>{items}</ul></details>"]
    if isinstance(b, OwnReport):
        return [f'<p>{e(b.method)} Its own report: <a href="{e(b.href)}">{e(b.href)}</a>.</p>']
    return [table(b)]


def render_blocks(shown: list[Block]) -> list[str]:
    """The blocks' lines of HTML, for page()."""
    parts: list[str] = []
    for b in shown:
        lines = block(b)
        if lines[0] == "<ul>" and parts:
            parts[-1] += lines.pop(0)
        parts += lines
    return parts


def render(view: View, loads: list[Part] = ()) -> str:
    """loads: the latency and sweep measurements written into this run's directory."""
    return page(title(view), render_blocks(blocks(view, loads)))


def page(heading: str, parts: list[str]) -> str:
    """A whole document: heading (plain text) as its <title>, parts (HTML) as its body."""
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(heading)}</title><style>{CSS}</style></head><body>\n"
        + "\n".join(parts)
        + "\n</body></html>\n"
    )
