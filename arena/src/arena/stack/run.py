"""`arena stack`: the path users deploy, nginx with TLS in front.

A stack is what answers `https://127.0.0.1:PORT/`:
- `nginx-302` and `nginx-png`: nginx alone (split_clients on $request_id + return 302; a
  static 4 kB PNG), the baselines every other stack is divided by;
- `ENTRY`: nginx in front of a server entry over TCP (upstream keep-alive 32), or
  `ENTRY+unix` over a Unix socket (the entry started with `--listen unix:PATH`);
- an entry that is nginx itself (its `requires` names nginx and its config template has
  `listen {{listen}};`: php-fpm, nginx-lua, …): TLS is put into that nginx's own server block,
  so that there is one nginx, as its users run it.

nginx has one worker; the certificate is made for the run (ECDSA P-256, by openssl); TLS
1.2/1.3, HTTP/1.1 and HTTP/2 (ALPN) on one port. Each sample starts the stack afresh, pinned
with every process on the server's CPUs, checks one answer over HTTPS (a 302 to the
template with k in 1..count; the PNG: 200 and its bytes), warms it up, measures, reads
/proc, stops it. Samples are interleaved: for rep, for mode, for stack. Every load sends the
run's request mix (--mix, mix.py): wrk through its Lua script, h2load through a file of the
same sequence's request-targets (-i).

CPU of the stack = utime + stime (+ those of reaped children) of every process of its trees
(nginx, and the entry's), split by process name (comm) and by user/kernel time, so that the
entry's share and where the kernel's work goes can be read. Peak RSS = Σ VmHWM over them.

Here the measurement: one sample, the samples in their interleaved order, the record. What a
stack is: stack/define.py; starting one and its nginx.conf: stack/front.py; reading /proc: stack/read.py;
h2load: load/h2load.py.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import SerializerFunctionWrapHandler, model_serializer
from typing_extensions import TypedDict  # pydantic reads typing's only from Python 3.12

from ..core.model import Config
from ..core.modes import Mode
from ..core.schema import Declared, Num, required
from ..entries.process import StartError
from ..load import mix as mixes
from ..load.driver import LoadError
from ..load.h2load import run_h2load
from ..load.interleave import Step, order, run_interleaved
from ..load.wrk import fold_errors, run_wrk, wrk_argv, wrk_script
from .define import (
    BASELINE,
    BASELINES,
    COUNT,
    DEFAULT,
    DEFAULT_POLICY,
    H2_STREAMS,
    MODES,
    TARGETS,
    UPSTREAM_KEEPALIVE,
    Described,
    Stack,
    StackError,
    StackMode,
    Target,
    resolve,
)
from .front import make_certificate, start_stack
from .read import cpu_by_process, cpu_ticks

# What `arena stack` (cli/stack.py) and its report (report/stacks.py) take from here.
__all__ = ["BASELINE", "BASELINES", "DEFAULT", "MODES", "TARGETS", "Stack", "StackError", "StackMode", "StackRun"]
__all__ += ["StackSample", "Target", "measure", "method_words", "order", "resolve", "run"]


# --- one sample --------------------------------------------------------------------------


@dataclass
class StackSample(Declared):
    """One sample in stack.json's `samples`."""

    stack: str
    mode: str
    rep: int
    requests: int  # answered during the measured period
    duration_s: Num
    rps: Num
    p50_us: Num | None
    p99_us: Num | None
    unexpected: int  # answers the load generator saw that were not of the expected status class
    socket_errors: int
    cpu: dict[str, list[Num]]  # process name -> [user s, kernel s], every process of the stack
    client_cpu_s: Num
    wall_s: Num
    peak_rss_bytes: int  # Σ VmHWM over the stack's processes

    @property
    def cpu_s(self) -> float:
        return sum(u + k for u, k in self.cpu.values())

    @property
    def cpu_us_per_req(self) -> float | None:
        return self.cpu_s * 1e6 / self.requests if self.requests else None

    @property
    def entry_share(self) -> float | None:
        """The share of the stack's CPU spent outside nginx (the entry's processes)."""
        total = self.cpu_s
        return sum(u + k for name, (u, k) in self.cpu.items() if name != "nginx") / total if total else None

    def us_per_req(self, nginx: bool, kernel: bool) -> float | None:
        """CPU µs per request of nginx (or of the rest), in user (or kernel) time."""
        if not self.requests:
            return None
        used = sum(v[1 if kernel else 0] for name, v in self.cpu.items() if (name == "nginx") == nginx)
        return used * 1e6 / self.requests


