"""`arena row NAME…`: the entries' rows of the full results table (docs/results.md), from a run
(default results/latest) and the system-call counts written into it (RUN/syscalls/syscalls.json,
when there), in its columns and formats (report/readme.py): the header once, then one line per
entry, in the order given; no NAME: every entry in the README's order. --compact: the README's
compact table instead, each entry linked to its README. Then, when some of those rows are
production entries whose tuned renard the run measured, the price of the idiom's table
(report/idiom.py), each entry linked to its README. --chart FILE also writes the picture of
those rows (report/svg.ranking_chart), the README's docs/results.svg. A run recorded before tiers
gets each peer's tier from its entry.toml here (said on stderr)."""

from __future__ import annotations

from pathlib import Path

import click

from ..core.columns import COMPACT_HEADER
from ..core.model import Run
from ..report import build, idiom, readme, svg
from .common import Failure


def read_run(path: Path) -> Run:
    """The run at path (a run directory, its run.json, or results/latest); raises Failure."""
    try:
        return Run.read(path)
    except (ValueError, OSError) as err:  # SchemaError and JSONDecodeError are ValueErrors
        raise Failure(f"{path}: {err}") from None


@click.command("row")
@click.argument("names", metavar="NAME…", nargs=-1)
@click.option(
    "--run",
    "run_path",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="A results/<run-id> directory or its run.json (default: results/latest).",
)
@click.option(
    "--chart",
    "chart_path",
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    default=None,
    help="Also write the rows' chart (capped keep-alive CPU µs per request) to this SVG file.",
)
@click.option("--compact", is_flag=True, help="The README's compact table instead of the full one.")
@click.pass_context
def row_cmd(ctx, names, run_path, chart_path, compact):
    """Print NAMEs' rows of the results table, computed from a run."""
    path = run_path or ctx.obj["repo"] / "results" / "latest"
    if run_path is None and not path.exists():
        raise Failure(f"no run at {path}: `arena bench` makes one, or pass --run")
    run = read_run(path)
    try:
        syscalls = readme.syscall_counts(path if path.is_dir() else path.parent)
    except ValueError as err:
        raise Failure(str(err)) from None
    absent = [n for n in names if run.entry(n) is None]
    if absent:
        known = ", ".join(e.name for e in run.entries)
        raise click.BadParameter(f"run {run.run_id} has no entry {absent[0]!r} (it has {known})", param_hint="'NAME'")
    undeclared = readme.declared_tiers(run, ctx.obj["repo"])
    if undeclared:
        said = ", ".join(undeclared)
        click.echo(f"arena: run {run.run_id} predates tiers: {said} from their entry.toml", err=True)
    view = build(run)
    if run.config.quick:
        click.echo(f"arena: run {run.run_id} is a quick run: its figures are not for the README", err=True)
    if chart_path is not None and not chart_path.parent.is_dir():
        raise click.BadParameter(f"{chart_path.parent}: no such directory", param_hint="'--chart'")
    order = list(names) or readme.readme_order(view)
    link = readme.readme_links(ctx.obj["repo"])
    click.echo(COMPACT_HEADER if compact else readme.HEADER)
    for name in order:  # the README's compact rows link each entry to its README
        click.echo(readme.compact_row(view, name, syscalls, link) if compact else readme.row(view, name, syscalls))
    prices = [p for p in idiom.prices(view) if p.production.name in order]
    if prices:
        click.echo()
        click.echo("\n".join(idiom.markdown_of(view, prices, link)))
    if chart_path is not None:
        chart_path.write_text(svg.ranking_chart(view, order, readme.CAPPED) + "\n")
