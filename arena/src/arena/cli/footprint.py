"""`arena footprint`: the footprint table (footprint/, docs/footprint.md) from a run (default
results/latest) and the image sizes deploy/images/test_images.py records (default
results/images/), as Markdown on stdout."""

from __future__ import annotations

from pathlib import Path

import click

from ..core.model import Run
from ..footprint import images, table
from .common import Failure


@click.command("footprint")
@click.option(
    "--run",
    "run_path",
    type=click.Path(exists=True, path_type=Path),
    help="A results/<run-id> directory or its run.json (default: results/latest).",
)
@click.option(
    "--images",
    "images_dir",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="The image sizes, one NAME.json per entry (default: results/images/, written by make test-images).",
)
@click.pass_context
def footprint_cmd(ctx, run_path, images_dir):
    """Print each entry's image (base, app, app share), artifact + runtime, peak RSS and start-up."""
    path = run_path or ctx.obj["repo"] / "results" / "latest"
    if run_path is None and not path.exists():
        raise Failure(f"no run at {path}: `arena bench` makes one, or pass --run")
    try:
        run = Run.read(path)
        sizes = images.read(images_dir or ctx.obj["repo"] / "results" / "images")
    except (ValueError, OSError) as err:  # SchemaError, ImagesError and JSONDecodeError are ValueErrors
        raise Failure(str(err) if isinstance(err, images.ImagesError) else f"{path}: {err}") from None
    click.echo(table.markdown(table.rows(run, sizes)), nl=False)
