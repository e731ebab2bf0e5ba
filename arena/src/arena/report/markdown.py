"""report.md: the view as GitHub Markdown (every string from the run escaped)."""

from __future__ import annotations

import html

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


def cell(text: str) -> str:
    """Plain text escaped for Markdown: markup and table pipes."""
    return html.escape(text, quote=False).replace("|", "\\|")


def table(t: Table) -> str:
    align = ["---:" if i in t.numeric else "---" for i in range(len(t.headers))]
    lines = [t.headers, align, *t.rows]
    return "\n".join("| " + " | ".join(cell(c) if n != 1 else c for c in line) + " |" for n, line in enumerate(lines))


def _sections(view: View) -> list[str]:
    matrix = section_table(view)
    if matrix is None:
        return []
    links = ", ".join(f"[{name}]({href})" for name, href in section_links())
    out = ["", "### By section of the spec", "", f"Each cell: pass · allowed alternative · fail. Rules: {links}.", ""]
    out.append(table(matrix))
    for entry, failures in failing_cases(view):
        out += ["", f"<details><summary>{cell(entry)}: {len(failures)} failing cases</summary>", ""]
        out += [f"- {cell(f['section'])} `{cell(f['name'])}`: {cell(f['detail'])}" for f in failures]
        out += ["", "</details>"]
    return out


def sections(parts: list[Section], level: int) -> list[str]:
    """Each section as a heading of that level and its table (charts are HTML's alone)."""
    out = []
    for s in parts:
        out += ["", f"{'#' * level} {cell(s.heading)}", "", table(s.table)]
    return out


def load_part(part: Part) -> list[str]:
    """A latency or sweep measurement of the run: heading, method, link, its sections."""
    own = f"Its own report, with the charts: [{cell(part.href)}]({part.href})."
    return ["", f"## {cell(part.heading)}", "", " ".join(x for x in (cell(part.method), own) if x)] + sections(
        part.sections, 3
    )


def warning_line(group: WarningGroup) -> str:
    """A kind of warning in one line: its first sentence, and how many more, for whom."""
    more = len(group.sentences) - 1
    if not more:
        return group.example
    return f"{group.example} (and {more} more like it; in all: {group.applies_to()})"


def render(view: View, loads: list[Part] = ()) -> str:
    """loads: the latency and sweep measurements written into this run's directory."""
    out = [f"# {cell(title(view))}"]
    for mv in view.modes:  # the answer first: each mode's ranking
        out += ["", f"## {cell(mode_heading(mv))}", "", cell(mv.ranks_on), ""]
        if mv.reference_problem:
            out += [f"Note: {cell(mv.reference_problem)}.", ""]
        out.append(table(mode_table(view, mv)))
    out += ["", "## Machine", ""] + [f"- {cell(line)}" for line in machine_lines(view)]
    out += ["", "## Method", ""] + [f"- {cell(line)}" for line in method_lines(view)]
    out += ["", "## Warnings", ""] + ([f"- {cell(warning_line(g))}" for g in grouped(view)] or ["None."])
    failed = failed_table(view)
    if failed is not None:
        out += ["", "## Failed samples", "", cell(FAILED_WORDS), "", table(failed)]
    counts = instructions_table(view)
    if counts is not None:
        out += ["", "## Instructions per request", "", cell(INSTRUCTIONS_WORDS), "", table(counts)]
        links = ", ".join(f"[{cell(label)}]({href})" for label, href in instruction_profiles(view))
        out += ["", f"Top functions (callgrind_annotate): {links}."] if links else []
    for part in loads:
        out += load_part(part)
    out += ["", "## Footprint", "", table(footprint_table(view))]
    out += ["", "## Conformance", "", table(conformance_table(view))]
    out += _sections(view)
    out += ["", "## Entries", "", table(entries_table(view)), ""]
    return "\n".join(out)
