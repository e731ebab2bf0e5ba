"""The results of `arena stack` as report sections: per mode a table (requests/s, p99, CPU
µs per request of the whole stack and its ratio to nginx alone, the entry's share, peak
RSS) and a bar chart of the CPU per request; then where the CPU goes (nginx and the entry,
user and kernel time); then the samples that could not be taken. Used for the command's own
report.md/report.html and for a bench run's report when written there (`--run`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ..analysis.stats import StatsError, Summary, ratio, summarize
from ..stack.run import BASELINE, MODES, TARGETS, StackRun, StackSample
from . import format as fmt
from .standalone import write_report
from .svg import REPORT_W, Bar, Group, bar_chart
from .tables import Part, Section, Table

HEADING = "Behind nginx with TLS: the deployed path"


def _of(samples: list[StackSample], value: Callable[[StackSample], float | None]) -> Summary | None:
    values = [v for v in (value(s) for s in samples) if v is not None]
    return summarize(values) if values else None


def _ratio_cell(mine: list[StackSample], base: list[StackSample]) -> str:
    a = [s.cpu_us_per_req for s in mine if s.cpu_us_per_req]
    b = [s.cpu_us_per_req for s in base if s.cpu_us_per_req]
    try:
        r = ratio(a, b)
    except StatsError:
        return fmt.NONE
    return f"{r.median_ratio:.2f}× ({r.lo:.2f}–{r.hi:.2f})"


def _share(v: float | None) -> str:
    return fmt.NONE if v is None else f"{v:.0%}"


def _busy(samples: list[StackSample]) -> str:
    """The median share of a core the stack and the load generator used: whichever is near
    1.00 was the bottleneck; both well below it, the machine's other load was."""
    stack = _of(samples, lambda s: s.cpu_s / s.duration_s if s.duration_s else None)
    client = _of(samples, lambda s: s.client_cpu_s / s.wall_s if s.wall_s else None)
    return fmt.NONE if stack is None or client is None else f"{stack.median:.2f} / {client.median:.2f}"


def grouped(record: StackRun) -> dict[tuple[str, str], list[StackSample]]:
    """(stack, mode) -> its samples, in the run's order of stacks and modes."""
    out: dict[tuple[str, str], list[StackSample]] = {}
    for mode in record.config["modes"]:
        for stack in record.stacks:
            out[(stack["name"], mode)] = [s for s in record.samples if s.stack == stack["name"] and s.mode == mode]
    return out


def mode_section(record: StackRun, mode: str) -> Section:
    by = grouped(record)
    base = by.get((BASELINE, mode), [])
    table = Table(
        [
            "stack",
            "requests/s median (min–max)",
            "p99 µs",
            "CPU µs/req of the stack",
            f"CPU ÷ {BASELINE}",
            "entry's share of the CPU",
            "peak RSS of the stack",
            "cores busy: stack / load generator",
            "samples",
        ],
        [],
        numeric={1, 2, 3, 4, 5, 6, 7, 8},
    )
    bars = []
    for stack in record.stacks:
        mine = by[(stack["name"], mode)]
        cpu = _of(mine, lambda s: s.cpu_us_per_req)
        wrong = sum(s.unexpected for s in mine)
        note = f", {wrong:,} wrong answers" if wrong else ""
        if not mine:
            table.muted.add(len(table.rows))
        table.rows.append(
            [
                stack["name"],
                fmt.spread(_of(mine, lambda s: s.rps), fmt.count),
                fmt.us(_of(mine, lambda s: s.p99_us).median) if _of(mine, lambda s: s.p99_us) else fmt.NONE,
                fmt.spread(cpu, fmt.us),
                _ratio_cell(mine, base) if mine else fmt.NONE,
                fmt.NONE if stack["kind"] == "alone" else fmt.spread(_of(mine, lambda s: s.entry_share), _share),
                fmt.spread(_of(mine, lambda s: s.peak_rss_bytes), fmt.size),
                _busy(mine),
                f"{len(mine)}{note}",
            ]
        )
        bars.append(
            Group(
                stack["name"],
                [Bar("CPU µs/req", cpu.median if cpu else None, cpu and cpu.lo, cpu and cpu.hi, note="no samples")],
            )
        )
    chart = bar_chart(
        f"CPU µs per request of the whole stack: {mode}", "stack_cpu_us_per_req", bars, fmt.us, mode, width=REPORT_W
    )
    words = MODES[mode].words if mode in MODES else mode
    return Section(f"{mode}: {words}", table, [chart])


