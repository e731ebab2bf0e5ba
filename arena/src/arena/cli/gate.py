"""`arena gate ENTRY…`: the regression gate (gate.py): the working tree against --baseline REV,
or each entry against itself (--aa); exit 1 on a significant regression."""

from __future__ import annotations

import click

from ..core.modes import MODES
from ..counts import instructions
from ..ui import console
from ..workflows.gate import GateError, gate_config, run_gate
from ..workflows.gate import Options as GateOptions
from .common import Failure, load_entries
from .options import connections_option, duration_option


@click.command("gate")
@click.argument("entries", nargs=-1)
@click.option("--baseline", metavar="REV", help="The revision to compare with (built in a git worktree).")
@click.option("--aa", is_flag=True, help="Compare each entry with itself: the machine's noise floor.")
@click.option("--pairs", type=click.IntRange(2, 100), default=5, show_default=True, help="A B pairs before deciding.")
@click.option(
    "--max-pairs", type=click.IntRange(2, 200), default=15, show_default=True, help="The cap when inconclusive."
)
@click.option(
    "--threshold", type=click.FloatRange(0, 10), default=0.05, show_default=True, help="Regression beyond this."
)
@click.option(
    "--noise", type=click.FloatRange(0, 10), default=0.05, show_default=True, help="The noise floor (fraction)."
)
@click.option("--timed", is_flag=True, help="Time native entries too instead of counting their instructions.")
@click.option("--mode", "mode_name", default="keepalive", show_default=True, help="The load of the timed samples.")
@duration_option("gate", 3, "Seconds per sample.")
@click.option("--warmup", type=click.IntRange(0, 600), default=1, show_default=True)
@connections_option
@click.option("--cpu-quota", type=click.FloatRange(0.05, 1.0), default=0.5, show_default=True)
@click.option(
    "--requests", type=click.IntRange(16, 1_000_000), default=instructions.DEFAULT_REQUESTS, show_default=True
)
@click.pass_context
def gate_cmd(
    ctx,
    entries,
    baseline,
    aa,
    pairs,
    max_pairs,
    threshold,
    noise,
    timed,
    mode_name,
    duration,
    warmup,
    connections,
    cpu_quota,
    requests,
):
    """Compare ENTRY… (default: every available `ours` entry) with --baseline REV, or with itself (--aa).

    Exit 1 on a significant regression beyond --threshold."""
    if bool(baseline) == aa:
        raise click.UsageError("give exactly one of --baseline REV and --aa")
    if mode_name not in MODES:
        raise click.BadParameter(f"unknown mode {mode_name!r} (known: {', '.join(MODES)})", param_hint="'--mode'")
    if max_pairs < pairs:
        raise click.BadParameter(f"must be at least --pairs ({pairs})", param_hint="'--max-pairs'")
    chosen = load_entries(ctx, entries)
    names = [e.name for e in chosen if entries or (e.kind == "ours" and e.available)]
    cfg = gate_config(mode_name, duration, warmup, connections, cpu_quota)
    opts = GateOptions(pairs, max_pairs, threshold, noise, timed, requests)
    against = "itself (A/A)" if aa else baseline
    console.print(f"gate: {', '.join(names)} against {against}; A = {against}, B = the working tree", highlight=False)
    try:
        verdicts = run_gate(
            ctx.obj["repo"],
            names,
            baseline,
            cfg,
            opts,
            ctx.obj["repo"] / "results" / "logs",
            say=lambda line: console.print(line, highlight=False),
        )
    except GateError as err:
        raise Failure(str(err)) from None
    regressed = [name for name, v in verdicts if v.regression(threshold)]
    for name, verdict in verdicts:
        console.print(f"{name}: {verdict.words()}", highlight=False)
    if regressed:
        raise click.exceptions.Exit(1)
