"""The benchmark: startup time, then wrk in each mode, entries interleaved, one fresh server
process per sample, server and load generator pinned to their own cores."""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..core.model import Config
from ..core.modes import mode, runs_in
from ..core.sample import Sample
from ..entries.handle import Handle
from ..entries.manifest import Entry
from ..entries.outside import Outside
from ..entries.process import Launch, StartError, free_port, launch_ready, start
from ..entries.remote import Remote
from ..host import conntrack, hostload, notrack
from ..host.cgroup import CapError, CpuCap
from ..load.driver import LoadError
from ..load.interleave import Step, order
from ..load.warmup import Window, until_steady, warmup_s
from ..load.wrk import run_wrk, wrk_argv, wrk_rps, wrk_script
from . import plan

WRONG_FOR_S = 3.0  # a start that answers only wrongly for this long has failed (a 502 while a backend starts passes)


def startup_ms(entry: Entry, launch: Launch, timeout_s: float = 30.0) -> float:
    """Milliseconds from exec to the first correct 302, polling connect about every 1 ms.
    The server is stopped afterwards. Raises StartError when no correct answer comes within
    timeout_s, or when it answers, but only wrongly, for WRONG_FOR_S."""
    server = start(entry, launch)
    try:
        deadline = time.monotonic() + timeout_s
        problem, wrong_since = "no answer", None
        while time.monotonic() < deadline:
            if server.proc.poll() is not None:
                raise StartError(f"{entry.name} exited with status {server.proc.returncode}\n{server.output_tail()}")
            try:
                problem = server.answer_problem()
            except OSError as e:
                problem, wrong_since = f"cannot connect: {e}", None
            else:
                wrong_since = (wrong_since or time.monotonic()) if problem else None
            if not problem:
                return (time.perf_counter() - server.started_at) * 1000
            if wrong_since and time.monotonic() - wrong_since > WRONG_FOR_S:
                raise StartError(
                    f"{entry.name}: only wrong answers for {WRONG_FOR_S:g} s: {problem}\n{server.output_tail()}"
                )
            time.sleep(0.001)
        raise StartError(f"{entry.name}: no correct 302 within {timeout_s:g} s: {problem}\n{server.output_tail()}")
    finally:
        server.stop()


class SampleError(Exception):
    """A sample the entry failed: it did not start, did not answer, answered wrongly, exited,
    stopped answering, or wrk could not measure it. str() is the reason in one line; tail is
    the server's stderr tail (and a peer's own log) for the run's logs folder."""

    def __init__(self, reason: str, tail: str = ""):
        super().__init__(reason)
        self.reason, self.tail = reason, tail


def _machine_fault(dropped_before: int | None) -> str:
    """Why the sample is the machine's failure (packets dropped by a full conntrack table
    since dropped_before), or ""."""
    dropped = (conntrack.drops() or 0) - (dropped_before or 0)
    if dropped_before is None or dropped <= 0:
        return ""
    return (
        f"the machine, not the entry: the kernel dropped {dropped} packets of new connections, "
        "its connection-tracking table full (nf_conntrack_max; see docs/arena/method.md)"
    )


def keep_unstolen(load: Callable[[], Sample], may_repeat: Callable[[], bool] = lambda: True) -> Sample:
    """load() once, and once more when its CPUs were stolen from beyond modes.STEAL_LIMIT (a
    VM's steal time: the neighbour, not the server) and may_repeat() allows it (a bench's
    repeats are budgeted: plan.may_repeat): the repeat is kept whatever it shows, with
    steal_retry the first one's steal share; a stolen sample kept, repeated or not, is flagged
    by the report. The repeat is one more load run on the same warm server (its start and
    warm-up are not repeated: 107 of 363 samples were repeated in run 20261128-135607, and
    their fresh starts and warm-ups cost 518 s of its 72 min)."""
    sample = load()
    if not sample.under_steal or not may_repeat():
        return sample
    first = sample.steal_share
    sample = load()
    sample.steal_retry = first
    return sample


