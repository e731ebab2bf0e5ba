"""The report's tables as plain text cells; markdown.py and html.py escape them for their format."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..analysis.stats import summarize
from ..conformance.sections import SECTIONS
from ..core.modes import STEAL_LIMIT, TIERS
from ..load.mix import words as mix_words
from . import format as fmt
from . import idiom
from .view import ModeView, View, plural, startup


@dataclass
class Table:
    """Cells as plain, unescaped text; each renderer escapes for its own format."""

    headers: list[str]
    rows: list[list[str]]
    numeric: set[int] = field(default_factory=set)  # right-aligned column indices
    muted: set[int] = field(default_factory=set)  # row indices shown greyed (no figures)


@dataclass
class Section:
    """A heading, its table, and the charts (SVG, drawn in HTML only) that follow it."""

    heading: str
    table: Table
    charts: list[str] = field(default_factory=list)


@dataclass
class Part:
    """A load measurement written into a run's directory (`arena latency --run`, `arena sweep
    --run`), as the run's report includes it: its sections under one heading, with its
    method and a link to its own report."""

    heading: str
    method: str  # how it was measured, in words ("" when its JSON did not record it)
    href: str  # its own report, relative to the run directory
    sections: list[Section]


def mode_heading(mv: ModeView) -> str:
    """A mode's heading, naming the figure it ranks on (view.ranked_figure): the server's CPU per
    request where the run read it, else requests per second."""
    return f"{mv.figure}: {mv.mode.name} ({mv.mode.words})"


def ranking_heading(mv: ModeView) -> str:
    """The heading of the mode the README ranks on, which the report leads with."""
    return f"{mv.figure}, the README's ranking: {mv.mode.name} ({mv.mode.words})"


# What each tier is, as the ranking's lines say it (modes.TIERS; "peer": a run before tiers).
TIER_WORDS = {
    "tuned": "our renards, the spec written by hand (own event loop, parser and responses)",
    "production": "a language's usual server, as its users write it",
    "infrastructure": "a server run as it comes, configured",
    "floor": "the design's limit, not a conforming server, not ranked",
    "peer": "what people run instead (a run recorded before tiers)",
}


def tier_lines(mv: ModeView) -> list[str]:
    """One line per tier of the mode's rows, in modes.TIERS order: what the tier is, then its
    entries in the mode's order, each with its rank (#3 rust; – where not ranked)."""
    by_tier: dict[str, list[str]] = {}
    for row in mv.rows:
        rank = "–" if row.rank is None else f"#{row.rank}"
        by_tier.setdefault(row.entry.tier_name, []).append(f"{rank} {fmt.text(row.entry.name)}")
    order = [*TIERS, *sorted(set(by_tier) - set(TIERS))]
    return [f"{t}, {TIER_WORDS.get(t, t)}: {', '.join(by_tier[t])}" for t in order if t in by_tier]


def mode_table(view: View, mv: ModeView) -> Table:
    """The ranked table of one mode; where it ranks on the server's CPU per request, that column
    comes right after the tier (before requests/s), so that the figure ranked on is read first."""
    order = list(range(len(fmt.COLUMNS)))
    if mv.figure.startswith("Server CPU"):
        order.remove(CPU_COLUMN)
        order.insert(order.index(RPS_COLUMN), CPU_COLUMN)
    headings = fmt.headings(view.reference)
    numeric = {n for n, i in enumerate(order) if fmt.COLUMNS[i][1]}
    table = Table([headings[i] for i in order], [], numeric=numeric)
    for row in mv.rows:
        if row.reason is not None:
            table.muted.add(len(table.rows))
            table.rows.append(fmt.row_cells(row))  # its reason stays in the 5th cell
        else:
            cells = fmt.row_cells(row)
            table.rows.append([cells[i] for i in order])
    return table


# fmt.COLUMNS' indices of the server's CPU µs per request and of requests/s
CPU_COLUMN = next(i for i, c in enumerate(fmt.COLUMNS) if c[0].startswith("CPU µs/req"))
RPS_COLUMN = next(i for i, c in enumerate(fmt.COLUMNS) if c[0].startswith("requests/s"))


IDIOM_WORDS = (
    "Per language, its usual server as its users write it (a production entry) against our tuned renard of "
    "the same language (hand-written event loop, parser and responses): the production entry's CPU µs per "
    "request ÷ the tuned renard's, pair by pair in this run, with its 95% interval; above 1, the idiom costs "
    "that many times more. In the capped keep-alive mode, or on a whole core where the cap distorts either."
)


def idiom_table(view: View) -> Table | None:
    """The price of the idiom per production entry (idiom.py); None when the run has none."""
    found = idiom.prices(view)
    if not found:
        return None
    table = Table(list(idiom.COLUMNS), [], numeric={3, 4})
    for p in found:
        if p.ratio is None:
            table.muted.add(len(table.rows))
        table.rows.append(idiom.cells(view, p))
    return table


FAILED_WORDS = (
    "Samples the entry did not let the arena measure (it did not start, did not answer, answered wrongly, "
    "exited, or stopped answering), or that the machine spoiled; each has its server's stderr tail in the log."
)


def failed_table(view: View) -> Table | None:
    """Every failed sample, per entry and mode: repetition, reason, log; None when none failed."""
    if not view.failed:
        return None
    table = Table(["entry", "mode", "rep", "reason", "log"], [], numeric={2})
    for group in view.failed:
        for f in group.failures:
            table.rows.append([fmt.text(f.entry), f.mode, str(f.rep + 1), f.reason, f.log or "–"])
    return table


def footprint_table(view: View) -> Table:
    """Size on disk, startup and memory per entry; memory over all samples of all modes."""
    table = Table(
        [
            "entry",
            "own artifact",
            "runtime",
            "startup ms median (min–max)",
            "peak RSS median (min–max)",
            "PSS median (min–max)",
        ],
        [],
        numeric={1, 2, 3, 4, 5},
    )
    for entry in view.run.entries:
        mine = view.series_of(entry.name)
        cells = [fmt.text(entry.name), fmt.size(entry.artifact_bytes), _runtime(entry.runtime_bytes)]
        cells.append(fmt.spread(startup(entry), fmt.ms))
        for metric in ("peak_rss_bytes", "pss_bytes"):
            values = [v for series in mine for v in series[metric]]
            cells.append(fmt.spread(summarize(values) if values else None, fmt.size))
        if not entry.available:
            table.muted.add(len(table.rows))
            cells[1] = "unavailable: " + fmt.text(entry.reason)
        table.rows.append(cells)
    return table


def _runtime(size: int | None) -> str:
    """A runtime's size: "none" for a self-contained artifact, "–" for a run that did not record it."""
    return "–" if size is None else "none" if size == 0 else fmt.size(size)


def conformance_table(view: View) -> Table:
    """The verifier's pass / alt / fail counts per entry."""
    table = Table(["entry", "pass", "alt", "fail"], [], numeric={1, 2, 3})
    for entry in view.run.entries:
        v = entry.verify
        if v is None:
            table.muted.add(len(table.rows))
            why = "not a conforming server" if entry.is_floor else "not verified"
            table.rows.append([fmt.text(entry.name), why, "", ""])
        else:
            table.rows.append([fmt.text(entry.name), str(v.passed), str(v.alt), str(v.failed)])
    return table


SPEC_FROM_REPORT = "../../spec/SPEC.md"  # a report lives in results/<run-id>/


def section_links() -> list[tuple[str, str]]:
    """(section, link to its rules in SPEC.md) for the matrix's columns."""
    return [(name, f"{SPEC_FROM_REPORT}#{anchor}") for name, anchor in SECTIONS.items()]


def section_table(view: View) -> Table | None:
    """Entry × spec section, each cell `pass · alt · fail`, and whether the core route holds
    (GET / → 302 to a uniform k, all a peer must do). None when no entry recorded sections."""
    verified = [e for e in view.run.entries if e.verify and e.verify.sections]
    if not verified:
        return None
    extra = sorted({s for e in verified for s in e.verify.sections} - set(SECTIONS))
    columns = list(SECTIONS) + extra
    table = Table(["entry", "core route", *columns], [], numeric=set(range(2, 2 + len(columns))))
    for entry in verified:
        v = entry.verify
        cells = [fmt.text(entry.name), {True: "yes", False: "no", None: "not recorded"}[v.core_route]]
        for section in columns:
            c = v.sections.get(section)
            cells.append(f"{c['pass']} · {c['alt']} · {c['fail']}" if c else "–")
        table.rows.append(cells)
    return table


def failing_cases(view: View) -> list[tuple[str, list[dict[str, str]]]]:
    """(entry, its failed cases) for every entry with at least one."""
    return [(e.name, e.verify.failures) for e in view.run.entries if e.verify and e.verify.failures]


def entries_table(view: View) -> Table:
    table = Table(["entry", "language", "kind", "version", "description", "status"], [])
    for entry in view.run.entries:
        if not entry.available:
            table.muted.add(len(table.rows))
        table.rows.append(
            [fmt.text(v) for v in (entry.name, entry.language, entry.kind, entry.version, entry.description)]
            + ["measured" if entry.available else "unavailable: " + fmt.text(entry.reason)]
        )
    return table


def _tool_version(name: str, version: str) -> str:
    """ "wrk 4.1.0" from ("wrk", "4.1.0"), and "go version go1.26" as it is, not doubled."""
    return version if version.lower().startswith(name.lower()) else f"{name} {version}"


def title(view: View) -> str:
    return f"renard arena: run {fmt.text(view.run.run_id)}, {fmt.date(view.run.started)}"


def machine_lines(view: View) -> list[str]:
    m = view.run.machine
    tools = ", ".join(_tool_version(k, str(v)) for k, v in m.tools.items()) or "not recorded"
    memory = fmt.size(m.memory_bytes) if m.memory_bytes else "memory not recorded"
    return [
        f"CPU: {fmt.text(m.cpu_model)}, {m.cores} cores, {memory}",
        f"System: {fmt.text(m.os)}, kernel {fmt.text(m.kernel)}",
        f"Tools: {fmt.text(tools)}",
    ]


def _min(seconds: float) -> str:
    return f"{seconds / 60:.1f} min"


def time_spent(view: View) -> list[str]:
    """ "The bench planned X and took Y" and where Y went (run.json timing), when recorded."""
    t = view.run.timing
    if t is None:
        return []
    stages = ", ".join(f"{what} {_min(s)}" for what, s in t.phases() if s)
    return [
        f"The bench planned {_min(t.planned_s)} (builds not counted) and took {_min(t.took_s)}: {stages}; "
        f"its {t.sampled} samples' load runs {_min(t.load_s)}, warm-ups {_min(t.warmup_s)}, starts, checks, "
        f"stops and {t.steal_repeats} load runs repeated for steal {_min(t.overhead_s)}"
        + (f"; {t.steal_kept} more stolen from, kept unrepeated (the repeats' budget spent)." if t.steal_kept else ".")
    ]


def method_lines(view: View) -> list[str]:
    c = view.run.config
    lines = [
        f"Each server is pinned to CPU {fmt.text(c.server_cpus)} and the load generator (wrk, "
        f"{c.connections} connections) to CPU {fmt.text(c.client_cpus)}.",
        f"{c.repetitions} repetitions of {c.duration_s:g} s after a {c.warmup_s:g} s warm-up, per entry "
        "and mode, with entries interleaved (A B C A B C …).",
        f"Requests sent (--mix {fmt.text(c.mix)}): {fmt.text(mix_words(c.mix))}.",
        *own_warmup(view),
        *machine_load(view),
        *time_spent(view),
        "Figures are the median with the min–max of the repetitions; CPU µs/req is the server's "
        "CPU time divided by the requests it answered: in a capped mode from its cgroup's counter (ns), "
        "else its utime + stime from /proc (10 ms ticks); requests per CPU-s is 1,000,000 ÷ CPU µs/req.",
        f"Ratios to {view.reference} and to each entry's floor compare the figure the mode ranks on, above 1 "
        "better: requests/s (entry ÷ other), or CPU per request (other ÷ entry) in a capped mode and wherever "
        "the server's cgroup was read; from pairs of samples of the two taken in the same round (or back to "
        "back in an extra round), "
        'the median of the per-pair ratios with its bootstrap 95% interval, "not significant" when the interval '
        "holds 1; a ratio whose interval stayed wider than ±3% (at most 10 pairs, or the run's time for extra "
        "pairs spent) says its half-width and pairs.",
    ]
    if c.cpu_quota is not None:
        lines.append(
            f"Capped modes run the server in a cgroup limited to {c.cpu_quota:.0%} of its core, so that "
            "wrk has more CPU than the server, and rank on the server's own CPU per request from the "
            "cgroup's counter, not on wrk's requests/s (on a dedicated core the fastest entries wait for "
            "wrk, and a server woken for fewer requests at a time pays more per request); an entry whose "
            "CPU per request rises by more than 15% under the cap, beyond the noise (the min–max ranges "
            'apart), is ranked by its dedicated-core CPU per request instead ("the cap distorts this entry"); '
            'a rise the repetitions cannot confirm is said ("may distort") and ranked by its capped figure. '
            "Each row says which figure its rank rests on."
        )
    floors = [e.name for e in view.run.entries if e.is_floor and e.available]
    if floors:
        lines.append(
            f"The floor{'s' if len(floors) > 1 else ''} ({', '.join(floors)}) {fmt.text(FLOOR)}; "
            "\"of its floor\" is each entry's figure as a share of its own floor's in the same mode (as the "
            "ratios above), the floor of its mechanism (entry.toml `floor`: the epoll floor unless it names "
            "another), named in each cell; an entry better than its floor beyond the noise is a fault of "
            "the measurement, said in the warnings."
        )
    return lines


def machine_load(view: View) -> list[str]:
    """The load average and the steal time the samples were taken under, in one line."""
    loads = [s.load_1m for s in view.run.samples if s.load_1m is not None]
    steals = [s.steal_share for s in view.run.samples if s.steal_share is not None]
    if not loads and not steals:
        return []
    parts = []
    if loads:
        parts.append(f"1-minute load average {min(loads):.2f}–{max(loads):.2f} at the samples' ends")
    if steals:
        parts.append(
            f"steal time (the hypervisor's share of the server's and wrk's CPUs) {min(steals):.1%}–{max(steals):.1%}"
            f"; a sample above {STEAL_LIMIT:.0%} is repeated once, and flagged if stolen again"
        )
    cgroup = [s for s in view.run.samples if s.cgroup_cpu_s is not None]
    if cgroup:
        parts.append(
            f"in {plural(len(cgroup), 'capped sample')} the server's CPU time was also read from its cgroup's "
            "counter (ns resolution) and checked against /proc's (10 ms ticks)"
        )
    return ["The machine while measuring: " + "; ".join(parts) + "."]


def own_warmup(view: View) -> list[str]:
    """The entries warmed up longer than the run's warm-up (entry.toml `warmup_s`), in one line."""
    c = view.run.config
    own = [e for e in view.run.entries if e.warmup_s and e.warmup_s > c.warmup_s]
    if not own:
        return []
    names = ", ".join(f"{fmt.text(e.name)} {e.warmup_s} s" for e in own)
    return [
        "Warmed up longer, by their own entry.toml (warmup_s: about twice the time their CPU per request "
        f"takes to settle, e.g. a JIT's): {names}. In every mode the warm-up runs on the server's whole "
        "core, and a capped mode's cap applies after it."
    ]


FLOOR = "answers every request with one pre-rendered 302 without parsing it: it is not a conforming server"


def instructions_table(view: View) -> Table | None:
    """User-space instructions per request of the native entries (callgrind), with each one's
    ratio to the floor's count in the same mode; None when no entry was counted."""
    counted = [e for e in view.run.entries if e.instructions]
    if not counted:
        return None
    modes = list(dict.fromkeys(c.mode for e in counted for c in e.instructions))
    headers = ["entry"] + [h for m in modes for h in (f"{m} instructions/req", f"{m} of its floor")]
    table = Table(headers, [], numeric=set(range(1, len(headers))))
    for entry in counted:
        own = view.run.floor_of(entry)
        floor = {c.mode: c.per_request for c in own.instructions} if own and not entry.is_floor else {}
        mine = {c.mode: c.per_request for c in entry.instructions}
        cells = [fmt.text(entry.name)]
        for m in modes:
            value, base = mine.get(m), floor.get(m)
            cells.append(fmt.NONE if value is None else f"{value:,.0f}")
            cells.append(fmt.NONE if value is None or not base else f"{value / base:.2f}× {fmt.text(own.name)}")
        table.rows.append(cells)
    return table


def instruction_profiles(view: View) -> list[tuple[str, str]]:
    """(label, path relative to the run directory) of each saved callgrind_annotate profile."""
    return [(f"{e.name} {c.mode}", c.annotation) for e in view.run.entries for c in e.instructions if c.annotation]


INSTRUCTIONS_WORDS = (
    "User-space instructions per request counted by callgrind (valgrind), the entry on one thread, "
    "the arena's own client on one connection sending GET / HTTP/1.1 with Host: one request per "
    "round trip (keepalive) or 16 per write (pipeline16); start-up excluded as (Ir(10 N) − Ir(N)) ÷ 9 N. "
    "Deterministic to a fraction of a percent where seconds move by tens of percent; "
    "system calls and the kernel's work are not counted."
)
