"""`arena test ENTRY…`: each entry's own tests (`test` in entry.toml, in its folder), their
output kept (entries/logged.py) and shown; a failed entry's last lines repeated at the end.
--jobs N runs N folders' tests at once (entries sharing a folder, as the js ones do, one after
another in it), each entry's output then only in its log, with a closing line each as its folder's tests end."""

from __future__ import annotations

import time
from pathlib import Path

import click
from rich.markup import escape

from ..conformance.verify import run_at_most
from ..entries.junit import failed_cases, remove_stale
from ..entries.logged import TEST_TIMEOUT_S, run_logged, tail
from ..entries.manifest import Entry
from ..ui import console
from .common import Failure, ensure_built, load_entries


def _run_tests(e: Entry, log_dir: Path, echo: bool) -> bool:
    """Runs e's test commands in order into its log (and our stdout with echo); True when all pass."""
    log = log_dir / f"{e.name}.test.log"
    log.unlink(missing_ok=True)
    remove_stale(e.folder, e.junit)  # the failures named after a failed run are this run's
    for command in e.test:
        if echo:
            console.print(f"[bold]{e.name}[/]: {command}", highlight=False)
        if run_logged([command], e.folder, log, TEST_TIMEOUT_S, echo=echo, append=True) is not None:
            return False
    return True


@click.command("test")
@click.argument("entries", nargs=-1)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="N",
    help="N entries' tests at once, entries of one folder one after another; each entry's output "
    "then goes to its log alone (results/logs/ENTRY.test.log), a closing line as its folder ends.",
)
@click.pass_context
def test_cmd(ctx, entries, jobs):
    """Build each entry when needed, then run its own tests (`test` in entry.toml, in its
    folder); exit 1 when one fails.

    An `ours` entry whose runtime is missing fails too: its tests would otherwise be lost."""
    failed, ready = [], []
    log_dir = ctx.obj["repo"] / "results" / "logs"
    for e in load_entries(ctx, entries):
        if not e.test:
            continue
        if not e.available:
            console.print(f"[yellow]skip[/] {e.name}: {e.reason}")
            if e.kind == "ours":
                failed.append(e.name)
            continue
        if ensure_built(e, log_dir) is not None:  # builds one at a time: a build loads both cores
            failed.append(e.name)
            continue
        ready.append(e)
    if not ready and not failed:
        raise Failure("no entry declares tests")
    by_folder: dict[Path, list[Entry]] = {}
    for e in ready:
        by_folder.setdefault(e.folder, []).append(e)

    def folder_tests(group: list[Entry]) -> list[tuple[Entry, bool, float]]:
        """The group's entries, one after another: (entry, passed, seconds) for each."""
        out = []
        for e in group:
            started = time.monotonic()
            out.append((e, _run_tests(e, log_dir, echo=jobs == 1), time.monotonic() - started))
        return out

    def closing_lines(_group, outcomes) -> None:
        """With --jobs > 1 (the output then only in the logs): a line per entry as its folder ends."""
        for e, passed, seconds in outcomes if jobs > 1 else []:
            mark = "[green]ok[/]  " if passed else "[red]FAIL[/]"
            console.print(f"{mark} {e.name}: tests in {seconds:.0f} s; log {log_dir / e.name}.test.log")

    for outcomes in run_at_most(jobs, list(by_folder.values()), folder_tests, closing_lines):
        failed += [e.name for e, passed, _ in outcomes if not passed]
    failed = list(dict.fromkeys(failed))
    by_name = {e.name: e for e in ready}
    for name in failed:
        log = log_dir / f"{name}.test.log"
        console.print(f"[red]FAIL[/] {name}: the last lines of {log}:", highlight=False)
        console.print(tail(log), markup=False, highlight=False)
        entry = by_name.get(name)
        for test, said in failed_cases(entry.folder, entry.junit) if entry else []:
            # One line per failed test and its message's first line after it (`E   `), as
            # verify --full names its own: scripts/flake counts each from these lines.
            console.print(f"[red]FAIL[/] {name} test: {escape(test)}", highlight=False, soft_wrap=True)
            console.print(f"E   {said}", markup=False, highlight=False, soft_wrap=True)
    if failed:
        raise Failure(f"tests failed: {', '.join(failed)}")
