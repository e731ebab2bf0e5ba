"""report.md: the report's blocks (sections.py) as GitHub Markdown, every string from the run
escaped; charts are HTML's alone."""

from __future__ import annotations

import html

from .sections import Block, Chart, Failing, Heading, Lines, Links, OwnReport, Table, Text, Warnings, blocks
from .tables import Part
from .view import View
from .warnings import WarningGroup


def cell(text: str) -> str:
    """Plain text escaped for Markdown: markup and table pipes."""
    return html.escape(text, quote=False).replace("|", "\\|")


def table(t: Table) -> str:
    align = ["---:" if i in t.numeric else "---" for i in range(len(t.headers))]
    lines = [t.headers, align, *t.rows]
    return "\n".join("| " + " | ".join(cell(c) if n != 1 else c for c in line) + " |" for n, line in enumerate(lines))


def warning_line(group: WarningGroup) -> str:
    """A kind of warning in one line: its first sentence, and how many more, for whom."""
    more = len(group.sentences) - 1
    if not more:
        return group.example
    return f"{group.example} (and {more} more like it; in all: {group.applies_to()})"


def block(b: Block) -> str:
    if isinstance(b, Heading):
        return f"{'#' * b.level} {cell(b.text)}"
    if isinstance(b, Text):
        return cell(b.text)
    if isinstance(b, Links):
        return cell(b.before) + ", ".join(f"[{cell(label)}]({href})" for label, href in b.links) + "."
    if isinstance(b, Lines):
        return "\n".join(f"- {cell(line)}" for line in b.lines)
    if isinstance(b, Warnings):
        return "\n".join(f"- {cell(warning_line(g))}" for g in b.groups) or "None."
    if isinstance(b, Failing):
        items = "\n".join(f"- {cell(f['section'])} `{cell(f['name'])}`: {cell(f['detail'])}" for f in b.failures)
        return f"<details><summary>{cell(b.entry)}: {len(b.failures)} failing cases</summary>\n\n{items}\n\n</details>"
    if isinstance(b, OwnReport):
        own = f"Its own report, with the charts: [{cell(b.href)}]({b.href})."
        return " ".join(x for x in (cell(b.method), own) if x)
    return table(b)


def render_blocks(shown: list[Block]) -> str:
    """The blocks one after the other, a blank line between two; a heading left with nothing
    under it once the charts are left out (the next is a heading of its rank or higher) is
    left out too."""
    kept = [b for b in shown if not isinstance(b, Chart)]
    kept = [
        b
        for i, b in enumerate(kept)
        if not isinstance(b, Heading)
        or (i + 1 < len(kept) and not (isinstance(kept[i + 1], Heading) and kept[i + 1].level <= b.level))
    ]
    return "\n\n".join(block(b) for b in kept) + "\n"


def render(view: View, loads: list[Part] = ()) -> str:
    """loads: the latency and sweep measurements written into this run's directory."""
    return render_blocks(blocks(view, loads))
