"""`arena run ENTRY`: build if needed and serve in the foreground until Ctrl-C or SIGTERM."""

from __future__ import annotations

import os
import signal
import sys

import click

from ..entries.process import Launch, StartError, free_port, start
from .common import Failure, ensure_built, load_entries, parse_listen


@click.command("run")
@click.argument("entry")
@click.option("--listen", default="127.0.0.1:8080", show_default=True, help="HOST:PORT (numeric).")
@click.option("--count", type=click.IntRange(1, 1_000_000), default=21, show_default=True)
@click.option("--location", default="https://avatar.example.org/Renard-{n}.png", show_default=True)
@click.option("--threads", type=click.IntRange(1, 1024), default=None, help="Default: the CPUs available.")
@click.pass_context
def run(ctx, entry, listen, count, location, threads):
    """Build if needed and run ENTRY in the foreground; Ctrl-C stops it."""
    (e,) = load_entries(ctx, (entry,))
    if not e.available:
        raise Failure(f"{e.name} is unavailable: {e.reason}")
    if "{n}" not in location:
        raise click.BadParameter("must contain {n}", param_hint="'--location'")
    host, port = parse_listen(listen)
    if port == 0 and e.ready == "port":
        port = free_port(host)  # a peer cannot report the port it picked
    problem = ensure_built(e, ctx.obj["repo"] / "results" / "logs")
    if problem:
        raise Failure(problem)
    launch = Launch(
        host=host, port=port, count=count, location=location, threads=threads or len(os.sched_getaffinity(0))
    )
    server = start(e, launch, echo=lambda line: print(line, file=sys.stderr, flush=True), inherit_stdout=True)
    signal.signal(signal.SIGTERM, _interrupt)  # `kill arena` stops the entry like Ctrl-C
    try:
        server.wait_ready()
        if e.ready == "port":
            host_text = f"[{host}]" if ":" in host else host
            print(f"listening on http://{host_text}:{server.port}", file=sys.stderr, flush=True)
        status = server.proc.wait()
    except StartError as err:
        raise Failure(str(err)) from None
    except KeyboardInterrupt:
        status = server.stop()
        print(f"arena: stopped {e.name} (exit status {status})", file=sys.stderr)
        return
    server.stop()
    if status != 0:
        raise Failure(f"{e.name} exited with status {status}")


def _interrupt(signum, frame):
    raise KeyboardInterrupt
