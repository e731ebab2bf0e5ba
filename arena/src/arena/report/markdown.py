"""report.md: the view as GitHub Markdown (every string from the run escaped)."""

from __future__ import annotations

import html

from .tables import (
    Table,
    conformance_table,
    entries_table,
    footprint_table,
    machine_lines,
    method_lines,
    mode_table,
    title,
)
from .view import View


def _cell(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "\\|")


def table(t: Table) -> str:
    align = ["---:" if i in t.numeric else "---" for i in range(len(t.headers))]
    lines = [t.headers, align, *t.rows]
    return "\n".join("| " + " | ".join(_cell(c) if n != 1 else c for c in line) + " |" for n, line in enumerate(lines))


def render(view: View) -> str:
    out = [f"# {_cell(title(view))}", "", "## Machine", ""]
    out += [f"- {_cell(line)}" for line in machine_lines(view)]
    out += ["", "## Method", ""] + [f"- {_cell(line)}" for line in method_lines(view)]
    out += ["", "## Warnings", ""] + ([f"- {_cell(w)}" for w in view.warnings] or ["None."])
    for mv in view.modes:
        out += ["", f"## Requests per second: {_cell(mv.mode.name)} ({_cell(mv.mode.words)})", ""]
        if mv.reference_problem:
            out += [f"Note: {_cell(mv.reference_problem)}.", ""]
        out.append(table(mode_table(view, mv)))
    out += ["", "## Footprint", "", table(footprint_table(view))]
    out += ["", "## Conformance", "", table(conformance_table(view))]
    out += ["", "## Entries", "", table(entries_table(view)), ""]
    return "\n".join(out)
