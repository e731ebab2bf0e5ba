"""One sample: one measured wrk run of one fresh server process, as run.json records it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from pydantic import SerializerFunctionWrapHandler, model_serializer
from typing_extensions import TypedDict  # pydantic reads typing.TypedDict from Python 3.12 only

from .distribution import Distribution
from .modes import CLIENT_BOUND_SHARE, STEAL_LIMIT, mode
from .schema import NOT_SAVED, OMIT_NONE, Declared, Num


@dataclass
class Latency:
    """Percentiles in microseconds; None: not measured (see Mode.timed). Every key required."""

    p50: Num | None
    p90: Num | None
    p99: Num | None
    max: Num | None


ERROR_KINDS = ("connect", "read", "write", "timeout")


class Errors(TypedDict):
    """Socket errors by kind (wrk's, ERROR_KINDS), each required."""

    connect: int
    read: int
    write: int
    timeout: int


@dataclass
class Sample(Declared):
    """One measured wrk run of one fresh server process: samples[] of run.json, the format
    declared here (keys from client_cpu_s on were added to schema 1 later; absent: None,
    and written only when known)."""

    entry: str
    mode: str
    rep: int
    duration_s: Num  # wrk's own measured duration
    requests: int  # answered
    rps: Num
    latency_us: Latency
    errors: Errors  # socket errors by ERROR_KINDS
    non_3xx: int  # answers with a status >= 400 (wrk's errors.status)
    # The server's CPU and memory are None when not known: a server the arena did not start,
    # measured by URL without --pid (remote.py; null in run.json, allowed in schema 1 later).
    server_cpu_s: Num | None  # utime + stime of the server's process tree during the run
    cpu_us_per_req: Num | None  # None when no request was answered, or the CPU is unknown
    client_cpu_share: Num  # wrk's CPU seconds per wall second
    server_cpu_share: Num | None
    peak_rss_bytes: int | None
    pss_bytes: int | None
    client_bound: bool  # wrk's core was the bottleneck, not the server
    client_cpu_s: Annotated[Num | None, OMIT_NONE] = None
    wall_s: Annotated[Num | None, OMIT_NONE] = None
    warmup_rps: Annotated[list[Num] | None, OMIT_NONE] = None  # the warm-up's 1 s windows (warmup.py); None: none
    warmup_steady: bool | None = None  # it ended steady (True) or at its bound (False); None: not judged
    warmup_cpu_us: Annotated[list[Num | None] | None, OMIT_NONE] = None  # the same windows' server CPU µs per request
    # The first warm-up figures are a lead of this many seconds (one run before the 1 s windows,
    # warmup.py); None: every figure is a 1 s window (and in runs before the lead).
    warmup_lead_s: Annotated[int | None, OMIT_NONE] = None
    # The machine around the run (hostload.py; added to schema 1 later, None: not recorded):
    steal_share: Annotated[Num | None, OMIT_NONE] = None  # stolen ÷ all CPU time of the server's and wrk's CPUs
    load_1m: Annotated[Num | None, OMIT_NONE] = None  # the 1-minute load average at the run's end
    steal_retry: Annotated[Num | None, OMIT_NONE] = None  # repeats one taken under steal: that one's steal_share
    # Wall seconds the sample took (bench/measure.py; None: not recorded): took_s from the
    # server's start to its stop (start, checks, warm-up, load runs, a steal repeat included),
    # warmup_took_s the warm-up's share of it.
    took_s: Annotated[Num | None, OMIT_NONE] = None
    warmup_took_s: Annotated[Num | None, OMIT_NONE] = None
    # The server's CPU seconds from its cgroup's counter (capped modes: cpuacct.usage, ns, or
    # v2 usage_usec), beside server_cpu_s from /proc (10 ms ticks); None: not in a cgroup.
    cgroup_cpu_s: Annotated[Num | None, OMIT_NONE] = None
    # Whether netfilter tracked the sample's loopback connections (conntrack.py, notrack.py):
    # False under the bench's NOTRACK rule or with no tracking loaded; None: not recorded.
    tracked: Annotated[bool | None, OMIT_NONE] = None
    # Its latency histogram (distribution.py), written beside run.json in distribution.FILE
    # as the sample is measured; never in run.json, and None in a sample read back from one.
    distribution: Annotated[Distribution | None, NOT_SAVED] = field(default=None, repr=False, compare=False)

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict:
        """warmup_steady beside warmup_rps (null: not judged), and the mode's latency note."""
        d = handler(self)
        if self.warmup_rps is None:
            d.pop("warmup_steady")
        note = mode(self.mode).latency_note
        return d | {"latency_note": note} if note else d

    @property
    def under_steal(self) -> bool:
        """Its CPUs were stolen from beyond STEAL_LIMIT during the run."""
        return self.steal_share is not None and self.steal_share > STEAL_LIMIT

    @property
    def own_cpu_us(self) -> float | None:
        """The server's CPU µs per request: from its cgroup's counter where it sat in one (the
        capped modes: ns resolution), else from /proc (10 ms ticks); None when unknown or none
        answered. What the gate decides on and the capped modes rank on."""
        if self.cgroup_cpu_s is not None and self.requests:
            return self.cgroup_cpu_s * 1e6 / self.requests
        return self.cpu_us_per_req

    @property
    def efficiency(self) -> float | None:
        """Requests per server CPU-second: 1e6 / CPU µs per request."""
        return 1e6 / self.cpu_us_per_req if self.cpu_us_per_req else None

    @property
    def error_total(self) -> int:
        return sum(self.errors.values())

    @classmethod
    def from_wrk(
        cls,
        entry: str,
        mode_name: str,
        rep: int,
        wrk: dict,
        client_cpu_s: float,
        wall_s: float,
        server_cpu_s: float | None,
        peak_rss: int | None,
        pss: int | None,
        cpu_limit: float = 1.0,
    ) -> Sample:
        """A sample from wrk's `arena-json` line (wrk/report.lua) and the /proc readings around it.

        server_cpu_s, peak_rss, pss: None when not known (a server the arena did not start,
        without --pid; remote.py). cpu_limit: the CPUs the server may use (its quota in a
        capped mode); the server is saturated at CLIENT_BOUND_SHARE of it; a server whose
        CPU is unknown is taken as not saturated."""
        duration_s = wrk["duration_us"] / 1e6
        requests = wrk["requests"]
        client_share = client_cpu_s / wall_s
        server_share = None if server_cpu_s is None else server_cpu_s / wall_s
        server_busy = server_share is not None and server_share >= CLIENT_BOUND_SHARE * cpu_limit
        timed = mode(mode_name).timed
        latency = Latency(**{k: wrk["latency_us"][k] if timed else None for k in ("p50", "p90", "p99", "max")})
        return cls(
            entry=entry,
            mode=mode_name,
            rep=rep,
            duration_s=round(duration_s, 4),
            requests=requests,
            rps=round(requests / duration_s, 1) if duration_s else 0.0,
            latency_us=latency,
            errors={k: wrk["errors"][k] for k in ERROR_KINDS},
            non_3xx=wrk["errors"]["status"],
            server_cpu_s=None if server_cpu_s is None else round(server_cpu_s, 3),
            cpu_us_per_req=round(server_cpu_s * 1e6 / requests, 3) if requests and server_cpu_s is not None else None,
            client_cpu_share=round(client_share, 3),
            server_cpu_share=None if server_share is None else round(server_share, 3),
            peak_rss_bytes=peak_rss,
            pss_bytes=pss,
            client_bound=client_share >= CLIENT_BOUND_SHARE and not server_busy,
            client_cpu_s=round(client_cpu_s, 3),
            wall_s=round(wall_s, 3),
            distribution=Distribution.from_wrk(entry, mode_name, rep, wrk) if timed else None,
        )
