"""The latency distribution of one sample, kept beside the run (`distributions.jsonl`, one
line per sample as it is measured) so that the report can draw it and anyone can merge or
re-read it later; run.json keeps the four percentiles it always had.

wrk records every answer's latency in whole microseconds; wrk/report.lua folds its histogram
into logarithmic buckets, PER_DECADE per power of ten: bucket b holds the latencies v with
10^((b-1)/PER_DECADE) < v <= 10^(b/PER_DECADE) µs (12% wide at 20 per decade; bucket 0 holds
v <= 1 µs), and adds wrk's own exact percentiles. The histogram is wrk's: besides the answers
it includes the values wrk adds for coordinated omission after the run (wrk.c stats_correct:
for a latency above twice the mean interval between answers on a connection, the latencies
the requests it held back would have had), so its count is at least the requests answered and
its percentiles are the ones wrk prints. A leaf module: it imports nothing of arena.
"""

from __future__ import annotations

from dataclasses import dataclass, field

PER_DECADE = 20
FILE = "distributions.jsonl"
# The percentiles wrk reports exactly (report.lua asks for these), as keys "50" … "100".
PERCENTILES = ("50", "75", "90", "99", "99.9", "99.99", "100")


def upper_us(bucket: int) -> float:
    """The upper edge of a bucket in µs."""
    return 10 ** (bucket / PER_DECADE)


@dataclass
class Distribution:
    """Latency counts by logarithmic bucket (µs), and wrk's exact percentiles."""

    entry: str
    mode: str
    rep: int
    buckets: dict[int, int] = field(default_factory=dict)  # bucket -> count
    percentiles_us: dict[str, float] = field(default_factory=dict)  # "99.9" -> µs, exact (wrk's)

    @property
    def count(self) -> int:
        return sum(self.buckets.values())

    @classmethod
    def from_wrk(cls, entry: str, mode: str, rep: int, wrk: dict) -> Distribution | None:
        """From report.lua's `histogram` ([[bucket, count], …]) and `percentiles`; None when absent or empty."""
        pairs = wrk.get("histogram") or []
        buckets = {int(b): int(c) for b, c in pairs if c}
        if not buckets:
            return None
        return cls(entry, mode, rep, buckets, {k: float(v) for k, v in (wrk.get("percentiles") or {}).items()})

    @classmethod
    def merged(cls, parts: list[Distribution]) -> Distribution:
        """The repetitions of one (entry, mode) as one distribution (bucket counts summed; no
        exact percentiles, which do not merge)."""
        out = cls(parts[0].entry, parts[0].mode, -1)
        for p in parts:
            for bucket, n in p.buckets.items():
                out.buckets[bucket] = out.buckets.get(bucket, 0) + n
        return out

    def to_json(self) -> dict:
        return {
            "entry": self.entry,
            "mode": self.mode,
            "rep": self.rep,
            "unit": "us",
            "per_decade": PER_DECADE,
            "count": self.count,
            "buckets": [[b, self.buckets[b]] for b in sorted(self.buckets)],
            "percentiles_us": self.percentiles_us,
        }

    @classmethod
    def load(cls, d: dict) -> Distribution:
        """Raises KeyError, TypeError or ValueError on a line that is not one."""
        if d.get("per_decade", PER_DECADE) != PER_DECADE or d.get("unit", "us") != "us":
            raise ValueError(f"buckets of {d.get('per_decade')} per decade in {d.get('unit')}: not this arena's")
        return cls(
            str(d["entry"]),
            str(d["mode"]),
            int(d["rep"]),
            {int(b): int(c) for b, c in d["buckets"]},
            {str(k): float(v) for k, v in d.get("percentiles_us", {}).items()},
        )
