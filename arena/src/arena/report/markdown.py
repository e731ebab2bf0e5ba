"""report.md: the view as GitHub Markdown (every string from the run escaped)."""

from __future__ import annotations

import html

from .tables import (
    INSTRUCTIONS_WORDS,
    Table,
    conformance_table,
    entries_table,
    failing_cases,
    footprint_table,
    instruction_profiles,
    instructions_table,
    machine_lines,
    method_lines,
    mode_table,
    section_links,
    section_table,
    title,
)
from .view import View


def _cell(text: str) -> str:
    return html.escape(text, quote=False).replace("|", "\\|")


def table(t: Table) -> str:
    align = ["---:" if i in t.numeric else "---" for i in range(len(t.headers))]
    lines = [t.headers, align, *t.rows]
    return "\n".join("| " + " | ".join(_cell(c) if n != 1 else c for c in line) + " |" for n, line in enumerate(lines))


def _sections(view: View) -> list[str]:
    matrix = section_table(view)
    if matrix is None:
        return []
    links = ", ".join(f"[{name}]({href})" for name, href in section_links())
    out = ["", "### By section of the spec", "", f"Each cell: pass · allowed alternative · fail. Rules: {links}.", ""]
    out.append(table(matrix))
    for entry, failures in failing_cases(view):
        out += ["", f"<details><summary>{_cell(entry)}: {len(failures)} failing cases</summary>", ""]
        out += [f"- {_cell(f['section'])} `{_cell(f['name'])}`: {_cell(f['detail'])}" for f in failures]
        out += ["", "</details>"]
    return out


def render(view: View, companions: list[tuple[str, str]] = ()) -> str:
    """companions: (relative href, words) of the other reports of this run (latency, sweep)."""
    out = [f"# {_cell(title(view))}", "", "## Machine", ""]
    out += [f"- {_cell(line)}" for line in machine_lines(view)]
    out += ["", "## Method", ""] + [f"- {_cell(line)}" for line in method_lines(view)]
    out += ["", "## Warnings", ""] + ([f"- {_cell(w)}" for w in view.warnings] or ["None."])
    for mv in view.modes:
        out += ["", f"## Requests per second: {_cell(mv.mode.name)} ({_cell(mv.mode.words)})", ""]
        if mv.reference_problem:
            out += [f"Note: {_cell(mv.reference_problem)}.", ""]
        out.append(table(mode_table(view, mv)))
    counts = instructions_table(view)
    if counts is not None:
        out += ["", "## Instructions per request", "", _cell(INSTRUCTIONS_WORDS), "", table(counts)]
        links = ", ".join(f"[{_cell(label)}]({href})" for label, href in instruction_profiles(view))
        out += ["", f"Top functions (callgrind_annotate): {links}."] if links else []
    if companions:
        out += ["", "## Latency and saturation", ""]
        out += [
            f"- [{_cell(words)}]({href}); its figures are in `{href.split('/')[0]}.json` beside it"
            for href, words in companions
        ]
    out += ["", "## Footprint", "", table(footprint_table(view))]
    out += ["", "## Conformance", "", table(conformance_table(view))]
    out += _sections(view)
    out += ["", "## Entries", "", table(entries_table(view)), ""]
    return "\n".join(out)