def measure(
    stack: Stack,
    mode: StackMode,
    rep: int,
    cfg: Config,
    cert: Path,
    key: Path,
    work: Path,
    policy: str = DEFAULT_POLICY,
) -> StackSample:
    """One fresh stack: started (its daemon scheduled by policy), its answer checked, warmed
    up, measured, stopped. Raises StartError, StackError or LoadError."""
    running = start_stack(stack, mode, cfg.server_cpus, cert, key, policy)
    try:
        problem = running.answer_problem()
        if problem:
            raise StackError(f"{stack.name}: {problem}")
        url = f"https://127.0.0.1:{running.port}{stack.path}"
        requests = mixes.mix(cfg.mix)
        uris = None  # h2load's -i file of the mix's request-targets; none: every request the URL's
        if mode.tool == "h2load" and not requests.is_default:
            uris = mixes.write_uris(requests, url, work / "h2load-uris.txt")

        def load(seconds: int) -> tuple[dict, float, float]:
            if mode.tool == "h2load":
                return run_h2load(url, seconds, cfg, stack.expect, H2_STREAMS, work, uris)
            wrk_mode = Mode(mode.name, mode.words, ("-H", "Connection: close") if mode.close else ())
            wrk, cpu, wall = run_wrk(wrk_argv(url, wrk_mode, seconds, cfg, work / "report.lua"), seconds)
            wrk["errors"] = fold_errors(wrk["errors"])
            return wrk, cpu, wall

        if cfg.warmup_s > 0:
            load(cfg.warmup_s)
        before = cpu_ticks(running.tree_pids())
        figures, client_cpu, wall = load(cfg.duration_s)
        after = cpu_ticks(running.tree_pids())
        peak = running.peak_rss_bytes()
        gone = running.exited()
        if gone:
            raise StackError(f"{stack.name}: {gone} during the run")
    finally:
        running.stop()
    duration = figures["duration_us"] / 1e6
    lat = figures["latency_us"]
    return StackSample(
        stack.name,
        mode.name,
        rep,
        figures["requests"],
        round(duration, 3),
        round(figures["requests"] / duration, 1),
        lat.get("p50"),
        lat.get("p99"),
        figures["errors"]["status"],
        figures["errors"]["socket"],
        cpu_by_process(before, after),
        round(client_cpu, 3),
        round(wall, 3),
        peak,
    )


# --- the whole measurement ----------------------------------------------------------------


class StackFailure(TypedDict):
    stack: str
    mode: str  # "all": the stack was not measured at all
    rep: int
    reason: str


@dataclass
class StackRun(Declared):
    """Every sample of one `arena stack`, and what could not be measured: stack.json, a
    declared format (core/schema.py)."""

    config: dict[str, Any]  # the options and constants it ran with (run() below)
    stacks: list[Described]
    samples: list[StackSample] = field(default_factory=list)
    failures: list[StackFailure] = field(default_factory=list)
    method: str = ""

    _in_file = required("samples", "failures", "method")

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict:
        """The method first."""
        return {"method": self.method} | handler(self)


