"""The `arena` command: the group and its --repo, the one list of its commands (each in its own
module beside this one, sharing cli/common.py and cli/options.py), and main(), which turns
bad input into exit status 2 and a command's Failure into 1.

Commands: entries (list, new, check), builds and tests (build, test, verify), measuring (run,
bench, instructions, syscalls, gate, latency, sweep, stack, history) and reports (report, row,
compare, footprint)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import click

from . import (
    bench,
    build,
    check,
    compare,
    footprint,
    gate,
    history,
    instructions,
    latency,
    new,
    report,
    row,
    run,
    stack,
    sweep,
    syscalls,
    test,
    verify,
)
from . import list as list_
from .common import Failure, find_repo

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


# One visible list: every command and the module it lives in.
for _command in (
    list_.list_cmd,
    new.new_cmd,
    check.check_cmd,
    build.build_cmd,
    test.test_cmd,
    verify.verify_cmd,
    run.run,
    bench.bench_cmd,
    instructions.instructions_cmd,
    syscalls.syscalls_cmd,
    gate.gate_cmd,
    report.report_cmd,
    row.row_cmd,
    compare.compare_cmd,
    footprint.footprint_cmd,
    sweep.sweep_cmd,
    latency.latency_cmd,
    history.history_cmd,
    stack.stack_cmd,
):
    cli.add_command(_command)


# --- entry point --------------------------------------------------------------------------


def _interrupt(signum, frame) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Runs the command; bad input: one line on stderr and exit 2; errors: `Error: …`, exit 1.
    SIGTERM (kill, a CI's time limit, systemd) ends it as Ctrl-C does: what was measured is
    written, the servers the arena started are stopped, exit 130."""
    signal.signal(signal.SIGTERM, _interrupt)
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
