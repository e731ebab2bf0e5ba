"""The report's model: what report.md and report.html show, in order, as a list of blocks built
once (blocks()); markdown.py and html.py each walk it and write their format. Every string is
plain, unescaped text: each renderer escapes it. Charts are SVG drawn on demand, in HTML only;
a heading over charts alone is left out of Markdown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

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


@dataclass
class Heading:
    level: int  # 1: the title
    text: str


@dataclass
class Text:
    """A paragraph; note: shown as a caution in HTML."""

    text: str
    note: bool = False


@dataclass
class Links:
    """A paragraph: before, the links (label, href) joined by ", ", then "."."""

    before: str
    links: list[tuple[str, str]]


@dataclass
class Lines:
    """Lines of one kind: a bulleted list (HTML: as one paragraph of lines when paragraph)."""

    lines: list[str]
    paragraph: bool = False


@dataclass
class Chart:
    draw: Callable[[], str]  # the SVG element


@dataclass
class Warnings:
    groups: list[WarningGroup]


@dataclass
class Failing:
    """One entry's failing conformance cases, folded: {section, name, detail} each."""

    entry: str
    failures: list[dict[str, str]]


@dataclass
class OwnReport:
    """A load measurement's method in words and the link to its own report (with its charts)."""

    method: str
    href: str


Block = Heading | Text | Links | Lines | Chart | Warnings | Failing | OwnReport | Table


def blocks(view: View, loads: list[Part] = ()) -> list[Block]:
    """The report in order: the answer first (each mode's ranking), then how it was measured,
    its warnings and the rest. loads: the latency and sweep measurements of this run."""
    out: list[Block] = [Heading(1, title(view))]
    for mv in view.modes:
        out += [Heading(2, mode_heading(mv)), Text(mv.ranks_on)]
        if mv.reference_problem:
            out.append(Text(f"Note: {mv.reference_problem}.", note=True))
        out += [mode_table(view, mv), Chart(lambda mv=mv: svg.rps_chart(mv))]
        if mv.mode.timed:
            out.append(Chart(lambda mv=mv: svg.latency_chart(mv)))
    out += [Heading(2, "CPU cost"), Chart(lambda: svg.efficiency_chart(view)), Chart(lambda: svg.cpu_chart(view))]
    out += [Heading(2, "Machine"), Lines(machine_lines(view)), Heading(2, "Method")]
    out += [Lines(method_lines(view), paragraph=True), Heading(2, "Warnings"), Warnings(grouped(view))]
    failed = failed_table(view)
    if failed is not None:
        out += [Heading(2, "Failed samples"), Text(FAILED_WORDS), failed]
    counts = instructions_table(view)
    if counts is not None:
        out += [Heading(2, "Instructions per request"), Text(INSTRUCTIONS_WORDS), counts]
        profiles = instruction_profiles(view)
        out += [Links("Top functions (callgrind_annotate): ", profiles)] if profiles else []
    for part in loads:
        out += [Heading(2, part.heading), OwnReport(part.method, part.href), *sections(part.sections, 3)]
    out += [Heading(2, "Footprint"), footprint_table(view), Chart(lambda: svg.rss_chart(view))]
    out += [Heading(2, "Conformance"), conformance_table(view)]
    matrix = section_table(view)
    if matrix is not None:
        words = "Each cell: pass · allowed alternative · fail. Rules: "
        out += [Heading(3, "By section of the spec"), Links(words, section_links()), matrix]
        out += [Failing(entry, failures) for entry, failures in failing_cases(view)]
    return out + [Heading(2, "Entries"), entries_table(view)]


def sections(parts: list[Section], level: int) -> list[Block]:
    """Each section as a heading of that level, its table and its charts."""
    return [b for s in parts for b in (Heading(level, s.heading), s.table, *(Chart(lambda c=c: c) for c in s.charts))]
