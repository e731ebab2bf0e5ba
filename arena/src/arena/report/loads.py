"""The results of `arena sweep` and `arena latency` as report sections: their own report.md
(tables) and report.html (tables and line charts) beside their JSON, and the same sections
in a bench run's report when they were written into its directory (`--run`). Every string
from the results is escaped by the renderer (markdown.py, html.py)."""

from __future__ import annotations

import json
from pathlib import Path

from ..curves.latency import Latency
from ..curves.sweep import Sweep
from . import lines
from .stacks import run_part as stacks_part
from .standalone import write_report
from .syscalls import run_part as syscalls_part
from .tables import Part, Section, Table

PERCENTILES = ("p50", "p90", "p99", "p99.9", "p99.99", "max")
LATENCY = "Latency at fixed rates (oha, open loop)"
SWEEP = "Saturation: requests/s and p99 against concurrency"
# file written by the command (beside its report.html), the heading, the key of its results
KINDS = {"latency": ("latency.json", LATENCY, "results"), "sweep": ("sweep.json", SWEEP, "sweeps")}


def _us(v: float | None) -> str:
    if v is None:
        return "–"
    return f"{v:,.0f} µs" if v < 10_000 else f"{v / 1000:,.1f} ms"


def sweep_sections(sweeps: list[Sweep]) -> list[Section]:
    """The knee per entry with the two charts (each line's knee circled), then a table per entry."""
    summary = Table(["entry", "knee", "best requests/s", "at connections", "steps"], [], numeric={2, 3, 4})
    for s in sweeps:
        best = max(s.steps, key=lambda st: st.rps, default=None)
        summary.rows.append(
            [
                s.entry,
                s.knee_words() + (f"; stopped: {s.error}" if s.error else ""),
                f"{best.rps:,.0f}" if best else "–",
                str(best.connections) if best else "–",
                str(len(s.steps)),
            ]
        )
    charts = []
    if any(s.steps for s in sweeps):
        ticks = [(st.connections, str(st.connections)) for st in max(sweeps, key=lambda s: len(s.steps)).steps]

        def line(s: Sweep, y) -> lines.Line:
            knee = s.knee
            mark = None if knee is None else (knee.connections, y(knee))
            return lines.Line(s.entry, [(st.connections, y(st)) for st in s.steps], mark, s.knee_words())

        charts = [
            lines.chart(
                "requests/s against concurrency (○ the knee)",
                [line(s, lambda st: st.rps) for s in sweeps],
                ticks,
                "requests/s",
                "connections",
                x_log=True,
                y_unit=lambda v: f"{v / 1000:,.0f}k" if v >= 1000 else f"{v:,.0f}",
            ),
            lines.chart(
                "p99 latency against concurrency (○ the knee)",
                [line(s, lambda st: st.p99_us) for s in sweeps],
                ticks,
                "p99 (µs, log)",
                "connections",
                x_log=True,
                y_log=True,
                y_unit=_us,
            ),
        ]
    out = [Section("Knee per entry", summary, charts)]
    for s in sweeps:
        t = Table(["connections", "requests/s", "p50", "p99", "max", "socket errors"], [], numeric={0, 1, 2, 3, 4, 5})
        for st in s.steps:
            t.rows.append(
                [str(st.connections), f"{st.rps:,.0f}", _us(st.p50_us), _us(st.p99_us), _us(st.max_us), str(st.errors)]
            )
        out.append(Section(s.entry, t))
    return out


def latency_sections(results: list[Latency]) -> list[Section]:
    """Where each entry's p99 passes 1 and 10 ms, then per entry its points and its curves."""
    summary = Table(
        ["entry", "capacity requests/s", "p99 passes 1 ms at", "p99 passes 10 ms at"], [], numeric={1, 2, 3}
    )
    out = [Section("Where p99 passes 1 ms and 10 ms", summary)]
    for r in results:
        summary.rows.append([r.entry, f"{r.capacity:,.0f}", r.passes_words(1_000), r.passes_words(10_000)])
        t = Table(["rate", "achieved requests/s", *PERCENTILES, "non-302"], [], numeric=set(range(1, 9)))
        for p in r.points:
            t.rows.append(
                [
                    f"{p.share:.0%} ({p.rate:,.0f}/s)",
                    f"{p.achieved:,.0f}",
                    *(_us(p.latency_us.get(k)) for k in PERCENTILES),
                    str(p.failed),
                ]
            )
        chart = lines.chart(
            f"{r.entry}: latency by percentile at a fixed rate",
            [lines.Line(f"{p.share:.0%} of capacity", p.curve()) for p in r.points],
            [
                (1 / (1 - q), label)
                for q, label in ((0.5, "50%"), (0.9, "90%"), (0.99, "99%"), (0.999, "99.9%"), (0.9999, "99.99%"))
            ],
            "latency (log)",
            "percentile",
            x_log=True,
            y_log=True,
            y_unit=_us,
        )
        out.append(Section(r.entry, t, [chart] if r.points else []))
    return out


def sweep_report(sweeps: list[Sweep], out_dir: Path, method: str) -> tuple[Path, Path]:
    return write_report(out_dir, "renard arena: saturation sweep", method, sweep_sections(sweeps))


def latency_report(results: list[Latency], out_dir: Path, method: str) -> tuple[Path, Path]:
    return write_report(out_dir, "renard arena: latency at fixed rates", method, latency_sections(results))


def write_json(out_dir: Path, kind: str, method: str, seconds: int, results: list) -> Path:
    """out_dir/<kind>.json: the command's results, with its method in words for the run's report."""
    name, _, key = KINDS[kind]
    path = out_dir / name
    path.write_text(json.dumps({"seconds": seconds, "method": method, key: [r.to_json() for r in results]}, indent=1))
    return path


def parts(run_dir: Path) -> list[Part]:
    """The latency and sweep results written into a run's directory, as its report includes
    them; a file that cannot be read is said in its part's method, never skipped silently."""
    out = []
    for kind, (name, heading, key) in KINDS.items():
        path = run_dir / kind / name
        if not path.is_file():
            continue
        href = f"{kind}/report.html"
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            if kind == "latency":
                found = latency_sections([Latency.load(d) for d in doc[key]])
            else:
                found = sweep_sections([Sweep.load(d) for d in doc[key]])
        except (OSError, ValueError, KeyError, TypeError) as err:
            out.append(Part(heading, f"{kind}/{name} could not be read ({type(err).__name__}: {err}).", href, []))
            continue
        out.append(Part(heading, str(doc.get("method", "")), href, found))
    return out + stacks_part(run_dir) + syscalls_part(run_dir)
