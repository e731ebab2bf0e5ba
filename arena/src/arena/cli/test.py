"""`arena test ENTRY…`: each entry's own tests (`test` in entry.toml, in its folder), their
output shown and kept (entries/logged.py); a failed entry's last lines repeated at the end."""

from __future__ import annotations

import click

from ..entries.logged import TEST_TIMEOUT_S, run_logged, tail
from ..ui import console
from .common import Failure, ensure_built, load_entries


@click.command("test")
@click.argument("entries", nargs=-1)
@click.pass_context
def test_cmd(ctx, entries):
    """Build each entry when needed, then run its own tests (`test` in entry.toml, in its
    folder); exit 1 when one fails.

    An `ours` entry whose runtime is missing fails too: its tests would otherwise be lost."""
    failed, ran = [], 0
    log_dir = ctx.obj["repo"] / "results" / "logs"
    for e in load_entries(ctx, entries):
        if not e.test:
            continue
        if not e.available:
            console.print(f"[yellow]skip[/] {e.name}: {e.reason}")
            if e.kind == "ours":
                failed.append(e.name)
            continue
        if ensure_built(e, log_dir) is not None:
            failed.append(e.name)
            continue
        log = log_dir / f"{e.name}.test.log"
        log.unlink(missing_ok=True)
        for command in e.test:
            console.print(f"[bold]{e.name}[/]: {command}", highlight=False)
            ran += 1
            if run_logged([command], e.folder, log, TEST_TIMEOUT_S, echo=True, append=True) is not None:
                failed.append(e.name)
                break
    for name in dict.fromkeys(failed):
        log = log_dir / f"{name}.test.log"
        console.print(f"[red]FAIL[/] {name}: the last lines of {log}:", highlight=False)
        console.print(tail(log), markup=False, highlight=False)
    if failed:
        raise Failure(f"tests failed: {', '.join(dict.fromkeys(failed))}")
    if not ran:
        raise Failure("no entry declares tests")
