"""`arena history`: the changes of level in results/history.jsonl."""

from __future__ import annotations

from pathlib import Path

import click

from ..analysis import history
from ..ui import console
from .common import Failure


@click.command("history")
@click.argument("entries", nargs=-1)
@click.option("--file", "path", type=click.Path(dir_okay=False, path_type=Path), help="Default: results/history.jsonl")
@click.option("--include-quick", is_flag=True, help="Count quick runs too (left out by default).")
@click.pass_context
def history_cmd(ctx, entries, path, include_quick):
    """The changes of level in the bench history (E-Divisive), with the run and commit of each."""
    path = path or ctx.obj["repo"] / "results" / history.FILE
    if not path.is_file():
        raise Failure(f"no history at {path}: each `arena bench` appends a line to it")
    lines = history.read(path)
    found = history.changes(lines, list(entries), include_quick)
    console.print(f"{len(lines)} runs in {path}; {len(found)} changes (E-Divisive, p < {history.PVALUE})")
    for change in found:
        console.print(change.words(), highlight=False)
