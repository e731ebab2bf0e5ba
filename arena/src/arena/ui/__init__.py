"""Rich renderings for the console: progress, entry list, verification matrix (the ranked
results are report/console.py)."""

from __future__ import annotations

import sys

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from ..conformance import verify
from ..entries.build import BuildResult, build
from ..entries.manifest import Entry

# Piped output (make, CI logs) gets a width that fits the ranked tables.
console = Console(width=None if sys.stdout.isatty() else 140)
err_console = Console(stderr=True)

VERDICT_MARK = {"pass": "[green]✓[/]", "alt": "[yellow]~[/]", "fail": "[red]✗[/]"}


def spinner() -> Progress:
    """Progress for steps of unknown length: spinner, description, elapsed time."""
    return Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console, transient=False
    )


def build_with_spinner(entry: Entry, log_dir) -> BuildResult:
    """Runs the entry's build commands while a spinner shows the elapsed time."""
    with spinner() as p:
        p.add_task(f"building {entry.name}", total=None)
        return build(entry, log_dir)


def bar() -> Progress:
    """Progress for a known number of steps, with the time remaining."""
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
    )


def entries_table(entries: list[Entry]) -> Table:
    t = Table(title="entries")
    for col in ("entry", "language", "tier", "available", "description"):
        t.add_column(col)
    for e in entries:
        avail = "[green]yes[/]" if e.available else f"[red]no[/]: {e.reason}"
        t.add_row(e.name, e.language, e.tier, avail, e.description)
    return t


def verify_matrix(results) -> Table:
    """Rows are cases (in the runner's order), columns are entries; ✓ pass, ~ alt, ✗ fail."""
    t = Table(title="conformance: ✓ pass, ~ alt, ✗ fail")
    t.add_column("case")
    for r in results:
        t.add_column(f"{r.entry.name}\n({r.entry.kind})", justify="center")
    cases: list[str] = []
    for r in results:
        for o in r.outcomes:
            if o.name not in cases:
                cases.append(o.name)
    verdicts = [{o.name: o.verdict for o in r.outcomes} for r in results]
    for case in cases:
        t.add_row(case, *(VERDICT_MARK.get(v.get(case), "·") for v in verdicts))
    t.add_section()
    for label in ("pass", "alt", "fail"):
        t.add_row(label, *(str(r.counts()[label]) if not r.error else "-" for r in results))
    t.add_row("start", *("[red]failed[/]" if r.error else "ok" for r in results))
    return t


def suite_table(results: list[verify.SuiteResult]):
    """The entry x scenario table for the console: a row per scenario, a column per entry."""
    table = Table(title="suite: scenario × entry (✓ N: N tests passed; ✗ F/N: F of N failed)")
    table.add_column("scenario")
    for result in results:
        table.add_column(result.entry.name, justify="center")
    for name in verify.scenario_names(results):
        cells = [verify.scenario_cell(result.scenarios.get(name)) for result in results]
        table.add_row(name, *[c.replace("✗", "[red]✗[/]").replace("✓", "[green]✓[/]") for c in cells])
    table.add_section()
    table.add_row("time", *[f"{result.seconds:.0f} s" for result in results])
    return table
