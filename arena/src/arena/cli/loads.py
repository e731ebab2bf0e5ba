"""The commands that load an entry beyond the bench: `arena sweep`, `arena latency`,
`arena history`, `arena stack` (registered on the `arena` group by cli.py)."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace
from pathlib import Path

import click

from ..analysis import history
from ..bench import plan
from ..bench.measure import WrkError
from ..core import results
from ..core.model import Config
from ..curves import latency
from ..curves.sweep import levels, sweep
from ..entries.process import StartError
from ..load.mix import DEFAULT_MIX, MIXES, OPTION_HELP
from ..report import stacks as stack_report
from ..report.loads import latency_report, sweep_report, write_json
from ..stack import run as stack
from ..stack.define import DEFAULT_POLICY, POLICIES
from ..ui import console, err_console, spinner
from .common import Failure, check_cpus, ensure_built, load_entries


def _chosen(ctx, entries) -> list:
    log_dir = ctx.obj["repo"] / "results" / "logs"
    chosen = []
    for entry in load_entries(ctx, entries):
        if not entries and (entry.kind == "ours" and not entry.available or not entry.available):
            continue
        why = entry.reason or ensure_built(entry, log_dir)
        if why:
            err_console.print(f"[yellow]{entry.name}[/]: {why}", highlight=False)
            continue
        chosen.append(entry)
    if not chosen:
        raise Failure("no entry can be measured")
    return chosen


def _out_dir(ctx, kind: str, results_dir: Path | None, run: Path | None = None) -> Path:
    """RUN/<kind> with --run (the run's report then includes it), else results/<kind>-<id>."""
    if run is not None:
        out = (run if run.is_dir() else run.parent).resolve() / kind
        out.mkdir(parents=True, exist_ok=True)
        return out
    base = results_dir or ctx.obj["repo"] / "results"
    started = results.utc_now()
    out = base / f"{kind}-{started.strftime('%Y%m%d-%H%M%S')}"
    out.mkdir(parents=True, exist_ok=True)
    return out


def _cfg(server_cpus: str, client_cpus: str, connections: int) -> Config:
    return replace(
        Config(),
        server_cpus=check_cpus("--server-cpus", server_cpus),
        client_cpus=check_cpus("--client-cpus", client_cpus),
        connections=connections,
        warmup_s=plan.WARMUP_S,  # as a bench's; an entry's own warmup_s when longer (bench.warmup_s)
    )


common = [
    click.option("--server-cpus", default="0", show_default=True, help="CPUs the server is pinned to."),
    click.option("--client-cpus", default="1", show_default=True, help="CPUs the load generator is pinned to."),
    click.option(
        "--results", "results_dir", type=click.Path(file_okay=False, path_type=Path), help="Default: results/"
    ),
    click.option(
        "--run",
        type=click.Path(exists=True, path_type=Path),
        help="Write into this bench run's directory (e.g. results/latest); its report includes the result.",
    ),
]


def _rewrite_run_report(run: Path | None) -> None:
    """Rewrites the run's own report so that it includes the results just written."""
    if run is None:
        return
    from ..core.model import Run
    from ..report import write_run_reports

    run_dir = run if run.is_dir() else run.parent
    try:
        write_run_reports(Run.read(run_dir), run_dir)
    except (ValueError, OSError) as err:
        err_console.print(f"[yellow]{run_dir}: its report was not rewritten ({err})[/]", highlight=False)


def warmups(results: list) -> str:
    """The warm-up of each result in words: "1 s; java-seed 10 s" (the entries with their own)."""
    usual = min(r.warmup_s for r in results)
    own = [f"{r.entry} {r.warmup_s} s" for r in results if r.warmup_s > usual]
    return "; ".join([f"{usual} s", *own])


def with_common(f):
    for option in reversed(common):
        f = option(f)
    return f


@click.command("sweep")
@click.argument("entries", nargs=-1)
@click.option("--seconds", type=click.IntRange(1, 60), default=2, show_default=True, help="Seconds per step.")
@click.option("--top", type=click.IntRange(1, 4096), default=4096, show_default=True, help="Highest concurrency.")
@with_common
@click.pass_context
def sweep_cmd(ctx, entries, seconds, top, server_cpus, client_cpus, results_dir, run):
    """Concurrency 1, 2, 4 … --top against each ENTRY (default: every available one): the knee."""
    cfg = _cfg(server_cpus, client_cpus, 1)
    chosen = _chosen(ctx, entries)
    out = _out_dir(ctx, "sweep", results_dir, run)
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
                except (StartError, WrkError) as err:
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
    _rewrite_run_report(run)
    console.print(f"results: {data}\nreports: {md}\n         {page}")


@click.command("latency")
@click.argument("entries", nargs=-1)
@click.option("--seconds", type=click.IntRange(1, 60), default=5, show_default=True, help="Seconds per rate.")
@click.option("--connections", type=click.IntRange(1, 10000), default=50, show_default=True)
@with_common
@click.pass_context
def latency_cmd(ctx, entries, seconds, connections, server_cpus, client_cpus, results_dir, run):
    """Latency percentiles at 25/50/75/90% of each ENTRY's capacity (oha, open loop)."""
    problem = latency.oha_problem()
    if problem:
        raise Failure(problem)
    cfg = _cfg(server_cpus, client_cpus, connections)
    chosen = _chosen(ctx, entries)
    out = _out_dir(ctx, "latency", results_dir, run)
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
            except (StartError, latency.OhaError) as err:
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
    _rewrite_run_report(run)
    console.print(f"results: {data}\nreports: {md}\n         {page}")


@click.command("history")
@click.argument("entries", nargs=-1)
@click.option("--file", "path", type=click.Path(dir_okay=False, path_type=Path), help="Default: results/history.jsonl")
@click.option("--include-quick", is_flag=True, help="Count quick runs too (left out by default).")
@click.pass_context
def history_cmd(ctx, entries, path, include_quick):
    """The changes of level in the bench history (E-Divisive), with the run and commit of each."""
    path = path or ctx.obj["repo"] / "results" / history.FILE
    if not path.is_file():
        raise Failure(f"no history at {path}: each `arena bench` appends a line to it")
    lines = history.read(path)
    found = history.changes(lines, list(entries), include_quick)
    console.print(f"{len(lines)} runs in {path}; {len(found)} changes (E-Divisive, p < {history.PVALUE})")
    for change in found:
        console.print(change.words(), highlight=False)


@click.command("stack")
@click.argument("stacks", nargs=-1)
@click.option(
    "--modes",
    default=",".join(stack.MODES),
    show_default=True,
    help="Comma-separated: " + "; ".join(f"{m.name}: {m.words}" for m in stack.MODES.values()),
)
@click.option("--duration", type=click.IntRange(1, 60), default=3, show_default=True, help="Seconds measured.")
@click.option("--warmup", type=click.IntRange(0, 60), default=1, show_default=True, help="Seconds of load before.")
@click.option("--reps", type=click.IntRange(1, 20), default=3, show_default=True, help="Interleaved repetitions.")
@click.option("--connections", type=click.IntRange(1, 10000), default=50, show_default=True)
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
    chosen_modes = [m.strip() for m in modes.split(",") if m.strip()]
    unknown = [m for m in chosen_modes if m not in stack.MODES]
    if unknown or not chosen_modes:
        what = f"unknown mode {unknown[0]!r}" if unknown else "no mode"
        raise click.BadParameter(f"{what} (known: {', '.join(stack.MODES)})", param_hint="'--modes'")
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
        _cfg(server_cpus, client_cpus, connections),
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
    out = _out_dir(ctx, "stack", results_dir, run)
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
    _rewrite_run_report(run)
    console.print(f"results: {data}\nreports: {md}\n         {page}")


COMMANDS = [sweep_cmd, latency_cmd, history_cmd, stack_cmd]
