"""`arena compare RUN_DIR…`: runs from different machines, read against their own floor.

An absolute figure (requests/s) belongs to its machine; the floor peer (peers/floor, the
design's limit: one pre-rendered 302 per request without parsing) measured in the same run
on the same machine is the unit that travels. Each entry's figure in a mode is its median
requests/s ÷ the floor's median in that mode of the same run ("of floor"), and ÷ the
reference's (nginx + Lua) where the run has it. Runs agree on an entry when its of-floor
figures lie within AGREE of each other; entries are ranked by the geometric mean of their
of-floor figures. A run without a floor cannot be read against another machine: the
comparison refuses it rather than rank absolute figures.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from ..analysis.stats import group_samples, median
from ..core.model import Run
from ..report import markdown as md
from ..report.tables import Table

AGREE = 0.10  # of-floor figures within 10 % of each other agree (the quiet machine's min–max spread: 4–11 %)
MACHINE_KEYS = ("cpu_model", "cores", "kernel", "os", "memory_bytes")
CONFIG_KEYS = ("duration_s", "warmup_s", "repetitions", "connections", "cpu_quota", "server_cpus", "client_cpus")


class CompareError(ValueError):
    """Runs that cannot be compared: str() says which and why."""


@dataclass
class Cell:
    """One entry in one mode of one run."""

    rps: float
    of_floor: float
    of_reference: float | None
    floor: str = "floor"  # the floor of_floor divides by: the entry's own (entry.toml `floor`)


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


def compare(runs: list[Run], reference: str = "nginx-lua") -> Comparison:
    """The runs side by side; raises CompareError when one lacks a floor in a mode it measured."""
    labels = [r.run_id for r in runs]
    if len(set(labels)) < len(labels):
        labels = [f"{r.run_id} ({i + 1})" for i, r in enumerate(runs)]
    medians = []  # per run: (entry, mode) -> median requests/s
    for run, label in zip(runs, labels, strict=True):
        series = group_samples(run.samples)
        floors = [e.name for e in run.entries if e.is_floor]
        if not floors or not any(name in floors for name, _ in series):
            raise CompareError(
                f"run {label} has no floor: its requests/s belong to its machine and cannot be ranked against "
                "another's (bench it with the floor peer: arena bench ... floor)"
            )
        medians.append({key: median(s["rps"]) for key, s in series.items()})
    modes = list(dict.fromkeys(m for r in runs for m in r.config.modes))
    comparison = Comparison(runs, labels, reference, [], differences=_differences(runs, labels))
    for mode_name in modes:
        lines: dict[str, Line] = {}
        for i, (run, figures) in enumerate(zip(runs, medians, strict=True)):
            ref = figures.get((reference, mode_name))
            for (name, m), rps in figures.items():
                record = run.entry(name)
                if m != mode_name or record is None or record.is_floor:
                    continue
                own = run.floor_of(record)  # the floor of its mechanism, in this run
                floor = figures.get((own.name, mode_name)) if own else None
                if floor is None or floor <= 0:
                    named = record.floor or "its floor"
                    raise CompareError(
                        f"run {labels[i]} has no figure of {named} (the floor {name} is divided by) in "
                        f"{mode_name}: nothing to read it against"
                    )
                cell = Cell(rps, rps / floor, rps / ref if ref else None, own.name)
                lines.setdefault(name, Line(name, [None] * len(runs))).cells[i] = cell
        if not lines:
            continue
        ranked = sorted(lines.values(), key=lambda line: line.score, reverse=True)
        for rank, line in enumerate(ranked, 1):
            line.rank = rank
        comparison.modes.append(mode_name)
        comparison.lines[mode_name] = ranked
    return comparison


def table(comparison: Comparison, mode_name: str) -> Table:
    """One mode's table: rank, entry, per run req/s, × its own floor (named), ×reference; the verdict. Every
    column but the entry and the verdict is numeric."""
    headers = ["#", "entry"]
    for label in comparison.labels:
        headers += [f"{label} req/s", "× its floor", f"× {comparison.reference}"]
    headers.append("runs")
    rows = []
    for line in comparison.lines[mode_name]:
        row = [str(line.rank), line.entry]
        for cell in line.cells:
            if cell is None:
                row += ["–", "–", "–"]
            else:
                of_ref = f"{cell.of_reference:.2f}" if cell.of_reference is not None else "–"
                row += [f"{cell.rps:,.0f}", f"{cell.of_floor:.3f} {cell.floor}", of_ref]
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
        out += ["", f"## {mode_name}", "", md.table(table(comparison, mode_name))]
    return "\n".join(out) + "\n"
