"""The warm-up curves of a run (docs/arena/method.md, "Warm means warm"): for every sample warmed up in
1-second windows (warmup.py; entries whose warm-up is 3 s or more, the JVM and JS ones
with their own `warmup_s`), its server CPU µs per request (when recorded) and requests/s per
window, and whether it ended steady or at its bound; a chart per entry of its samples' curves."""

from __future__ import annotations

from ..core.model import Run
from . import lines
from .tables import Part, Section, Table

HEADING = "Warm-up until steady"
METHOD = (
    "Each sample's warm-up runs its own load (wrk, on the server's whole core, before any cap) in "
    "1-second windows and ends once the last three windows' server CPU per request (requests/s in runs "
    "that did not record it) are within 5% of each other, after the run's warm-up and at least half "
    "of the bound, or at the bound, the longer of the run's warm-up and the entry's warmup_s: "
    "'steady' or 'at the bound (not steady)'. A cold JIT's throughput can look steady while its CPU "
    "per request is still falling, which is why CPU decides. What runs before the first judgement is one "
    "run of wrk, the lead: the first figure, placed at its last second. A bound under 3 s is one run, not judged, "
    "and not shown."
)


def _k(v: float) -> str:
    return f"{v / 1000:,.1f}k" if v >= 1000 else f"{v:,.0f}"


def _ends(s) -> list[int]:
    """The second at which each warm-up figure of sample s ends: a lead's at its last second."""
    lead = s.warmup_lead_s or 0
    return [i + 1 + max(0, lead - 1) for i in range(len(s.warmup_rps or []))]


def sections(run: Run) -> list[Section]:
    windowed = [s for s in run.samples if s.warmup_steady is not None]
    if not windowed:
        return []
    table = Table(
        ["entry", "mode", "rep", "seconds", "ended", "CPU µs/req per 1 s window", "requests/s per 1 s window"],
        [],
        numeric={2, 3},
    )
    for s in windowed:
        ended = {True: "steady", False: "at the bound (not steady)"}.get(s.warmup_steady, "not judged")
        cpu = ", ".join(f"{v:.2f}" for v in s.warmup_cpu_us or [] if v is not None) or "–"
        table.rows.append(
            [
                s.entry,
                s.mode,
                str(s.rep),
                str(_ends(s)[-1] if s.warmup_rps else 0),
                ended,
                cpu,
                ", ".join(map(_k, s.warmup_rps or [])),
            ]
        )
    charts = []
    for name in dict.fromkeys(s.entry for s in windowed):
        mine = [s for s in windowed if s.entry == name and s.warmup_rps]
        if not mine:
            continue
        curves = [lines.Line(f"{s.mode} rep {s.rep}", list(zip(_ends(s), s.warmup_rps, strict=True))) for s in mine]
        longest = max(_ends(s)[-1] for s in mine)
        charts.append(
            lines.chart(
                f"{name}: requests/s per second of warm-up",
                curves,
                [(i, str(i)) for i in range(1, longest + 1)],
                "requests/s",
                "second of warm-up",
                y_unit=_k,
            )
        )
    return [Section("Warm-up windows per sample", table, charts)]


def parts(run: Run) -> list[Part]:
    found = sections(run)
    return [Part(HEADING, METHOD, "report.html", found)] if found else []  # the charts are in the HTML report
