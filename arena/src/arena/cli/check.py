"""`arena check NAME`: everything an entry must pass to be ranked, one line each (check.py)."""

from __future__ import annotations

from pathlib import Path

import click

from ..entries import scaffold as newentry
from ..entries.manifest import Entry, ManifestError, discover, load_manifest, select
from ..ui import console
from ..workflows import check
from .common import Failure


def find_entry(repo: Path, name: str) -> Entry:
    """The entry NAME: from its own folder's manifest when there is one (a broken manifest
    elsewhere does not hide it), else among every entry. Raises BadParameter or Failure."""
    if not newentry.NAME_RE.match(name):
        raise click.BadParameter(f"{name!r} is not an entry name", param_hint="'NAME'")
    for group in ("servers", "peers"):
        manifest = repo / group / name / "entry.toml"
        if manifest.is_file():
            try:
                found = [e for e in load_manifest(manifest) if e.name == name]
            except ManifestError as err:
                raise Failure(f"{check.FAIL} entry.toml: {err}") from None
            if found:
                return found[0]
    try:
        return select(discover(repo), [name])[0]
    except ManifestError as err:
        raise Failure(str(err)) from None
    except KeyError:
        raise click.BadParameter(f"no entry named {name!r} (arena list shows them)", param_hint="'NAME'") from None


@click.command("check")
@click.argument("name")
@click.pass_context
def check_cmd(ctx, name):
    """Everything NAME must pass to be ranked, one line each; exit 0 only when it is ready."""
    entry = find_entry(ctx.obj["repo"], name)
    console.print(f"check {entry.name} ({entry.kind}, {entry.folder.relative_to(ctx.obj['repo'])}):", highlight=False)
    items = check.check(
        entry,
        ctx.obj["repo"] / "results" / "logs",
        report=lambda item: console.print(item.line(), markup=False, highlight=False, soft_wrap=True),
    )
    failing = [i.name for i in items if i.mark == check.FAIL]
    if not check.ready(items, entry.kind):
        raise Failure(f"{entry.name} is not ready to be ranked: {', '.join(failing)}")
    extra = f" ({', '.join(failing)} not required of a {entry.kind})" if failing else ""
    what = "measured (the floor is never ranked)" if entry.kind == "floor" else "ranked"
    console.print(f"{entry.name} is ready to be {what}{extra}", highlight=False)
