"""What several commands share: --modes parsed once (parse_modes), --duration and --connections,
and the load commands'
(sweep, latency, stack) options, entries, configuration and output directory."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import click

from ..bench import plan
from ..core import results
from ..core.model import Config
from ..ui import err_console
from .common import Failure, check_cpus, ensure_built, load_entries


def parse_modes(value: str, known, option: str = "--modes") -> tuple[str, ...]:
    """--modes: a comma-separated subset of known (names), in the order given; bad input is a
    click.BadParameter naming the option, the unknown mode and the known ones (exit 2)."""
    chosen = tuple(m.strip() for m in value.split(",") if m.strip())
    unknown = [m for m in chosen if m not in known]
    if unknown or not chosen:
        what = f"unknown mode {unknown[0]!r}" if unknown else "no mode"
        raise click.BadParameter(f"{what} (known: {', '.join(known)})", param_hint=f"'{option}'")
    return chosen


def chosen_entries(ctx, entries) -> list:
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


def out_dir(ctx, kind: str, results_dir: Path | None, run: Path | None = None) -> Path:
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


def load_config(server_cpus: str, client_cpus: str, connections: int) -> Config:
    return replace(
        Config(),
        server_cpus=check_cpus("--server-cpus", server_cpus),
        client_cpus=check_cpus("--client-cpus", client_cpus),
        connections=connections,
        warmup_s=plan.WARMUP_S,  # as a bench's; an entry's own warmup_s when longer (load.warmup.warmup_s)
    )


# --duration, seconds measured per sample, ranged by what the command's runs are for: a bench
# up to an hour (a soak of one mode), the gate up to 10 min (its pairs run back to back, so
# a sample's length multiplies), a stack up to a minute (each sample starts the stack afresh).
DURATION_MOST_S = {"bench": 3600, "gate": 600, "stack": 60}
# --connections: wrk's, h2load's or oha's open connections (bench, gate, stack, sweep's top, latency)
connections_option = click.option("--connections", type=click.IntRange(1, 10000), default=50, show_default=True)


def duration_option(command: str, default: int | None, help_text: str):
    """--duration for command (a key of DURATION_MOST_S): seconds, from 1 to its most."""
    return click.option(
        "--duration", type=click.IntRange(1, DURATION_MOST_S[command]), default=default, help=help_text,
        show_default=default is not None,
    )  # fmt: skip


COMMON = [
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


def rewrite_run_report(run: Path | None) -> None:
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
    """The options every load command takes: --server-cpus, --client-cpus, --results, --run."""
    for option in reversed(COMMON):
        f = option(f)
    return f
