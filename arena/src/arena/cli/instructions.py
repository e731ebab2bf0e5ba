"""`arena instructions ENTRY…`: instructions per request of the native entries under callgrind
(instructions.py), each also as a ratio to the floor of its mechanism."""

from __future__ import annotations

from pathlib import Path

import click

from ..counts import instructions
from ..entries.process import StartError
from ..ui import console, err_console, spinner
from .common import Failure, ensure_built, load_entries


@click.command("instructions")
@click.argument("entries", nargs=-1)
@click.option(
    "--requests",
    type=click.IntRange(16, 1_000_000),
    default=instructions.DEFAULT_REQUESTS,
    show_default=True,
    help="N: the two runs serve N and 10 N requests.",
)
@click.option("--profiles", type=click.Path(file_okay=False, path_type=Path), help="Save the top functions here.")
@click.pass_context
def instructions_cmd(ctx, entries, requests, profiles):
    """Count the instructions per request of the native entries under callgrind."""
    problem = instructions.available()
    if problem:
        raise Failure(f"instructions cannot be counted here: {problem}")
    chosen = [e for e in load_entries(ctx, entries) if e.native or e.name in entries]
    log_dir = ctx.obj["repo"] / "results" / "logs"
    counts: dict[str, dict[str, float]] = {}
    failed = False
    for entry in chosen:
        why = entry.reason or ensure_built(entry, log_dir)
        if why:
            err_console.print(f"[yellow]{entry.name}[/]: {why}")
            failed = True
            continue
        for mode_name in instructions.PER_WRITE:
            with spinner() as p:
                p.add_task(f"callgrind {entry.name} {mode_name}: {requests} and {10 * requests} requests", total=None)
                try:
                    c = instructions.count(entry, mode_name, requests, keep=profiles)
                except (StartError, instructions.CountError) as err:
                    err_console.print(f"[red]{entry.name} {mode_name}[/]: {str(err).splitlines()[0]}")
                    failed = True
                    continue
            counts.setdefault(entry.name, {})[mode_name] = c.per_request
            where = f" (profile {profiles / c.annotation})" if profiles else ""
            console.print(f"{entry.name} {mode_name}: {c.per_request:,.0f} instructions per request{where}")
    for entry in chosen:  # each against the floor of its mechanism (entry.toml `floor`), when counted
        floor, mine = counts.get(entry.floor), counts.get(entry.name)
        if floor and mine and entry.kind != "floor":
            ratios = ", ".join(f"{m} {v / floor[m]:.2f}×" for m, v in mine.items() if floor.get(m))
            console.print(f"{entry.name} of its floor ({entry.floor}): {ratios}")
    if failed:
        raise Failure("some entries could not be counted (above)")
