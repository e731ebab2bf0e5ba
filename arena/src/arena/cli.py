"""The `arena` command: entries (list, new, check), builds and tests (build, test, verify), measuring
(run, bench, instructions, gate, latency, sweep, history) and reports (report, compare)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from . import entrytests
from .commands import bench, build, check, compare, gate, instructions, new, report, row, run, syscalls, verify
from .commands import list as list_
from .commands.common import Failure, ensure_built, find_repo, load_entries
from .loadcli import COMMANDS as LOAD_COMMANDS
from .ui import console

__all__ = ["cli", "main"]

# --- commands ---------------------------------------------------------------------------


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--repo",
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="The renard checkout (default: the one arena is installed from).",
)
@click.version_option(package_name="arena")
@click.pass_context
def cli(ctx: click.Context, repo: Path | None):
    """renard's benchmark harness: entries, builds, conformance, benchmarks, reports."""
    ctx.obj = {"repo": find_repo(repo)}


@cli.command("test")
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
            if entrytests.run_logged(command, e.folder, log) != 0:
                failed.append(e.name)
                break
    for name in dict.fromkeys(failed):
        log = log_dir / f"{name}.test.log"
        console.print(f"[red]FAIL[/] {name}: the last lines of {log}:", highlight=False)
        console.print(entrytests.tail(log), markup=False, highlight=False)
    if failed:
        raise Failure(f"tests failed: {', '.join(dict.fromkeys(failed))}")
    if not ran:
        raise Failure("no entry declares tests")


# One visible list: every command and the module it lives in.
for _command in (
    list_.list_cmd,
    new.new_cmd,
    check.check_cmd,
    build.build_cmd,
    verify.verify_cmd,
    run.run,
    bench.bench_cmd,
    instructions.instructions_cmd,
    syscalls.syscalls_cmd,
    gate.gate_cmd,
    report.report_cmd,
    row.row_cmd,
    compare.compare_cmd,
    *LOAD_COMMANDS,  # sweep, latency, history, stack (loadcli.py)
):
    cli.add_command(_command)


# --- entry point --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    """Runs the command; bad input: one line on stderr and exit 2; errors: `Error: …`, exit 1."""
    try:
        status = cli.main(args=argv, prog_name="arena", standalone_mode=False)
    except click.UsageError as e:
        print(f"arena: {e.format_message()}", file=sys.stderr)
        return 2
    except Failure as e:
        print(f"Error: {e}", file=sys.stderr)  # plain: never wrapped, greppable
        return 1
    except click.Abort:
        return 130
    except KeyboardInterrupt:
        print("arena: interrupted", file=sys.stderr)
        return 130
    return status if isinstance(status, int) else 0  # click.exceptions.Exit(n) from a command


if __name__ == "__main__":
    sys.exit(main())
