"""What every command module needs: the error that ends a command, the repository and its
entries, option checks shared by several commands, building an entry on demand, and publishing
a run's reports (bench and report).

Imported by cli/__init__.py and by the command modules beside it (cli/*.py); it
imports none of them, so the commands' imports run one way (the import-linter contracts in
arena/pyproject.toml hold it).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import click

from ..core.model import Run
from ..entries.build import needs_build
from ..entries.manifest import Entry, ManifestError, discover, select
from ..report import write_run_reports
from ..ui import build_with_spinner, console, err_console
from ..ui import report as report_console

CPU_LIST_RE = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")


class Failure(Exception):
    """An error that ends the command with `Error: …` on stderr and exit status 1."""


# --- repository and entries --------------------------------------------------------------


def find_repo(explicit: Path | None) -> Path:
    """--repo, else the checkout this package is installed from (editable), else the
    nearest parent of the working directory that holds spec/SPEC.md."""
    if explicit:
        return explicit.resolve()
    candidates = [Path(__file__).resolve().parents[4]] + [Path.cwd(), *Path.cwd().parents]
    for c in candidates:
        if (c / "spec" / "SPEC.md").is_file():
            return c
    raise Failure("cannot find the renard repository (no spec/SPEC.md above here): pass --repo")


def load_entries(ctx: click.Context, names: tuple[str, ...]) -> list[Entry]:
    try:
        entries = discover(ctx.obj["repo"])
    except ManifestError as e:
        raise Failure(str(e)) from None
    try:
        return select(entries, list(names))
    except KeyError as e:
        known = ", ".join(x.name for x in entries)
        raise click.BadParameter(f"unknown entry {e.args[0]!r} (known: {known})", param_hint="'ENTRY'") from None


def parse_listen(value: str) -> tuple[str, int]:
    m = re.fullmatch(r"\[([0-9a-fA-F:.]+)\]:(\d{1,5})|([0-9.]+):(\d{1,5})", value)
    if not m or int(m.group(2) or m.group(4)) > 65535:
        raise click.BadParameter(f"must be A.B.C.D:PORT or [ADDR]:PORT (got {value!r})", param_hint="'--listen'")
    return (m.group(1) or m.group(3)), int(m.group(2) or m.group(4))


def check_cpus(flag: str, value: str) -> str:
    if not CPU_LIST_RE.match(value):
        raise click.BadParameter(f"must be a CPU list such as 0 or 0-1 or 0,2 (got {value!r})", param_hint=f"'{flag}'")
    allowed = os.sched_getaffinity(0)
    for part in value.split(","):
        lo, _, hi = part.partition("-")
        for cpu in range(int(lo), int(hi or lo) + 1):
            if cpu not in allowed:
                raise click.BadParameter(
                    f"CPU {cpu} is not available here (have {sorted(allowed)})", param_hint=f"'{flag}'"
                )
    return value


def ensure_built(entry: Entry, log_dir: Path) -> str | None:
    """Builds the entry when needed; returns None, or why it cannot be used."""
    if not needs_build(entry):
        return None
    result = build_with_spinner(entry, log_dir)
    if result.ok:
        console.print(f"built {entry.name} in {result.seconds:.1f} s")
        return None
    err_console.print(
        f"[red]build of {entry.name} failed[/] ({result.failed_command}); log {result.log}:\n{result.tail()}"
    )
    return f"build failed: {result.failed_command} (log {result.log})"


# --- a run's reports ----------------------------------------------------------------------


def publish(run_dir: Path, reference: str | None = None):
    """Writes report.md/report.html/results.csv for a run directory, prints the ranked tables, the
    warnings and the failed samples; returns the report's view."""
    try:
        run = Run.read(run_dir)
    except (ValueError, OSError) as err:  # SchemaError and JSONDecodeError are ValueErrors
        raise Failure(f"{run_dir / 'run.json'}: {err}") from None
    view, md, html = write_run_reports(run, run_dir, reference)
    for mv in view.modes:
        console.print(report_console.ranked(view, mv))
    for warning in view.warnings:
        console.print(f"[yellow]warning[/]: {warning}", highlight=False)
    if view.failed:
        console.print(report_console.failed(view))
    csv = run_dir / "results.csv"
    console.print(f"results: {run_dir / 'run.json'}\n         {csv}\nreports: {md}\n         {html}")
    return view