def _cpus(spec: str) -> list[int]:
    try:
        return hostload.cpu_list(spec)
    except ValueError:
        return []


def check_answer(server: Handle, when: str, tail: Callable[[], str]) -> None:
    """One checked `GET` (Handle.answer_problem); raises SampleError saying `when` it failed:
    what ended the server when it is gone, else what came back."""
    try:
        problem = server.answer_problem()
    except OSError as err:  # connect or read timed out, refused, reset
        problem = f"cannot connect: {err}" if not str(err).startswith("timed out") else "no answer: timed out"
    if problem:
        raise SampleError(f"{when}: {server.exited() or problem}", tail())


def measure_sample(
    entry: Entry,
    mode_name: str,
    rep: int,
    cfg: Config,
    scripts: dict[str, Path],
    may_repeat: Callable[[], bool] = lambda: True,
) -> Sample:
    """One sample of an entry on a fresh server the arena starts, or of a running server
    (remote.Remote: --url), measured alike over a Handle. A started server is pinned with one
    thread, checked, warmed up on its whole core, then moved into a cgroup (in a capped mode a
    CPU cap; else uncapped, to read its CPU time at the kernel's resolution), measured, checked
    again and stopped; its load run is repeated once on the warm server when its CPUs were
    stolen from and may_repeat() allows it (keep_unstolen). Warming up uncapped brings every
    mode to the same steady state (a JIT compiles at the same pace), so that a capped sample
    differs from a dedicated one by the cap alone. A running server is never started, capped or
    stopped; its CPU and memory are its --pid's tree's, else None. Raises SampleError for
    anything the entry (or, for conntrack, the machine) did wrong."""
    began = time.monotonic()
    m = mode(mode_name)
    remote = entry if isinstance(entry, Remote) else None
    if remote and m.capped:
        raise SampleError(f"{mode_name}: a capped mode needs a server the arena starts (it makes the cgroup)")
    if remote:
        server, url, tail = remote, remote.url, lambda: ""
    else:
        launch = Launch(port=free_port(), threads=1, cpus=cfg.server_cpus)
        try:
            server = launch_ready(entry, launch)
        except StartError as err:
            reason, _, output = str(err).partition("\n")
            raise SampleError(f"does not start: {reason}", output) from None
        url = f"http://{launch.host}:{server.port}{entry.path if isinstance(entry, Outside) else '/'}"
        tail = server.output_tail
    cap = None
    dropped_before = conntrack.drops()
    try:
        check_answer(server, "before the run", tail)

        def warm_window(seconds: int) -> Window:
            """One warm-up window: requests/s and the server's CPU µs per request (steadiness is
            judged on the latter: a cold JIT's throughput can look steady, its cost cannot)."""
            before = server.cpu_seconds()
            wrk = run_wrk(wrk_argv(url, m, seconds, cfg, scripts[mode_name]), seconds)[0]
            after = server.cpu_seconds()
            if before is None or after is None or not wrk["requests"]:
                return Window(wrk_rps(wrk))
            return Window(wrk_rps(wrk), round((after - before) * 1e6 / wrk["requests"], 3))

        warm_began = time.monotonic()
        warmed = until_steady(warm_window, warmup_s(entry, cfg), cfg.warmup_s)
        warmed_at = time.monotonic()
        if not remote and (m.capped or cfg.cpu_quota is not None):  # every mode's CPU in one cgroup, if it can
            cap = CpuCap.create(cfg.cpu_quota if m.capped else None)
            cap.add(server.tree_pids())
        tracked = None if remote else notrack.tracked()
        limit = cfg.cpu_quota if m.capped else 1.0

        def load() -> Sample:
            """One measured wrk run on the warm server, checked after; raises SampleError."""
            cpu_before, jiffies_before = server.cpu_seconds(), hostload.Jiffies.read()
            cgroup_before = cap.usage_s() if cap else None
            wrk, client_cpu, wall = run_wrk(wrk_argv(url, m, cfg.duration_s, cfg, scripts[mode_name]), cfg.duration_s)
            cpu_after = server.cpu_seconds()
            cgroup_after = cap.usage_s() if cap else None
            cpus = _cpus(cfg.client_cpus) if remote else _cpus(cfg.server_cpus) + _cpus(cfg.client_cpus)
            steal = hostload.steal_share(jiffies_before, hostload.Jiffies.read(), cpus)
            load_1m = hostload.load_1m()
            peak_rss, pss = server.peak_rss_bytes(), server.pss_bytes()
            gone = server.exited()  # "exited with status 3", "process 7 (--pid) exited"
            if gone:
                raise SampleError(gone.replace("exited", "exited during the run", 1), tail())
            check_answer(server, "after the run", tail)
            if not wrk["requests"]:
                errors = ", ".join(f"{k} {n}" for k, n in wrk["errors"].items() if n) or "none"
                raise SampleError(f"answered no request during the run (wrk's errors: {errors})", tail())
            server_cpu = None if cpu_before is None or cpu_after is None else cpu_after - cpu_before
            got = Sample.from_wrk(entry.name, mode_name, rep, wrk, client_cpu, wall, server_cpu, peak_rss, pss, limit)
            got.steal_share, got.load_1m, got.tracked = steal, load_1m, tracked
            if cgroup_before is not None and cgroup_after is not None:
                got.cgroup_cpu_s = round(cgroup_after - cgroup_before, 6)
            return got

        sample = keep_unstolen(load, may_repeat)
    except (SampleError, LoadError, CapError) as err:
        reason, tail_text = (err.reason, err.tail) if isinstance(err, SampleError) else (str(err), tail())
        raise SampleError(_machine_fault(dropped_before) or reason, tail_text) from None
    finally:
        if not remote:
            server.stop()
        if cap:
            cap.remove()
    fault = _machine_fault(dropped_before)
    if fault:
        raise SampleError(fault)
    sample.warmup_rps, sample.warmup_steady = warmed.rps or None, warmed.steady
    sample.warmup_cpu_us = warmed.cpu_us or None
    sample.warmup_lead_s = warmed.lead_s or None
    sample.warmup_took_s = round(warmed_at - warm_began, 3)
    sample.took_s = round(time.monotonic() - began, 3)
    return sample