def run(
    stacks: list[Stack],
    modes: list[str],
    cfg: Config,
    progress=None,
    skipped: dict[str, str] | None = None,
    policy: str = DEFAULT_POLICY,
) -> StackRun:
    """Measures every stack in every mode cfg.repetitions times, interleaved (load/interleave.py). A stack that
    cannot start is tried no more, and said in `failures` with the reason; the others go on.
    skipped: stack name -> why it is not measured at all (an entry unavailable or unbuilt),
    kept in the record as a failure. progress(done, total, words) before each sample. policy:
    how every daemon behind nginx is scheduled (stackdef.POLICIES)."""
    record = StackRun(
        {
            "server_cpus": cfg.server_cpus,
            "client_cpus": cfg.client_cpus,
            "connections": cfg.connections,
            "duration_s": cfg.duration_s,
            "warmup_s": cfg.warmup_s,
            "repetitions": cfg.repetitions,
            "modes": list(modes),
            "count": COUNT,
            "upstream_keepalive": UPSTREAM_KEEPALIVE,
            "h2_streams": H2_STREAMS,
            "mix": cfg.mix,
            "daemon_policy": policy,
        },
        [s.to_json() for s in stacks],
    )
    load_before = os.getloadavg()[0]
    skipped = skipped or {}
    record.failures += [{"stack": name, "mode": "all", "rep": 0, "reason": why} for name, why in skipped.items()]
    work = Path(tempfile.mkdtemp(prefix="arena-stack-run-"))
    try:
        os.chmod(work, 0o755)
        cert, key = make_certificate(work)
        wrk_script(Mode("report", ""), work, cfg.mix)  # work/report.lua: wrk's done() printing JSON, the mix

        def sample(step: Step[Stack]) -> None:
            record.samples.append(measure(step.subject, MODES[step.mode], step.rep, cfg, cert, key, work, policy))

        def failed(step: Step[Stack], err: Exception) -> None:
            failure = {"stack": step.subject.name, "mode": step.mode, "rep": step.rep, "reason": str(err).strip()}
            record.failures.append(failure)

        def said(done: int, total: int, step: Step[Stack]) -> None:
            if progress:
                progress(done, total, f"{step.subject.name}, {step.mode}, repetition {step.rep + 1}")

        steps = order(stacks, modes, cfg.repetitions)
        errors = (StartError, StackError, LoadError)
        run_interleaved(steps, sample, failed, errors, gives_up=(StartError,), skipped=set(skipped), progress=said)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    record.config["load_average"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]  # 1 min, start and end
    return record


def method_words(cfg: Config, record: StackRun | None = None) -> str:
    """How the stacks were measured, in words, for the report (with the machine's load average)."""
    load = record.config.get("load_average") if record else None
    busy = f" Load average (1 min): {load[0]:g} at the start, {load[1]:g} at the end." if load else ""
    policy = record.config.get("daemon_policy", "normal") if record else DEFAULT_POLICY
    scheduled = (
        "A daemon behind nginx runs under SCHED_BATCH, as deploy/renard.service runs renard "
        "(CPUSchedulingPolicy=batch: its wake-ups do not preempt nginx); nginx under the normal policy. "
        if policy == "batch"
        else "Every process under the normal scheduling policy. "
    )
    return (
        f"nginx 1.22 in front (one worker; TLS 1.2/1.3 with an ECDSA P-256 certificate made for the run; "
        f"HTTP/1.1 and HTTP/2 on one port; upstream keep-alive {UPSTREAM_KEEPALIVE} to the entry, which has "
        f"one thread), every process of the stack pinned to CPU {cfg.server_cpus}, the load generator to CPU "
        f"{cfg.client_cpus} with {cfg.connections} connections (wrk -t1; h2load -t1 -m{H2_STREAMS} for HTTP/2). "
        f"{cfg.repetitions} repetitions of {cfg.duration_s} s after {cfg.warmup_s} s of warm-up, a fresh stack per "
        "sample, stacks and modes interleaved; medians with min–max. Each stack answered one HTTPS GET correctly "
        "(a 302 to the template, or the PNG) before each sample. CPU µs/req: utime + stime of every process of "
        "the stack (nginx, the entry, their children) ÷ requests answered. wrk and h2load both resume the TLS "
        "session when they reconnect; the handshake mode turns resumption off in nginx (no session cache, no "
        "tickets), so that each connection pays a full handshake. " + scheduled + mix_words(cfg.mix) + busy
    )


def mix_words(name: str) -> str:
    """The requests sent, for the report: the mix (mix.py) and how each load generator sends it."""
    said = f"Requests sent (--mix {name}): {mixes.words(name)}."
    if name in mixes.MIXES and not mixes.mix(name).is_default:
        said += (
            " wrk draws them from one sequence for all its connections; h2load (-i, a file of the sequence's "
            f"first {mixes.PERIOD:,} request-targets) walks it from its start on each connection, so a "
            "cache-buster's N is sent once per connection."
        )
    return said
