"""The report's model: what report.md and report.html show, in order, as a list of blocks built
once (blocks()); markdown.py and html.py each walk it and write their format. Every string is
plain, unescaped text: each renderer escapes it. Charts are SVG drawn on demand, in HTML only;
a heading over charts alone is left out of Markdown."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from . import svg, tables
from .readme import CAPPED
from .tables import Table
from .view import ModeView, View
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


def blocks(view: View, loads: list[tables.Part] = ()) -> list[Block]:
    """The report in order: the answer first (the README's ranking, its tiers, the price of the
    idiom, then each other mode's ranking), then how it was measured, its warnings and the rest.
    loads: the latency and sweep measurements of this run."""
    out: list[Block] = [Heading(1, tables.title(view))]
    # The README's ranking first (capped keep-alive), with its tiers and the price of the idiom;
    # then every other mode in the run's order.
    lead = next((mv for mv in view.modes if mv.mode.name == CAPPED), None)
    if lead is not None:
        tiers = [Text("Its tiers, each entry with its rank:"), Lines(tables.tier_lines(lead))]
        out += [Heading(2, tables.ranking_heading(lead)), *mode_blocks(view, lead, tiers)]
    prices = tables.idiom_table(view)
    if prices is not None:
        out += [Heading(2, "The price of the idiom: production ÷ tuned CPU per request"), Text(tables.IDIOM_WORDS)]
        out.append(prices)
    for mv in view.modes:
        if mv is not lead:
            out += [Heading(2, tables.mode_heading(mv)), *mode_blocks(view, mv)]
    out += [Heading(2, "CPU cost"), Chart(lambda: svg.efficiency_chart(view)), Chart(lambda: svg.cpu_chart(view))]
    out += [Heading(2, "Machine"), Lines(tables.machine_lines(view)), Heading(2, "Method")]
    out += [Lines(tables.method_lines(view), paragraph=True), Heading(2, "Warnings"), Warnings(grouped(view))]
    failed = tables.failed_table(view)
    if failed is not None:
        out += [Heading(2, "Failed samples"), Text(tables.FAILED_WORDS), failed]
    counts = tables.instructions_table(view)
    if counts is not None:
        out += [Heading(2, "Instructions per request"), Text(tables.INSTRUCTIONS_WORDS), counts]
        profiles = tables.instruction_profiles(view)
        out += [Links("Top functions (callgrind_annotate): ", profiles)] if profiles else []
    for part in loads:
        out += [Heading(2, part.heading), OwnReport(part.method, part.href), *sections(part.sections, 3)]
    out += [Heading(2, "Footprint"), tables.footprint_table(view), Chart(lambda: svg.rss_chart(view))]
    out += [Heading(2, "Conformance"), tables.conformance_table(view)]
    matrix = tables.section_table(view)
    if matrix is not None:
        words = "Each cell: pass · allowed alternative · fail. Rules: "
        out += [Heading(3, "By section of the spec"), Links(words, tables.section_links()), matrix]
        out += [Failing(entry, failures) for entry, failures in tables.failing_cases(view)]
    return out + [Heading(2, "Entries"), tables.entries_table(view)]


def mode_blocks(view: View, mv: ModeView, after_table: list[Block] = ()) -> list[Block]:
    """A mode's ranking under its heading: what it ranks on, its table (then after_table), its charts."""
    out: list[Block] = [Text(mv.ranks_on)]
    if mv.reference_problem:
        out.append(Text(f"Note: {mv.reference_problem}.", note=True))
    out += [tables.mode_table(view, mv), *after_table, Chart(lambda: svg.rps_chart(mv, view))]
    if mv.mode.timed:
        out.append(Chart(lambda: svg.latency_chart(mv)))
    return out


def sections(parts: list[tables.Section], level: int) -> list[Block]:
    """Each section as a heading of that level, its table and its charts."""
    return [b for s in parts for b in (Heading(level, s.heading), s.table, *(Chart(lambda c=c: c) for c in s.charts))]
