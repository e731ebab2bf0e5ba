"""`arena sweep`: how many simultaneous clients does an entry hold? (docs/arena/curves.md)

One fresh server per entry (pinned, one thread, as in a bench), then wrk (closed loop, one
thread, keep-alive) at concurrency 1, 2, 4, … up to `top` (4 096), `seconds` at each step,
after a warm-up at 8 connections as long as a bench's (load.warmup.warmup_s: 1 s, or the entry's
own). Each step records requests/s, p50, p99 and max (µs) and wrk's socket errors. The knee
is the first step where p99 exceeds KNEE_P99 times its value at the lowest concurrency, or
where throughput stops rising (below KNEE_GAIN times the best of the steps before); the
step before it is the most the entry holds at its best.

Results: results/sweep-<id>/sweep.json, report.md and report.html (a chart per entry).
Every run of wrk is bounded (its duration + 30 s); the server is always stopped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..core.model import Config
from ..core.modes import mode
from ..core.sample import ERROR_KINDS
from ..core.schema import Declared, Num, required
from ..entries.manifest import Entry
from ..entries.process import Launch, free_port, launch_ready
from ..load.driver import LoadError
from ..load.warmup import warmup_s
from ..load.wrk import run_wrk, wrk_argv, wrk_script

KNEE_P99 = 2.0  # p99 above twice its low-load value
KNEE_GAIN = 1.05  # throughput that no longer rises by 5% over the best before it


@dataclass
class Step:
    connections: int
    rps: Num
    p50_us: Num
    p99_us: Num
    max_us: Num
    errors: int  # wrk's socket errors (connect, read, write, timeout)


@dataclass
class Sweep(Declared):
    """One entry's sweep in sweep/sweep.json's `sweeps` (a declared format: core/schema.py)."""

    entry: str
    steps: list[Step] = field(default_factory=list)
    error: str | None = None  # why the sweep stopped early
    warmup_s: int = 0  # seconds of load at 8 connections before the first step

    _in_file = required("steps", absent={"warmup_s": 1})  # a sweep written before warmup_s had 1 s

    @property
    def knee(self) -> Step | None:
        """The first step past the knee (see the module's docstring); None: no knee in range."""
        if not self.steps:
            return None
        base = self.steps[0].p99_us
        best = self.steps[0].rps
        for step in self.steps[1:]:
            if step.p99_us > KNEE_P99 * base or step.rps < KNEE_GAIN * best:
                return step
            best = max(best, step.rps)
        return None

    def knee_words(self) -> str:
        knee = self.knee
        if knee is None:
            return "no knee up to the last step"
        base = self.steps[0].p99_us
        why = f"p99 {knee.p99_us / base:.1f}× its low-load value" if knee.p99_us > KNEE_P99 * base else "no more gain"
        return f"knee at {knee.connections} connections ({why})"


def levels(top: int) -> list[int]:
    """1, 2, 4, … up to top (included when it is a power of two)."""
    out, c = [], 1
    while c <= top:
        out.append(c)
        c *= 2
    return out


def sweep(entry: Entry, cfg: Config, seconds: int, top: int, tmp: Path, progress=None) -> Sweep:
    """One entry's sweep (see the module's docstring). progress(connections) before each step."""
    keepalive = mode("keepalive")
    script = wrk_script(keepalive, tmp)
    result = Sweep(entry.name, warmup_s=warmup_s(entry, cfg))
    server = launch_ready(entry, Launch(port=free_port(), threads=1, cpus=cfg.server_cpus))
    url = f"http://127.0.0.1:{server.port}/"

    def argv(connections: int, seconds: int) -> list[str]:
        return wrk_argv(url, keepalive, seconds, cfg, script, connections, extra=("--timeout", "5s"))

    try:
        if result.warmup_s > 0:
            run_wrk(argv(8, result.warmup_s), result.warmup_s)
        for connections in levels(top):
            if progress:
                progress(connections)
            try:
                wrk, _, _ = run_wrk(argv(connections, seconds), seconds)
            except LoadError as err:
                result.error = f"at {connections} connections: {str(err).splitlines()[0]}"
                break
            lat = wrk["latency_us"]
            duration = wrk["duration_us"] / 1e6
            errors = sum(wrk["errors"][k] for k in ERROR_KINDS)
            result.steps.append(
                Step(connections, round(wrk["requests"] / duration, 1), lat["p50"], lat["p99"], lat["max"], errors)
            )
            if server.exited():
                result.error = f"the server exited at {connections} connections"
                break
    finally:
        server.stop()
    return result