def measure_startup(entry: Entry, cfg: Config) -> list[float]:
    """Milliseconds from exec to the first correct 302, cfg.startup_runs times; raises StartError."""
    return [
        round(startup_ms(entry, Launch(port=free_port(), threads=1, cpus=cfg.server_cpus)), 2)
        for _ in range(cfg.startup_runs)
    ]


@dataclass
class Plan:
    """The interleaved order of samples (load/interleave.order): for rep, for mode, for entry,
    each entry in its tier's modes only (modes.runs_in)."""

    entries: list[Entry]
    cfg: Config
    steps: list[Step[Entry]] = field(init=False)

    def __post_init__(self):
        steps = order(self.entries, self.cfg.modes, self.cfg.repetitions)
        self.steps = [s for s in steps if runs_in(s.subject.tier, s.mode)]  # a tier's own modes

    def seconds(self, start: int = 0, stop: int | None = None) -> float:
        """The expected seconds of steps[start:stop] (all of them by default)."""
        return sum(plan.sample_s(s.subject, self.cfg) for s in self.steps[start:stop])


@contextmanager
def wrk_scripts(cfg: Config) -> Iterator[dict[str, Path]]:
    """Each mode's wrk script with the run's request mix, in a temporary folder removed when the
    block ends, however it ends."""
    with tempfile.TemporaryDirectory(prefix="arena-wrk-", ignore_cleanup_errors=True) as tmp:
        yield {name: wrk_script(mode(name), Path(tmp), cfg.mix) for name in cfg.modes}
