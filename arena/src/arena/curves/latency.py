"""`arena latency`: the latency an entry gives at a fixed request rate, without coordinated
omission (docs/arena/curves.md, "Latency, saturation, history").

wrk's closed loop sends the next request only when an answer came back, so a slow answer
delays the requests queued behind it, and their wait is never counted. oha (a Rust load
generator, `cargo install oha --locked`) sends at a fixed rate (`-q`) and, with
`--latency-correction`, times each request from when it was due, not from when it went out.

For each entry: one fresh server (pinned, one thread, as in a bench), warmed up by oha
unbounded as long as a bench would (load.warmup.warmup_s: 1 s, or the entry's own, so that a JVM's
capacity is its warm one); its capacity is measured with oha unbounded (same connections,
`seconds`); then oha runs at 25, 50, 75 and
90% of that capacity, each `seconds` long, recording p50, p90, p99, p99.9, p99.99 and max.
oha never follows the 302 (`--redirect 0`). The report tells at which rate each entry's
p99 first passes 1 ms and 10 ms. Every oha run is bounded (its duration + 30 s).

The regression gate's latency criterion (`arena gate --latency`) takes its samples here too:
fixed_rate_point, one fresh server (or the running one, remote.Remote) warmed up the same way
and loaded at one given rate.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from ..core.model import Config
from ..core.schema import Declared, Num, required
from ..entries.manifest import Entry
from ..entries.outside import Outside
from ..entries.process import Launch, free_port, launch_ready
from ..entries.remote import Remote
from ..load.oha import run_oha
from ..load.warmup import warmup_s

SHARES = (0.25, 0.5, 0.75, 0.9)
OHA_PERCENTILES = {"p50": "p50", "p90": "p90", "p99": "p99", "p99.9": "p99.9", "p99.99": "p99.99"}
CURVE = {"p50": 0.5, "p90": 0.9, "p99": 0.99, "p99.9": 0.999, "p99.99": 0.9999}


@dataclass
class Point:
    share: Num  # of the measured capacity
    rate: Num  # requests/s asked for
    achieved: Num  # requests/s oha measured
    latency_us: dict[str, Num | None]  # p50 … p99.99 and max, µs
    failed: int  # answers that were not a 302, and requests that failed

    def curve(self) -> list[tuple[float, float]]:
        """(1 / (1 - percentile), µs): the HdrHistogram-style x axis."""
        return [(1 / (1 - q), self.latency_us[k]) for k, q in CURVE.items() if self.latency_us.get(k) is not None]


@dataclass
class Latency(Declared):
    """One entry's results in latency/latency.json's `results` (a declared format: core/schema.py)."""

    entry: str
    capacity: Num  # requests/s oha reached unbounded
    points: list[Point] = field(default_factory=list)
    warmup_s: int = 0  # seconds of oha unbounded before the capacity run

    _in_file = required("points")

    def passes(self, threshold_us: float) -> Point | None:
        """The lowest measured rate whose p99 is above threshold_us; None: none was."""
        return next((p for p in self.points if (p.latency_us.get("p99") or 0) > threshold_us), None)

    def passes_words(self, threshold_us: float) -> str:
        p = self.passes(threshold_us)
        if p is None:
            return f"not up to {self.points[-1].share:.0%}" if self.points else "–"
        return f"{p.share:.0%} ({p.rate:,.0f}/s)"


def point(share: float, rate: float, oha: dict, expect: int = 302) -> Point:
    """oha's JSON summary as a Point; `failed` counts answers other than `expect` and failed
    requests (not those still in flight when the run ended)."""
    percentiles = oha.get("latencyPercentiles") or {}
    us = {
        k: (None if percentiles.get(v) is None else round(percentiles[v] * 1e6, 1)) for k, v in OHA_PERCENTILES.items()
    }
    slowest = oha["summary"].get("slowest")
    us["max"] = None if slowest is None else round(slowest * 1e6, 1)
    codes = oha.get("statusCodeDistribution") or {}
    # Requests still in flight when -z ends are "aborted due to deadline": not the server's.
    errors = {why: n for why, n in (oha.get("errorDistribution") or {}).items() if "deadline" not in why}
    failed = sum(n for code, n in codes.items() if code != str(expect)) + sum(errors.values())
    return Point(share, rate, round(oha["summary"].get("requestsPerSec") or 0.0, 1), us, failed)


@contextmanager
def serving(entry: Entry, cfg: Config) -> Iterator[str]:
    """The URL to load: a running server's (remote.Remote: never started nor stopped), else
    that of a fresh server of entry on a free port, pinned to cfg.server_cpus with one thread,
    stopped afterwards (an outside command's URL ends in its --path). Raises StartError."""
    if isinstance(entry, Remote):
        yield entry.url
        return
    server = launch_ready(entry, Launch(port=free_port(), threads=1, cpus=cfg.server_cpus))
    try:
        yield f"http://127.0.0.1:{server.port}{entry.path if isinstance(entry, Outside) else '/'}"
    finally:
        server.stop()


def measure(entry: Entry, cfg: Config, seconds: int, shares=SHARES, progress=None) -> Latency:
    """One entry's capacity and latency points (see the module's docstring)."""
    with serving(entry, cfg) as url:
        warm = warmup_s(entry, cfg)
        if warm > 0:
            if progress:
                progress(f"warm-up {warm} s")
            run_oha(url, cfg, warm, None)
        if progress:
            progress("capacity")
        capacity = run_oha(url, cfg, seconds, None)["summary"]["requestsPerSec"] or 0.0
        result = Latency(entry.name, round(capacity, 1), warmup_s=warm)
        for share in shares:
            if progress:
                progress(f"{share:.0%}")
            rate = max(1.0, share * capacity)
            result.points.append(point(share, rate, run_oha(url, cfg, seconds, rate)))
    return result


def fixed_rate_point(entry: Entry, cfg: Config, seconds: int, rate: float, share: float) -> Point:
    """One sample at a fixed rate (requests/s) of a fresh server of entry (or the running one):
    warmed up by oha unbounded as measure() does (warmup_s), then oha at `rate` with
    --latency-correction for `seconds`; `share` is the share of a capacity the rate stands for,
    recorded in the Point. Its failures count answers other than the entry's `expect` (302 for
    an entry of the repository). Raises StartError, LoadError."""
    with serving(entry, cfg) as url:
        warm = warmup_s(entry, cfg)
        if warm > 0:
            run_oha(url, cfg, warm, None)
        return point(share, rate, run_oha(url, cfg, seconds, rate), getattr(entry, "expect", 302))
