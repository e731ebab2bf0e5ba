"""`arena compare RUN_DIR…`: runs from different machines, read against their own floor.

An absolute figure belongs to its machine; the floor peer (peers/floor, the design's limit:
one pre-rendered 302 per request without parsing) measured in the same run on the same machine
is the unit that travels. A mode's figure is the server's CPU µs per request (Sample.own_cpu_us)
where every sample of the mode in every run has one, as the table ranks (docs/arena/method.md), else
requests/s (runs older than the CPU counters). Each entry's median is read against the floor's
median in that mode of the same run ("of floor", above 1 better: the floor's CPU ÷ the entry's,
or the entry's requests/s ÷ the floor's), and against the reference's (nginx + Lua) where the
run has it. Runs agree on an entry when its of-floor figures lie within AGREE of each other;
entries are ranked by the geometric mean of their of-floor figures. Each later run is set
against the first by Spearman's rank correlation of the of-floor figures, and by the pairs of
entries whose order changed while each run's min–max ranges of the two kept apart (beyond the
noise on both machines). A run without a floor cannot be read against another machine: the
comparison refuses it rather than rank absolute figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.compare import rank_correlation
from ..analysis.stats import Series, group_samples, median, summarize
from ..core.model import Run
from ..report import markdown as md
from ..report.tables import Table

AGREE = 0.10  # of-floor figures within 10 % of each other agree (the quiet machine's min–max spread: 4–11 %)
MACHINE_KEYS = ("cpu_model", "cores", "kernel", "os", "memory_bytes")
CONFIG_KEYS = ("duration_s", "warmup_s", "repetitions", "connections", "cpu_quota", "server_cpus", "client_cpus")


class CompareError(ValueError):
    """Runs that cannot be compared: str() says which and why."""


CPU, RPS = "CPU µs/req", "req/s"  # a mode's figure (Comparison.figure)


@dataclass
class Cell:
    """One entry in one mode of one run."""

    rps: float
    of_floor: float  # above 1 better than the floor
    of_reference: float | None
    floor: str = "floor"  # the floor of_floor divides by: the entry's own (entry.toml `floor`)
    value: float = 0.0  # the mode's figure (CPU µs per request or requests/s), median
    lo: float = 0.0  # and its min–max over the repetitions
    hi: float = 0.0


@dataclass
class Line:
    """One entry in one mode across the runs (None: the run did not measure it)."""

    entry: str
    cells: list[Cell | None]
    rank: int | None = None

    @property
    def spread(self) -> float | None:
        """max ÷ min of the of-floor figures of the runs that have one; None with fewer than 2."""
        figures = [c.of_floor for c in self.cells if c]
        return max(figures) / min(figures) if len(figures) >= 2 else None

    @property
    def agree(self) -> bool | None:
        return None if self.spread is None else self.spread <= 1 + AGREE

    @property
    def score(self) -> float:
        """The geometric mean of the of-floor figures: what the rank rests on."""
        figures = [c.of_floor for c in self.cells if c]
        return math.exp(sum(math.log(f) for f in figures) / len(figures))

    def verdict(self) -> str:
        if self.agree is None:
            return "one run only"
        if self.agree:
            return f"agree (within {self.spread - 1:.0%})"
        return f"differ: {self.spread:.2f}× apart"


@dataclass
class Comparison:
    runs: list[Run]
    labels: list[str]  # each run's id (its directory name when ids repeat)
    reference: str
    modes: list[str]
    lines: dict[str, list[Line]] = field(default_factory=dict)  # mode -> lines, ranked
    figure: dict[str, str] = field(default_factory=dict)  # mode -> CPU or RPS
    # mode -> per later run (index 1…): (Spearman's rho against the first run, entries in both)
    correlation: dict[str, list[tuple[float, int]]] = field(default_factory=dict)
    # mode -> per later run: "a/b" pairs ordered differently from the first run beyond both ranges
    swaps: dict[str, list[list[str]]] = field(default_factory=dict)
    differences: list[str] = field(default_factory=list)  # what differs between machines and configs


def read_runs(paths: list[Path]) -> list[Run]:
    """Each path a run directory or its run.json; raises CompareError naming a bad one."""
    runs = []
    for path in paths:
        try:
            runs.append(Run.read(path))
        except (OSError, ValueError) as err:
            raise CompareError(f"{path}: {err}") from None
    return runs


def _differences(runs: list[Run], labels: list[str]) -> list[str]:
    """One line per machine or configuration field whose value is not the same in every run."""
    out = []

    def differ(what: str, values: list) -> None:
        if len({repr(v) for v in values}) > 1:
            out.append(
                f"{what}: "
                + "; ".join(f"{label} {v if v is not None else '–'}" for label, v in zip(labels, values, strict=True))
            )

    for key in MACHINE_KEYS:
        differ(key.replace("_", " "), [getattr(r.machine, key) for r in runs])
    for tool in sorted({t for r in runs for t in r.machine.tools}):
        differ(tool, [r.machine.tools.get(tool) for r in runs])
    for key in CONFIG_KEYS:
        differ(f"config {key}", [getattr(r.config, key) for r in runs])
    return out


def _values(series: Series, figure: str) -> list[float]:
    if figure == RPS:
        return series["rps"]
    return [v for v in (s.own_cpu_us for s in series.samples) if v is not None and v > 0]


def _figure(all_series: list[dict[tuple[str, str], Series]], mode_name: str) -> str:
    """CPU when every sample of the mode, in every run, has the server's CPU per request."""
    found = [s for series in all_series for (_, m), s in series.items() if m == mode_name]
    has_cpu = all(x.own_cpu_us is not None and x.own_cpu_us > 0 for s in found for x in s.samples)
    return CPU if found and has_cpu else RPS


