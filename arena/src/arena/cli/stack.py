"""`arena stack`: the deployed path, nginx with TLS in front of each stack."""

from __future__ import annotations

import shutil
from dataclasses import replace

import click

from ..load.mix import DEFAULT_MIX, MIXES, OPTION_HELP
from ..report import stacks as stack_report
from ..stack import run as stack
from ..stack.define import DEFAULT_POLICY, POLICIES
from ..ui import console, err_console, spinner
from .common import Failure, ensure_built, load_entries
from .options import (
    connections_option,
    duration_option,
    load_config,
    out_dir,
    parse_modes,
    rewrite_run_report,
    with_common,
)


@click.command("stack")
@click.argument("stacks", nargs=-1)
@click.option(
    "--modes",
    default=",".join(stack.MODES),
    show_default=True,
    help="Comma-separated: " + "; ".join(f"{m.name}: {m.words}" for m in stack.MODES.values()),
)
@duration_option("stack", 3, "Seconds measured.")
@click.option("--warmup", type=click.IntRange(0, 60), default=1, show_default=True, help="Seconds of load before.")
@click.option("--reps", type=click.IntRange(1, 20), default=3, show_default=True, help="Interleaved repetitions.")
@connections_option
@click.option(
    "--mix", "mix_name", type=click.Choice(list(MIXES)), default=DEFAULT_MIX, show_default=True, help=OPTION_HELP
)
@click.option(
    "--sched",
    type=click.Choice(list(POLICIES)),
    default=DEFAULT_POLICY,
    show_default=True,
    help="How a daemon behind nginx is scheduled: batch, as deploy/renard.service runs renard; normal.",
)
@with_common
@click.pass_context
def stack_cmd(
    ctx,
    stacks,
    modes,
    duration,
    warmup,
    reps,
    connections,
    mix_name,
    sched,
    server_cpus,
    client_cpus,
    results_dir,
    run,
):
    """nginx with TLS in front of each STACK (an entry; ENTRY+unix over a Unix socket), beside
    nginx alone (nginx-302, nginx-png): requests/s, p99, CPU per request of the whole stack."""
    chosen_modes = list(parse_modes(modes, stack.MODES))
    entries = {e.name: e for e in load_entries(ctx, ())}
    try:
        resolved = stack.resolve(list(stacks or stack.DEFAULT), entries)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="'STACK'") from None
    tools = ["nginx", "openssl", "wrk", "taskset"] + (["h2load"] if "h2" in chosen_modes else [])
    missing = [t for t in tools if shutil.which(t) is None]
    if missing:
        raise Failure(f"{', '.join(missing)} not on PATH (Debian: nginx-light, openssl, wrk, nghttp2-client)")
    cfg = replace(
        load_config(server_cpus, client_cpus, connections),
        duration_s=duration,
        warmup_s=warmup,
        repetitions=reps,
        mix=mix_name,
    )
    log_dir = ctx.obj["repo"] / "results" / "logs"
    skipped = {}
    for s in resolved:
        if s.entry is not None:
            why = s.entry.reason or ensure_built(s.entry, log_dir)
            if why:
                skipped[s.name] = why
                err_console.print(f"[yellow]{s.name}[/]: {why}", highlight=False)
    out = out_dir(ctx, "stack", results_dir, run)
    samples = len(resolved) * len(chosen_modes) * reps
    minutes = samples * (duration + warmup + 1.5) / 60
    console.print(f"stack: {len(resolved)} stacks × {len(chosen_modes)} modes × {reps} (≈ {minutes:.1f} min)")
    with spinner() as p:
        task = p.add_task("stack", total=None)
        record = stack.run(
            resolved,
            chosen_modes,
            cfg,
            lambda i, n, words, p=p, t=task: p.update(t, description=f"{i + 1}/{n} {words}"),
            skipped,
            sched,
        )
    record.method = stack.method_words(cfg, record)
    for f in record.failures:
        err_console.print(f"[red]{f['stack']}[/] ({f['mode']}): {f['reason'].splitlines()[0]}", highlight=False)
    if not record.samples:
        raise Failure("no stack could be measured")
    for line in stack_report.summary_lines(record):
        console.print(line, highlight=False)
    data, md, page = stack_report.write(out, record)
    rewrite_run_report(run)
    console.print(f"results: {data}\nreports: {md}\n         {page}")
