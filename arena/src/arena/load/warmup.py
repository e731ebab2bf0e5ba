"""Warm means warm: an entry is warmed up until it is steady, not for a fixed time.
The warm-up runs the sample's own load in windows of WINDOW_S seconds and ends when the last
STEADY_WINDOWS windows lie within SPREAD of each other (highest ÷ lowest ≤ 1 + SPREAD), once
at least `minimum_s` seconds have run; it never runs longer than `bound_s` (the larger of the
run's warm-up and the entry's `warmup_s`), and says whether it ended steady or at the bound.
A bound shorter than the STEADY_WINDOWS windows the rule needs is one run of that length, as
before, its steadiness not judged.

What is judged: a window gives its requests/s, and, when the caller can read it, the
server's CPU µs per request (`Window`). When every window has the latter, steadiness is
judged on it, else on requests/s. Measured here (25 Nov, load average 8–10 from other
sessions, 1 s windows of a fresh java-seed under wrk -c50, a new connection per request):
requests/s read 2.6k, 2.5k, 2.6k at seconds 3–5, "steady" by the rule, while the server
still spent 141–153 µs of CPU per request against 54 once compiled (second 10 on); its
keep-alive requests/s never settled within 5% in 40 s, while its CPU per request settled
at second 10. Other processes move requests/s (the server's share of its core, wrk's);
CPU per request moves with the server's own code, which is what warming up changes.

Neither figure can tell a plateau between two steps of a JIT from the end: spring-boot's
CPU per request, a new connection per request, read 1.83, 1.84, 1.92 ms at seconds 4–6
(steady by the rule) while the interpreter still ran, and 0.19 ms from second 37 on. So a
warm-up runs at least MIN_SHARE of its bound before the rule may end it, and an entry's
`warmup_s` is set at about twice the time it was measured to take to become warm (its
entry.toml and README say the measurement): the first half is the measured time, the second
half runs only until steady.

The part of the warm-up before the rule can first judge (minimum_s less its last
STEADY_WINDOWS windows) is one run, the lead, not one per second: each run of wrk costs
0.2-0.5 s beyond its -d (its start, its connections, its report; measured 28 Nov, 1 s runs
took 1.2-1.6 s), so spring-boot's 30 windows before its first judgement cost it about 10 s a
sample. The lead's figures are the warm-up's first; lead_s says how long it ran.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.model import Config
from ..entries.manifest import Entry

WINDOW_S = 1  # seconds per window (wrk's -d is whole seconds)
STEADY_WINDOWS = 3
SPREAD = 0.05
MIN_SHARE = 0.5  # of the bound, run before the rule may end a warm-up


@dataclass(frozen=True)
class Window:
    """One window's figures: requests/s, and the server's CPU µs per request (None: unknown)."""

    rps: float
    cpu_us: float | None = None


@dataclass
class Warmup:
    """The windows' requests/s in order, and whether the last STEADY_WINDOWS were steady
    (None: the bound was too short to judge); cpu_us: each window's CPU µs per request when
    the caller gave them (then steadiness was judged on them), else None."""

    rps: list[float]
    steady: bool | None
    cpu_us: list[float] | None = field(default=None)
    lead_s: int = 0  # the first figures' seconds when they are a lead (one run before the windows), else 0

    @property
    def seconds(self) -> int:
        return len(self.rps) * WINDOW_S + max(0, self.lead_s - WINDOW_S)


def is_steady(values: list[float], windows: int = STEADY_WINDOWS, spread: float = SPREAD) -> bool:
    """The last `windows` figures within `spread` of each other (all positive)."""
    last = values[-windows:]
    return len(last) == windows and min(last) > 0 and max(last) / min(last) <= 1 + spread


def _window(got: float | Window) -> Window:
    return got if isinstance(got, Window) else Window(float(got))


def until_steady(run_window: Callable[[int], float | Window], bound_s: int, minimum_s: int = 0) -> Warmup:
    """Calls run_window(seconds) -> requests/s, or a Window, until is_steady (after
    minimum_s, and after MIN_SHARE of bound_s) or bound_s. Steadiness is judged on CPU per
    request while every window has it, else on requests/s. bound_s < STEADY_WINDOWS ×
    WINDOW_S: one call of bound_s seconds (none when 0)."""
    if bound_s <= 0:
        return Warmup([], None)
    if bound_s < STEADY_WINDOWS * WINDOW_S:
        w = _window(run_window(bound_s))
        return Warmup([w.rps], None, [w.cpu_us] if w.cpu_us is not None else None)
    minimum_s = max(minimum_s, math.ceil(bound_s * MIN_SHARE))
    lead_s = lead_seconds(minimum_s)
    seen: list[Window] = [_window(run_window(lead_s))] if lead_s else []
    ran_s = lead_s
    steady = False
    while ran_s + WINDOW_S <= bound_s:
        seen.append(_window(run_window(WINDOW_S)))
        ran_s += WINDOW_S
        # by minimum_s the last STEADY_WINDOWS figures are windows: the lead is never judged
        cpu = [w.cpu_us for w in seen]
        judged = cpu if all(c is not None for c in cpu) else [w.rps for w in seen]
        if ran_s >= minimum_s and is_steady(judged):
            steady = True
            break
    cpu = [w.cpu_us for w in seen]
    return Warmup([w.rps for w in seen], steady, cpu if all(c is not None for c in cpu) else None, lead_s)


def lead_seconds(minimum_s: int) -> int:
    """Seconds of the lead: what runs before the last STEADY_WINDOWS windows of minimum_s, when
    that is at least 2 windows (one window is no saving); else 0."""
    lead = minimum_s - STEADY_WINDOWS * WINDOW_S
    return lead if lead >= 2 * WINDOW_S else 0


def warmup_s(entry: Entry, cfg: Config) -> int:
    """Seconds of warm-up before an entry is measured: the larger of the run's and the entry's
    own (entry.toml `warmup_s`: the time its throughput takes to settle, e.g. a JIT's)."""
    return max(cfg.warmup_s, entry.warmup_s)
