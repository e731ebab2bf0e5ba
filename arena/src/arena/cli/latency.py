"""`arena latency`: latency percentiles at fixed shares of each entry's capacity (oha)."""

from __future__ import annotations

import click

from ..curves import latency
from ..entries.process import StartError
from ..load.driver import LoadError
from ..load.oha import oha_problem
from ..report.loads import latency_report, write_json
from ..ui import console, err_console, spinner
from .common import Failure
from .options import chosen_entries, connections_option, load_config, out_dir, rewrite_run_report, warmups, with_common


@click.command("latency")
@click.argument("entries", nargs=-1)
@click.option("--seconds", type=click.IntRange(1, 60), default=5, show_default=True, help="Seconds per rate.")
@connections_option
@with_common
@click.pass_context
def latency_cmd(ctx, entries, seconds, connections, server_cpus, client_cpus, results_dir, run):
    """Latency percentiles at 25/50/75/90% of each ENTRY's capacity (oha, open loop)."""
    problem = oha_problem()
    if problem:
        raise Failure(problem)
    cfg = load_config(server_cpus, client_cpus, connections)
    chosen = chosen_entries(ctx, entries)
    out = out_dir(ctx, "latency", results_dir, run)
    console.print(f"latency: {len(chosen)} entries × 5 runs × {seconds} s")
    done = []
    for entry in chosen:
        with spinner() as p:
            task = p.add_task(entry.name, total=None)
            try:
                r = latency.measure(
                    entry,
                    cfg,
                    seconds,
                    progress=lambda s, p=p, t=task, n=entry.name: p.update(t, description=f"{n}: {s}"),
                )
            except (StartError, LoadError) as err:
                err_console.print(f"[red]{entry.name}[/]: {str(err).splitlines()[0]}", highlight=False)
                continue
        done.append(r)
        console.print(
            f"{r.entry}: capacity {r.capacity:,.0f}/s; p99 passes 1 ms at {r.passes_words(1_000)}, "
            f"10 ms at {r.passes_words(10_000)}",
            highlight=False,
        )
    if not done:
        raise Failure("no entry could be measured")
    intro = (
        f"oha at a fixed rate (-q) with --latency-correction (each request timed from when it was due), "
        f"{connections} connections, {seconds} s per rate, after a warm-up ({warmups(done)}) and an unbounded "
        "run that measures the capacity; "
        f"server on CPU {cfg.server_cpus} (one thread), oha on CPU {cfg.client_cpus}."
    )
    data = write_json(out, "latency", intro, seconds, done)
    md, page = latency_report(done, out, intro)
    rewrite_run_report(run)
    console.print(f"results: {data}\nreports: {md}\n         {page}")
