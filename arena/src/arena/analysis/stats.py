"""Summaries of repeated measurements (stdlib only).

Every figure the arena reports is the median of its repetitions with the min–max range
beside it; a comparison is the ratio of two medians with the range of the extreme
pairings. Nothing is dropped: samples the load generator limited are kept and flagged.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from statistics import median as _median

from ..core.sample import ERROR_KINDS, Sample


class StatsError(ValueError):
    """A summary was asked of values it cannot describe (empty, or a zero divisor)."""


def _checked(values: Iterable[float], what: str) -> list[float]:
    """The values as a list; raises StatsError when there are none."""
    checked = list(values)
    if not checked:
        raise StatsError(f"{what}: no values (an empty sample has no median, min or max)")
    return checked


def median(values: Iterable[float]) -> float:
    """The middle value; the mean of the two middle values for an even count."""
    return float(_median(_checked(values, "median")))


def spread(values: Iterable[float]) -> float:
    """max - min, in the values' own unit."""
    checked = _checked(values, "spread")
    return float(max(checked) - min(checked))


@dataclass(frozen=True)
class Summary:
    """Median and min–max of n repetitions, in the unit of the values."""

    median: float
    lo: float
    hi: float
    n: int


def summarize(values: Iterable[float]) -> Summary:
    """Median, min, max and count; raises StatsError on an empty sample."""
    checked = _checked(values, "summarize")
    return Summary(median(checked), float(min(checked)), float(max(checked)), len(checked))


@dataclass(frozen=True)
class Ratio:
    """a ÷ b: ratio of the medians, range of the extreme pairings (min a/max b .. max a/min b).

    significant is False when the two samples' min–max ranges overlap (touching counts)
    or when either sample has fewer than 2 values (a single value has no range).
    """

    median_ratio: float
    lo: float
    hi: float
    significant: bool


def ratio(a_values: Sequence[float], b_values: Sequence[float]) -> Ratio:
    """Compare sample a with sample b; raises StatsError if either is empty or b has a value <= 0."""
    a = _checked(a_values, "ratio (first sample)")
    b = _checked(b_values, "ratio (second sample)")
    if min(b) <= 0:
        raise StatsError("ratio: the second sample has a value <= 0; a ratio needs positive divisors")
    overlap = max(a) >= min(b) and max(b) >= min(a)
    return Ratio(
        median_ratio=median(a) / median(b),
        lo=min(a) / max(b),
        hi=max(a) / min(b),
        significant=not overlap and len(a) >= 2 and len(b) >= 2,
    )


# Metric names of a Series, each in the unit its name states.
METRICS = (
    "rps",  # requests answered per second
    "cpu_us_per_req",  # server CPU (utime + stime) microseconds per request
    "efficiency",  # requests per server CPU-second (1e6 / cpu_us_per_req)
    "latency_p50_us",
    "latency_p90_us",
    "latency_p99_us",
    "peak_rss_bytes",  # VmHWM summed over the server's process tree
    "pss_bytes",  # Pss summed over the server's process tree
)


def _metric(sample: Sample, metric: str) -> float | None:
    if metric.startswith("latency_"):
        return getattr(sample.latency_us, metric.removeprefix("latency_").removesuffix("_us"))
    return getattr(sample, metric)


@dataclass
class Series:
    """Every sample of one (entry, mode), metric by metric, in repetition order.

    A metric that a sample left null is not in its list but counted in missing, so that a
    shorter list is never a silent exclusion.
    """

    entry: str
    mode: str
    samples: list[Sample] = field(default_factory=list)
    values: dict[str, list[float]] = field(default_factory=lambda: {m: [] for m in METRICS})
    missing: dict[str, int] = field(default_factory=lambda: {m: 0 for m in METRICS})

    def add(self, sample: Sample) -> None:
        self.samples.append(sample)
        for metric in METRICS:
            value = _metric(sample, metric)
            if value is None:
                self.missing[metric] += 1
            else:
                self.values[metric].append(float(value))

    def __getitem__(self, metric: str) -> list[float]:
        return self.values[metric]

    def summary(self, metric: str) -> Summary | None:
        """summarize() of the metric, or None when no sample has it."""
        return summarize(self.values[metric]) if self.values[metric] else None

    @property
    def reps(self) -> list[int]:
        return [s.rep for s in self.samples]

    @property
    def client_bound_reps(self) -> list[int]:
        """Repetitions where the load generator was the bottleneck."""
        return [s.rep for s in self.samples if s.client_bound]

    @property
    def client_bound(self) -> int:
        """How many repetitions the load generator limited."""
        return len(self.client_bound_reps)

    @property
    def errors(self) -> dict[str, int]:
        """Socket errors by kind, summed over the repetitions."""
        return {k: sum(s.errors[k] for s in self.samples) for k in ERROR_KINDS}

    @property
    def error_total(self) -> int:
        return sum(self.errors.values())

    @property
    def non_3xx(self) -> int:
        """Answers outside 300–399, summed over the repetitions."""
        return sum(s.non_3xx for s in self.samples)

    @property
    def requests(self) -> int:
        return sum(s.requests for s in self.samples)


def group_samples(samples: Iterable[Sample]) -> dict[tuple[str, str], Series]:
    """Samples grouped by (entry, mode), in first-seen order; excludes no sample."""
    groups: dict[tuple[str, str], Series] = {}
    for sample in samples:
        key = (sample.entry, sample.mode)
        groups.setdefault(key, Series(*key)).add(sample)
    return groups
