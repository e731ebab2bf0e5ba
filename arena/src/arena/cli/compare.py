"""`arena compare RUN…`: runs side by side, each read against its own floor (crossrun.py)."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from ..ui import console
from ..workflows import crossrun
from .common import Failure


@click.command("compare")
@click.argument("runs", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--reference", default="nginx-lua", show_default=True, help="The second unit beside the floor.")
@click.option("--markdown", type=click.Path(dir_okay=False, path_type=Path), help="Also write the comparison here.")
def compare_cmd(runs, reference, markdown):
    """Put RUN directories (or their run.json) side by side, each read against its own floor.

    Exit 1 when a run has no floor: absolute figures are not ranked across machines."""
    if len(runs) < 2:
        raise click.BadParameter("give at least two runs (results/<run-id> or their run.json)", param_hint="'RUNS'")
    try:
        comparison = crossrun.compare(crossrun.read_runs(list(runs)), reference)
    except crossrun.CompareError as err:
        raise Failure(str(err)) from None
    console.print("what differs between the runs:", highlight=False)
    for line in comparison.differences or ["nothing recorded: same machine, tools and configuration"]:
        console.print(f"  {line}", highlight=False, soft_wrap=True)
    for mode_name in comparison.modes:
        rows = crossrun.table(comparison, mode_name)
        figure = comparison.figure[mode_name]
        table = Table(title=f"{mode_name}: each run's {figure}, against its own floor and its own {reference}")
        for i, header in enumerate(rows.headers):
            table.add_column(header, justify="right" if i in rows.numeric else "left")
        for row in rows.rows:
            table.add_row(*row)
        console.print(table)
        for line in crossrun.order_lines(comparison, mode_name):
            console.print(f"  {line}", highlight=False, soft_wrap=True)
    for mode_name in comparison.modes:
        for line in comparison.lines[mode_name]:
            console.print(f"{mode_name} {line.entry}: {line.verdict()}", highlight=False)
    apart = [f"{m} {x.entry}" for m in comparison.modes for x in comparison.lines[m] if x.agree is False]
    if apart:
        console.print(f"the runs differ on {', '.join(apart)}", highlight=False)
    else:
        console.print(f"the runs agree: every ratio to the floor within {crossrun.AGREE:.0%}", highlight=False)
    if markdown:
        markdown.write_text(crossrun.markdown(comparison))
        console.print(f"written: {markdown}", highlight=False)
