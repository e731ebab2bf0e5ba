"""The ranked tables printed at the end of `arena bench` and `arena report` (rich), with the
cells of the report (format.py): the same row reads the same on the console."""

from __future__ import annotations

from rich.table import Table

from ..report import format as fmt
from ..report.view import ModeView, View

# The report's columns the console shows (by heading, before the reference is filled in).
SHOWN = (
    "#",
    "entry",
    "kind",
    "requests/s median (min–max)",
    "vs {reference}",
    "of its floor",
    "requests per CPU-s",
    "CPU µs/req median (min–max)",
    "instr./req (× its floor)",
    "client-bound reps",
    "rank rests on",
)


def ranked(view: View, mv: ModeView) -> Table:
    t = Table(title=f"{mv.mode.name}: {mv.mode.words} (median of repetitions, min–max)", caption=mv.ranks_on)
    keep = [i for i, (heading, _, _) in enumerate(fmt.COLUMNS) if heading in SHOWN]
    headings = fmt.headings(view.reference)
    for i in keep:
        t.add_column(headings[i], justify="right" if fmt.COLUMNS[i][1] else "left")
    for row in mv.rows:
        cells = fmt.row_cells(row)
        if row.reason is not None:  # the reason goes where the figures would be
            cells = cells[:4] + [""] * (len(cells) - 5) + [cells[4]]
        t.add_row(*(cells[i] for i in keep))
    return t


def failed(view: View) -> Table:
    """The failed samples per entry and mode: how many, why, where the logs are."""
    t = Table(title="failed samples (the server's stderr tail in each log)")
    for heading in ("entry", "mode", "failed", "reason", "logs"):
        t.add_column(heading, justify="right" if heading == "failed" else "left")
    for group in view.failed:
        total = len(group.failures) + group.measured
        logs = ", ".join(f.log for f in group.failures if f.log) or "–"
        t.add_row(group.entry, group.mode, f"{len(group.failures)} of {total}", "; ".join(group.reasons), logs)
    return t
