"""The latency distributions of a run (distribution.py; `distributions.jsonl` beside run.json):
per entry and timed mode, wrk's exact percentiles (median over the repetitions) in a table,
and a chart per entry of its modes' percentile curves from the repetitions' merged histograms
(HdrHistogram's axes: the percentile on a log scale of 1 / (1 - q), latency on a log scale)."""

from __future__ import annotations

from pathlib import Path
from statistics import median

from ..core.distribution import FILE, PERCENTILES, Distribution, upper_us
from . import lines
from .tables import Part, Section, Table

HEADING = "Latency distributions (wrk's histograms)"
METHOD = (
    f"Each timed sample's latency histogram, kept in {FILE} beside run.json (one line per sample: "
    "logarithmic buckets, 20 per power of ten, and wrk's exact percentiles). The table gives the "
    "median over the repetitions of wrk's exact percentiles; the charts draw the repetitions' merged "
    "histogram, each point the upper edge of a bucket (within 12%). wrk's histogram includes the "
    "values its coordinated-omission correction adds, so its percentiles are those wrk prints."
)
X_TICKS = [(1 / (1 - q), label) for q, label in ((0.5, "50%"), (0.9, "90%"), (0.99, "99%"), (0.999, "99.9%"))]
X_TICKS.append((1e4, "99.99%"))
LAST_Q = 0.99999  # the curve stops at this share (x = 100 000); a histogram's last bucket is its max


def _us(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:,.0f} µs" if v < 10_000 else f"{v / 1000:,.1f} ms"


def read(run_dir: Path) -> list[Distribution]:
    """Every distribution of the run's FILE (none when there is no file). Raises SchemaError
    (a ValueError: `line N: PATH: reason`) on a line that is not one, OSError when it cannot be read."""
    path = run_dir / FILE
    return Distribution.load_lines(path) if path.is_file() else []


def curve(d: Distribution) -> list[tuple[float, float]]:
    """(1 / (1 - q), µs) at each bucket's cumulative share q, below LAST_Q."""
    total, seen, points = d.count, 0, []
    for bucket in sorted(d.buckets):
        seen += d.buckets[bucket]
        q = min(seen / total, LAST_Q)
        points.append((1 / (1 - q), upper_us(bucket)))
    return points


def sections(found: list[Distribution]) -> list[Section]:
    groups: dict[tuple[str, str], list[Distribution]] = {}
    for d in found:
        groups.setdefault((d.entry, d.mode), []).append(d)
    headers = ["entry", "mode", "reps", "values", *(f"p{p}" if p != "100" else "max" for p in PERCENTILES)]
    table = Table(headers, [], numeric=set(range(2, len(headers))))
    for (entry, mode), parts in groups.items():
        cells = [entry, mode, str(len(parts)), f"{sum(p.count for p in parts):,}"]
        for p in PERCENTILES:
            values = [d.percentiles_us[p] for d in parts if p in d.percentiles_us]
            cells.append(_us(median(values)) if values else "–")
        table.rows.append(cells)
    charts = []
    for entry in dict.fromkeys(e for e, _ in groups):
        curves = [
            lines.Line(mode, curve(Distribution.merged(parts))) for (e, mode), parts in groups.items() if e == entry
        ]
        charts.append(
            lines.chart(
                f"{entry}: latency by percentile, repetitions merged",
                curves,
                X_TICKS,
                "latency (log)",
                "percentile",
                x_log=True,
                y_log=True,
                y_unit=_us,
            )
        )
    return [Section("Percentiles per entry and mode", table, charts)]


def parts(run_dir: Path) -> list[Part]:
    """The run's distributions as a part of its report; a file that cannot be read is said."""
    try:
        found = read(run_dir)
    except (OSError, ValueError) as err:
        return [Part(HEADING, f"{FILE} could not be read ({type(err).__name__}: {err}).", FILE, [])]
    return [Part(HEADING, METHOD, FILE, sections(found))] if found else []