def breakdown_section(record: StackRun) -> Section:
    """Median CPU µs per request of nginx and of the rest of the stack, user and kernel."""
    table = Table(
        ["stack", "mode", "nginx user", "nginx kernel", "entry user", "entry kernel", "whole stack"],
        [],
        numeric={2, 3, 4, 5, 6},
    )
    for (stack, mode), mine in grouped(record).items():
        if not mine:
            continue
        cells = [stack, mode]
        for nginx in (True, False):
            for kernel in (False, True):
                s = _of(mine, lambda x, n=nginx, k=kernel: x.us_per_req(n, k))
                cells.append(fmt.us(s.median) if s else fmt.NONE)
        whole = _of(mine, lambda x: x.cpu_us_per_req)
        cells.append(fmt.us(whole.median) if whole else fmt.NONE)
        table.rows.append(cells)
    return Section("Where the CPU goes (µs per request, medians; the entry: every process but nginx)", table)


def targets_section(record: StackRun) -> Section | None:
    """Each target of the deployed path (docs/arena/stack.md) whose stacks were measured: the best stack's ratio of
    median CPU per request to the reference's, with its range, and whether it holds."""
    by = grouped(record)
    table = Table(["target", "mode", "best stack", "CPU ratio (min–max)", "limit", "holds"], [], numeric={3, 4})
    for t in TARGETS:
        base = [s.cpu_us_per_req for s in by.get((t.reference, t.mode), []) if s.cpu_us_per_req]
        found = []
        for name in t.stacks:
            mine = [s.cpu_us_per_req for s in by.get((name, t.mode), []) if s.cpu_us_per_req]
            if mine and base:
                found.append((ratio(mine, base), name))
        if not found:
            continue
        r, name = min(found, key=lambda x: x[0].median_ratio)
        holds = "yes" if r.median_ratio <= t.limit else "no"
        if r.lo <= t.limit < r.hi:
            holds += " (the range crosses the limit)"
        table.rows.append(
            [
                t.words,
                t.mode,
                f"{name} ÷ {t.reference}",
                f"{r.median_ratio:.2f}× ({r.lo:.2f}–{r.hi:.2f})",
                f"{t.limit:g}×",
                holds,
            ]
        )
    return Section("Targets, CPU per request in the same run", table) if table.rows else None


def failures_section(record: StackRun) -> Section | None:
    if not record.failures:
        return None
    table = Table(["stack", "mode", "repetition", "why"], [], numeric={2})
    for f in record.failures:
        table.rows.append([f["stack"], f["mode"], str(f["rep"] + 1), f["reason"].splitlines()[0]])
    return Section("Samples not taken", table)


def stack_sections(record: StackRun) -> list[Section]:
    out = [mode_section(record, m) for m in record.config["modes"]]
    out.append(breakdown_section(record))
    extra = (targets_section(record), failures_section(record))
    return out + [x for x in extra if x]


FILE = "stack.json"  # in RUN/stack/ (with --run) or results/stack-<id>/, beside its report


def write(out_dir: Path, record: StackRun) -> tuple[Path, Path, Path]:
    """out_dir/stack.json, report.md and report.html; their paths."""
    data = out_dir / FILE
    data.write_text(json.dumps(record.to_json(), indent=1))
    title = "renard arena: the deployed path, behind nginx with TLS"
    return (data, *write_report(out_dir, title, record.method, stack_sections(record)))


def run_part(run_dir: Path) -> list[Part]:
    """The stack measurement written into a run's directory, as its report includes it; a
    file that cannot be read is said, never skipped."""
    path = run_dir / "stack" / FILE
    if not path.is_file():
        return []
    href = "stack/report.html"
    try:
        record = StackRun.load(json.loads(path.read_text(encoding="utf-8")))
        found = stack_sections(record)
    except (OSError, ValueError, KeyError, TypeError) as err:
        return [Part(HEADING, f"stack/{FILE} could not be read ({type(err).__name__}: {err}).", href, [])]
    return [Part(HEADING, record.method, href, found)]


def summary_lines(record: StackRun) -> list[str]:
    """One line per stack and mode for the console: requests/s, CPU µs/req, its ratio to nginx alone."""
    by = grouped(record)
    out = []
    for (name, mode), mine in by.items():
        cpu = _of(mine, lambda s: s.cpu_us_per_req)
        if cpu is None:
            continue
        rps = _of(mine, lambda s: s.rps)
        ratio_words = _ratio_cell(mine, by.get((BASELINE, mode), []))
        out.append(
            f"{name} {mode}: {fmt.spread(rps, fmt.count)} requests/s, {fmt.spread(cpu, fmt.us)} CPU µs/req, "
            f"{ratio_words} {BASELINE}"
        )
    return out
