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
its percentiles are the ones wrk prints. It imports only core/schema.py of the arena.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    Field,
    PlainSerializer,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from .schema import Declared, required

PER_DECADE = 20
FILE = "distributions.jsonl"
# The percentiles wrk reports exactly (report.lua asks for these), as keys "50" … "100".
PERCENTILES = ("50", "75", "90", "99", "99.9", "99.99", "100")
# In the file [[bucket, count], …] by bucket; in memory bucket -> count.
Buckets = Annotated[
    list[Annotated[list[int], Field(min_length=2, max_length=2)]],
    AfterValidator(lambda pairs: {b: c for b, c in pairs}),
    PlainSerializer(lambda buckets: [[b, buckets[b]] for b in sorted(buckets)]),
]


def upper_us(bucket: int) -> float:
    """The upper edge of a bucket in µs."""
    return 10 ** (bucket / PER_DECADE)


def _this_arenas(line: Any) -> Any:
    """A line's buckets must be this arena's: PER_DECADE per decade, in µs."""
    if isinstance(line, dict) and (line.get("per_decade", PER_DECADE), line.get("unit", "us")) != (PER_DECADE, "us"):
        raise ValueError(f"buckets of {line.get('per_decade')} per decade in {line.get('unit')}: not this arena's")
    return line


@dataclass
class Distribution(Declared):
    """Latency counts by logarithmic bucket (µs), and wrk's exact percentiles: one line of
    FILE (a declared format: core/schema.py), which also says its unit, its buckets per decade
    and its count."""

    entry: str
    mode: str
    rep: int
    buckets: Buckets = field(default_factory=dict)  # bucket -> count
    percentiles_us: dict[str, float] = field(default_factory=dict)  # "99.9" -> µs, exact (wrk's)

    _in_file = required("buckets")
    _ours = model_validator(mode="before")(_this_arenas)

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

    @model_serializer(mode="wrap")
    def _written(self, handler: SerializerFunctionWrapHandler) -> dict:
        """After entry, mode and rep: the unit, the buckets per decade and the count."""
        head = dict.fromkeys(("entry", "mode", "rep")) | {"unit": "us", "per_decade": PER_DECADE, "count": self.count}
        return head | handler(self)
