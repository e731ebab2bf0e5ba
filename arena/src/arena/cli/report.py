"""`arena report RUN`: write a run's report.md and report.html again (commands/common.publish)."""

from __future__ import annotations

from pathlib import Path

import click

from .common import publish


@click.command("report")
@click.argument("run", type=click.Path(exists=True, path_type=Path))
@click.option("--reference", default=None, help="Default: the run's own reference.")
def report_cmd(run, reference):
    """Write report.md and report.html for RUN (a results/<run-id> directory or its run.json)."""
    publish(run if run.is_dir() else run.parent, reference)
