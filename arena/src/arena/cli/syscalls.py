"""`arena syscalls`: system calls per request of every entry under strace (syscalls.py),
written to results/syscalls-<id>/ or into a bench run (`--run`), whose report then includes
them (report/syscalls.py). Registered on the `arena` group by cli.py."""

from __future__ import annotations

from pathlib import Path

import click

from ..core import results
from ..counts import syscalls
from ..report import syscalls as report
from ..ui import console, err_console
from .common import Failure, ensure_built, load_entries
from .options import parse_modes, rewrite_run_report


@click.command("syscalls")
@click.argument("entries", nargs=-1)
@click.option(
    "--requests",
    type=click.IntRange(16, 100_000),
    default=syscalls.DEFAULT_REQUESTS,
    show_default=True,
    help="N: windows of N and 11 N requests (a quarter of that for close).",
)
@click.option("--modes", default=",".join(syscalls.MODES), show_default=True, help="Loads to count, comma-separated.")
@click.option(
    "--warmup",
    type=click.FloatRange(0, syscalls.WARMUP_CAP_S),
    help="Seconds of warm-up before counting (default: the entry's warmup_s, and at least 2 000 requests).",
)
@click.option("--results", "results_dir", type=click.Path(file_okay=False, path_type=Path), help="Default: results/")
@click.option(
    "--run",
    type=click.Path(exists=True, path_type=Path),
    help="Write into this bench run's directory (e.g. results/latest); its report includes the counts.",
)
@click.pass_context
def syscalls_cmd(ctx, entries, requests, modes, warmup, results_dir, run):
    """System calls per request of each ENTRY (default: every available one) under strace -f -c."""
    chosen_modes = parse_modes(modes, syscalls.MODES)
    problem = syscalls.available()
    if problem:
        raise Failure(f"system calls cannot be counted here: {problem}")
    started = results.utc_now().strftime("%Y%m%d-%H%M%S")  # the id: when the counts began
    log_dir = ctx.obj["repo"] / "results" / "logs"
    counted: list[syscalls.EntryCounts] = []
    for entry in load_entries(ctx, entries):
        if not entries and not entry.available:
            continue
        why = entry.reason or ensure_built(entry, log_dir)
        if why:
            counted.append(syscalls.EntryCounts(entry.name, entry.kind, error=f"not built: {why}"))
            err_console.print(f"[yellow]{entry.name}[/]: {why}", highlight=False)
            continue
        with console.status(f"strace {entry.name}"):
            result = syscalls.count_entry(entry, chosen_modes, requests, warmup, say=console.print)
        if result.error:
            err_console.print(f"[red]{entry.name}[/]: {result.error}", highlight=False)
        counted.append(result)
    if run is not None:
        run_dir = (run if run.is_dir() else run.parent).resolve()
        out = run_dir / report.KIND
    else:
        run_dir = None
        out = (results_dir or ctx.obj["repo"] / "results") / f"syscalls-{started}"
    config = {"requests": requests, "modes": list(chosen_modes), "warmup_s": warmup, "idle_s": syscalls.IDLE_S}
    syscalls.write(out / report.FILE, counted, config)
    md, _ = report.write_report(out)
    console.print(f"wrote {out / report.FILE} and {md}", highlight=False)
    if run_dir is not None:
        rewrite_run_report(run_dir)
    if any(e.error for e in counted):
        raise Failure("some entries could not be counted (above)")
