"""`arena sweep`: concurrency 1, 2, 4 … against each entry, and its knee."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import click

from ..curves.sweep import levels, sweep
from ..entries.process import StartError
from ..load.driver import LoadError
from ..report.loads import sweep_report, write_json
from ..ui import console, err_console, spinner
from .common import Failure
from .options import chosen_entries, load_config, out_dir, rewrite_run_report, warmups, with_common


@click.command("sweep")
@click.argument("entries", nargs=-1)
@click.option("--seconds", type=click.IntRange(1, 60), default=2, show_default=True, help="Seconds per step.")
@click.option("--top", type=click.IntRange(1, 4096), default=4096, show_default=True, help="Highest concurrency.")
@with_common
@click.pass_context
def sweep_cmd(ctx, entries, seconds, top, server_cpus, client_cpus, results_dir, run):
    """Concurrency 1, 2, 4 … --top against each ENTRY (default: every available one): the knee."""
    cfg = load_config(server_cpus, client_cpus, 1)
    chosen = chosen_entries(ctx, entries)
    out = out_dir(ctx, "sweep", results_dir, run)
    steps = levels(top)
    minutes = len(chosen) * len(steps) * (seconds + 0.5) / 60
    console.print(f"sweep: {len(chosen)} entries × {len(steps)} steps × {seconds} s (≈ {minutes:.1f} min)")

    done = []
    tmp = Path(tempfile.mkdtemp(prefix="arena-sweep-"))
    try:
        for entry in chosen:
            with spinner() as p:
                task = p.add_task(entry.name, total=None)
                try:
                    s = sweep(
                        entry,
                        cfg,
                        seconds,
                        top,
                        tmp,
                        lambda c, p=p, t=task, n=entry.name: p.update(t, description=f"{n}: {c} connections"),
                    )
                except (StartError, LoadError) as err:
                    err_console.print(f"[red]{entry.name}[/]: {str(err).splitlines()[0]}", highlight=False)
                    continue
            done.append(s)
            best = max(s.steps, key=lambda st: st.rps, default=None)
            at = f", best {best.rps:,.0f} requests/s at {best.connections}" if best else ""
            console.print(
                f"{s.entry}: {s.knee_words()}{at}" + (f" (stopped {s.error})" if s.error else ""), highlight=False
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not done:
        raise Failure("no entry could be swept")
    intro = (
        f"wrk, one thread, keep-alive, {seconds} s per step after a warm-up at 8 connections "
        f"({warmups(done)}); server on CPU {cfg.server_cpus} "
        f"(one thread), wrk on CPU {cfg.client_cpus}. Knee: the first step where p99 exceeds twice its value at "
        "one connection, or throughput stops rising by 5%. wrk's closed loop: latencies omit queueing before send."
    )
    data = write_json(out, "sweep", intro, seconds, done)
    md, page = sweep_report(done, out, intro)
    rewrite_run_report(run)
    console.print(f"results: {data}\nreports: {md}\n         {page}")