def _better(figure: str, value: float, other: float) -> float:
    """value read against other, above 1 better: fewer µs per request, or more requests/s."""
    return other / value if figure == CPU else value / other


def compare(runs: list[Run], reference: str = "nginx-lua") -> Comparison:
    """The runs side by side; raises CompareError when one lacks a floor in a mode it measured."""
    labels = [r.run_id for r in runs]
    if len(set(labels)) < len(labels):
        labels = [f"{r.run_id} ({i + 1})" for i, r in enumerate(runs)]
    all_series = []
    for run, label in zip(runs, labels, strict=True):
        series = group_samples(run.samples)
        floors = [e.name for e in run.entries if e.is_floor]
        if not floors or not any(name in floors for name, _ in series):
            raise CompareError(
                f"run {label} has no floor: its figures belong to its machine and cannot be ranked against "
                "another's (bench it with the floor peer: arena bench ... floor)"
            )
        all_series.append(series)
    modes = list(dict.fromkeys(m for r in runs for m in r.config.modes))
    comparison = Comparison(runs, labels, reference, [], differences=_differences(runs, labels))
    for mode_name in modes:
        figure = _figure(all_series, mode_name)
        lines: dict[str, Line] = {}
        for i, (run, series) in enumerate(zip(runs, all_series, strict=True)):
            values = {name: _values(s, figure) for (name, m), s in series.items() if m == mode_name}
            values = {name: v for name, v in values.items() if v}
            ref = median(values[reference]) if reference in values else None
            for name, mine in values.items():
                record = run.entry(name)
                if record is None or record.is_floor:
                    continue
                own = run.floor_of(record)  # the floor of its mechanism, in this run
                if own is None or own.name not in values:
                    named = record.floor or "its floor"
                    raise CompareError(
                        f"run {labels[i]} has no figure of {named} (the floor {name} is divided by) in "
                        f"{mode_name}: nothing to read it against"
                    )
                value, span = median(mine), summarize(mine)
                cell = Cell(
                    median(series[(name, mode_name)]["rps"]),
                    _better(figure, value, median(values[own.name])),
                    _better(figure, value, ref) if ref else None,
                    own.name,
                    value,
                    span.lo,
                    span.hi,
                )
                lines.setdefault(name, Line(name, [None] * len(runs))).cells[i] = cell
        if not lines:
            continue
        ranked = sorted(lines.values(), key=lambda line: line.score, reverse=True)
        for rank, line in enumerate(ranked, 1):
            line.rank = rank
        comparison.modes.append(mode_name)
        comparison.lines[mode_name] = ranked
        comparison.figure[mode_name] = figure
        comparison.correlation[mode_name] = [_correlation(ranked, 0, i) for i in range(1, len(runs))]
        comparison.swaps[mode_name] = [_swaps(ranked, figure, 0, i) for i in range(1, len(runs))]
    return comparison


