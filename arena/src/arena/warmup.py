"""Warm means warm (issue 28): an entry is warmed up until its throughput is steady, not for
a fixed time. The warm-up runs the sample's own load in windows of WINDOW_S seconds and ends
when the last STEADY_WINDOWS windows' requests/s lie within SPREAD of each other (highest ÷
lowest ≤ 1 + SPREAD), once at least `minimum_s` seconds have run; it never runs longer than
`bound_s` (the larger of the run's warm-up and the entry's `warmup_s`), and says whether it
ended steady or at the bound. A bound shorter than the STEADY_WINDOWS windows the rule
needs is one run of that length, as before, its steadiness not judged."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

WINDOW_S = 1  # seconds per window (wrk's -d is whole seconds)
STEADY_WINDOWS = 3
SPREAD = 0.05


@dataclass
class Warmup:
    """The windows' requests/s in order, and whether the last STEADY_WINDOWS were steady
    (None: the bound was too short to judge)."""

    rps: list[float]
    steady: bool | None

    @property
    def seconds(self) -> int:
        return len(self.rps) * WINDOW_S


def is_steady(rps: list[float], windows: int = STEADY_WINDOWS, spread: float = SPREAD) -> bool:
    """The last `windows` figures within `spread` of each other (all positive)."""
    last = rps[-windows:]
    return len(last) == windows and min(last) > 0 and max(last) / min(last) <= 1 + spread


def until_steady(run_window: Callable[[int], float], bound_s: int, minimum_s: int = 0) -> Warmup:
    """Calls run_window(seconds) -> requests/s until is_steady (after minimum_s) or bound_s.
    bound_s < STEADY_WINDOWS × WINDOW_S: one call of bound_s seconds (none when 0)."""
    if bound_s <= 0:
        return Warmup([], None)
    if bound_s < STEADY_WINDOWS * WINDOW_S:
        return Warmup([run_window(bound_s)], None)
    rps: list[float] = []
    while len(rps) * WINDOW_S + WINDOW_S <= bound_s:
        rps.append(run_window(WINDOW_S))
        if len(rps) * WINDOW_S >= minimum_s and is_steady(rps):
            return Warmup(rps, True)
    return Warmup(rps, False)
