"""`arena new NAME`: the skeleton of a new entry (newentry.py)."""

from __future__ import annotations

import click

from ..entries import scaffold as newentry
from ..entries.manifest import ManifestError, discover
from ..ui import console


@click.command("new")
@click.argument("name")
@click.option("--language", required=True, help="The language (or the server, for a peer), as the report shows it.")
@click.option("--peer", is_flag=True, help="A peer (what people run instead) in peers/NAME, not ours in servers/NAME.")
@click.pass_context
def new_cmd(ctx, name, language, peer):
    """Write the skeleton of a new entry; `arena check NAME` then says what is missing."""
    repo = ctx.obj["repo"]
    try:
        taken = {e.name for e in discover(repo)}
    except ManifestError:
        taken = set()  # a broken manifest elsewhere does not stop a new entry; folders are still checked
    try:
        newentry.check_name(name, repo, taken)
    except newentry.NewEntryError as err:
        raise click.BadParameter(str(err), param_hint="'NAME'") from None
    if not language.strip():
        raise click.BadParameter("must not be empty", param_hint="'--language'")
    folder = newentry.create(repo, name, language.strip(), peer)
    for path in sorted(folder.iterdir()):
        console.print(f"wrote {path.relative_to(repo)}", highlight=False)
    console.print(f"next: CONTRIBUTING.md, then `arena check {name}` names what is missing", highlight=False)