def _correlation(lines: list[Line], a: int, b: int) -> tuple[float, int]:
    both = [(x.cells[a].of_floor, x.cells[b].of_floor) for x in lines if x.cells[a] and x.cells[b]]
    return rank_correlation([p for p, _ in both], [q for _, q in both]), len(both)


def _swaps(lines: list[Line], figure: str, a: int, b: int) -> list[str]:
    """ "x/y" for every two entries that run a orders one way and run b the other, where in each run
    the two entries' min–max ranges do not overlap (x is the better one in run a)."""

    def apart(p: Cell, q: Cell) -> int:  # 1: p better beyond both ranges, -1: q, 0: the ranges overlap
        if p.hi < q.lo or p.lo > q.hi:
            return 1 if (p.value < q.value) == (figure == CPU) else -1
        return 0

    both = [x for x in lines if x.cells[a] and x.cells[b]]
    out = []
    for i, x in enumerate(both):
        for y in both[i + 1 :]:
            first, second = apart(x.cells[a], y.cells[a]), apart(x.cells[b], y.cells[b])
            if first and second and first != second:
                out.append(f"{x.entry}/{y.entry}" if first > 0 else f"{y.entry}/{x.entry}")
    return out


def table(comparison: Comparison, mode_name: str) -> Table:
    """One mode's table: rank, entry, per run its figure (CPU µs per request, or req/s), × its own floor
    (named), × reference (above 1 better); the verdict. Every column but the entry and the verdict is
    numeric."""
    figure = comparison.figure[mode_name]
    headers = ["#", "entry"]
    for label in comparison.labels:
        headers += [f"{label} {figure}", "× its floor", f"× {comparison.reference}"]
    headers.append("runs")
    rows = []
    for line in comparison.lines[mode_name]:
        row = [str(line.rank), line.entry]
        for cell in line.cells:
            if cell is None:
                row += ["–", "–", "–"]
            else:
                of_ref = f"{cell.of_reference:.2f}" if cell.of_reference is not None else "–"
                value = f"{cell.value:.2f}" if figure == CPU else f"{cell.value:,.0f}"
                row += [value, f"{cell.of_floor:.3f} {cell.floor}", of_ref]
        row.append(line.verdict())
        rows.append(row)
    return Table(headers, rows, numeric=set(range(len(headers))) - {1, len(headers) - 1})


def markdown(comparison: Comparison) -> str:
    """The comparison as GitHub Markdown: what differs, then a table per mode."""
    out = ["# Runs compared, each against its own floor", "", "## What differs", ""]
    out += [f"- {line}" for line in comparison.differences] or [
        "- nothing recorded: same machine, tools and configuration"
    ]
    for mode_name in comparison.modes:
        out += ["", f"## {mode_name}", "", *[f"{x}  " for x in order_lines(comparison, mode_name)]]
        out += ["", md.table(table(comparison, mode_name))]
    return "\n".join(out) + "\n"


def order_lines(comparison: Comparison, mode_name: str) -> list[str]:
    """Per later run, how its order agrees with the first run's: Spearman's rho over the entries
    both measured, and the pairs whose order changed beyond both runs' ranges."""
    out = []
    pairs = zip(comparison.correlation[mode_name], comparison.swaps[mode_name], strict=True)
    for i, ((rho, n), swaps) in enumerate(pairs, start=1):
        moved = ", ".join(swaps) if swaps else "none"
        out.append(
            f"{comparison.labels[i]} against {comparison.labels[0]}: rank correlation (Spearman) {rho:.2f} over "
            f"{n} entries; order changed beyond both runs' ranges: {moved}"
        )
    return out
