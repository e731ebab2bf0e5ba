"""How a figure is written, for every output (console, Markdown, HTML, charts): one set of
rules, so that a row reads the same wherever it is shown."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from ..analysis.stats import Summary
from .view import Row, fmt_paired

NONE = "–"  # no figure


def count(value: float | None) -> str:
    """Requests/s and other counts: 150,000."""
    return NONE if value is None else f"{value:,.0f}"


def compact(value: float) -> str:
    """Chart labels: 1.5M, 150k, 4.22k, 310, 2.5."""
    if value >= 1e6:
        return f"{value / 1e6:.3g}M"
    if value >= 1e3:
        return f"{value / 1e3:.3g}k"
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def us(value: float | None) -> str:
    """Microseconds: 2.10, 19.9, 1,500."""
    if value is None:
        return NONE
    return f"{value:.2f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def ms(value: float | None) -> str:
    return NONE if value is None else f"{value:.1f}" if value < 100 else f"{value:,.0f}"


def size(value: float | None) -> str:
    """Bytes in decimal units: 612 kB, 1.9 MB, 16.0 MB."""
    if value is None:
        return NONE
    if value >= 1e9:
        return f"{value / 1e9:.2f} GB"
    if value >= 1e6:
        return f"{value / 1e6:.1f} MB"
    if value >= 1e3:
        return f"{value / 1e3:.0f} kB" if value >= 1e4 else f"{value / 1e3:.1f} kB"
    return f"{value:.0f} B"


def spread(summary: Summary | None, fmt: Callable[[float | None], str]) -> str:
    """median (min–max), or – when there is no figure."""
    return NONE if summary is None else f"{fmt(summary.median)} ({fmt(summary.lo)}–{fmt(summary.hi)})"


def date(stamp: str) -> str:
    try:
        return datetime.fromisoformat(stamp).strftime("%Y-%m-%d %H:%M UTC")
    except ValueError:
        return stamp


def text(value) -> str:
    """A data value as one line of text."""
    return NONE if value is None else " ".join(str(value).split())


def ratio_cell(row: Row) -> str:
    if row.is_reference:
        return "reference"
    if row.ratio is None:
        return NONE
    return fmt_paired(row.ratio) + ("" if row.ratio.significant else " not significant")


def floor_cell(row: Row) -> str:
    """The share of its own floor's figure, pair by pair, with its interval and the floor named:
    0.94 [0.81–1.05] floor not significant."""
    if row.entry.is_floor:
        return "floor"
    r = row.of_floor
    if r is None:
        return NONE
    return f"{fmt_paired(r)} {row.floor.name}" + ("" if r.significant else " not significant")


def efficiency(row: Row) -> str:
    """Requests per server CPU-second: 1e6 ÷ the median CPU µs per request (Row.cpu)."""
    cpu = row.cpu
    return NONE if cpu is None or cpu.median <= 0 else count(1e6 / cpu.median)


def instructions_cell(row: Row) -> str:
    """Instructions per request and the ratio to its own floor's: 690 (1.32× floor)."""
    if row.instructions is None:
        return NONE
    mine = row.instructions_of_floor
    of_floor = "" if mine is None or row.entry.is_floor else f" ({mine:.2f}× {row.floor.name})"
    return f"{row.instructions.per_request:,.0f}{of_floor}"


# The columns of a ranked row, in order: (heading, right-aligned, cell). A heading with
# {reference} is formatted with the reference's name.
COLUMNS: list[tuple[str, bool, Callable[[Row], str]]] = [
    ("#", True, lambda r: NONE if r.rank is None else str(r.rank)),
    ("entry", False, lambda r: text(r.entry.name)),
    ("language", False, lambda r: text(r.entry.language)),
    ("tier", False, lambda r: text(r.entry.tier_name)),
    ("requests/s median (min–max)", True, lambda r: spread(r.summary("rps"), count)),
    ("vs {reference} [95% interval]", True, ratio_cell),
    ("of its floor [95% interval]", True, floor_cell),
    ("requests per CPU-s", True, efficiency),
    ("CPU µs/req median (min–max)", True, lambda r: spread(r.cpu, us)),
    ("instr./req (× its floor)", True, instructions_cell),
    (
        "latency p50 / p99 µs",
        True,
        lambda r: f"{count(r.median('latency_p50_us'))} / {count(r.median('latency_p99_us'))}",
    ),
    ("peak RSS", True, lambda r: size(r.median("peak_rss_bytes"))),
    ("PSS", True, lambda r: size(r.median("pss_bytes"))),
    ("client-bound reps", True, lambda r: f"{r.client_bound} of {r.samples}" if r.client_bound else "0"),
    ("rank rests on", False, lambda r: r.basis),
]


def row_cells(row: Row) -> list[str]:
    """The cells of a row in COLUMNS order; a row without figures says why in the 5th."""
    if row.reason is not None:
        said = [NONE, text(row.entry.name), text(row.entry.language), text(row.entry.tier_name), text(row.reason)]
        return said + [""] * (len(COLUMNS) - 5)
    return [cell(row) for _, _, cell in COLUMNS]


def headings(reference: str) -> list[str]:
    return [h.format(reference=reference) for h, _, _ in COLUMNS]
