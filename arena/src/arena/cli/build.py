"""`arena build ENTRY…`: build the entries, each failure reported with its log's last lines."""

from __future__ import annotations

import click

from ..entries.build import needs_build
from ..ui import build_with_spinner, console
from .common import Failure, load_entries


@click.command("build")
@click.argument("entries", nargs=-1)
@click.option(
    "--stale",
    is_flag=True,
    help="Build only the entries whose artifact is missing or older than a source file (as bench does).",
)
@click.pass_context
def build_cmd(ctx, entries, stale):
    """Build ENTRIES (default: all available); a failure does not stop the others."""
    chosen = load_entries(ctx, entries)
    log_dir = ctx.obj["repo"] / "results" / "logs"
    failed = []
    for e in chosen:
        if not e.available:
            console.print(f"[yellow]skip[/] {e.name}: {e.reason}")
            continue
        if not e.build:
            console.print(f"[green]ok[/]   {e.name}: nothing to build")
            continue
        if stale and not needs_build(e):
            console.print(f"[green]ok[/]   {e.name}: current")
            continue
        result = build_with_spinner(e, log_dir)
        if result.ok:
            console.print(f"[green]ok[/]   {e.name}: built in {result.seconds:.1f} s")
        else:
            failed.append(e.name)
            console.print(
                f"[red]FAIL[/] {e.name}: `{result.failed_command}` failed after {result.seconds:.1f} s; "
                f"log {result.log}, last lines:"
            )
            console.print(result.tail(), markup=False, highlight=False)
    if failed:
        raise Failure(f"build failed: {', '.join(failed)}")
