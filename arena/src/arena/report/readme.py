"""The README's results table: its one header (core/columns.py: the top README's and every
entry skeleton's, so that the two cannot differ) and an entry's row, computed from a run's view in the
formats the README writes: thousands apart by a space, median (min–max), `–` where the run
has no figure (a mode it did not measure, instructions of an entry valgrind cannot run).

The columns, each from one mode of the view or a count written into the run:
- keep-alive, capped: CPU µs/req, req/s, × nginx, of floor: keepalive-capped, whose rank the
  table follows (view.py): the server's own CPU µs per request from its cgroup (for a row the
  cap distorts, the whole core's it is ranked on, said, then the capped one), then wrk's
  requests/s, then the ratios of the CPU figure oriented so that above 1 is cheaper (the
  reference's CPU per request ÷ the entry's; the entry's own floor's ÷ the entry's, the floor
  named when it is not the default one), each from pairs of samples taken in the same round
  with its 95% interval, 1.71 [1.62–1.80], "n.s." only when the interval holds 1;
- syscalls/req: `arena syscalls --run`'s count for keepalive and pipeline16 (RUN/syscalls/
  syscalls.json; every call, a runtime's own included, as measured);
- instr./req: callgrind's count for keepalive and pipeline16 (native entries);
- 16 pipelined, new connection capped: pipeline16 and close-capped, each ranked like keep-alive on
  the server's own CPU µs per request from its cgroup, wrk's requests/s beside it, and where wrk
  was the limit in some samples (client-bound: its core full, the server's not) the cell says in
  how many: there the server waited for wrk, and its figure is the cost at wrk's pace;
- peak RSS: the median over every sample of every mode (the report's footprint table);
- artifact + runtime, start-up (median), spec cases: the entry's record.
The keep-alive CPU per request on a whole core is not a column: there the fastest entries wait
for wrk, and a server woken for fewer requests at a time pays more per request (the report
keeps it, with that warning).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from ..analysis.compare import PairedRatio
from ..analysis.stats import Summary, summarize
from ..core.columns import COLUMNS, COMPACT_COLUMNS, HEADER
from ..core.model import EntryRecord, Run
from ..core.modes import MODES
from ..counts.syscalls import EntryCounts
from ..counts.syscalls import load as load_syscalls
from ..entries.manifest import ManifestError, discover
from . import format as fmt
from .view import Row, View, counted, fmt_paired, ranked_cpu, startup

FIRST = ("php-fpm",)  # the script renard replaces comes first; then the ranking by capped keep-alive
CAPPED, KEEPALIVE, PIPELINED, CLOSE_CAPPED = "keepalive-capped", "keepalive", "pipeline16", "close-capped"
NONE = fmt.NONE
SYSCALLS = Path("syscalls") / "syscalls.json"  # `arena syscalls --run RUN` writes it into the run


def syscall_counts(run_dir: Path) -> dict[str, EntryCounts]:
    """Each entry's system-call counts from run_dir/SYSCALLS, by name; {} when the run has none.
    Raises ValueError naming the file when it cannot be read."""
    path = run_dir / SYSCALLS
    if not path.is_file():
        return {}
    try:
        entries, _ = load_syscalls(path)
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: cannot be read ({type(err).__name__}: {err})") from None
    return {c.entry: c for c in entries}


def thousands(value: float) -> str:
    """A count as the README writes it: 41 552."""
    return f"{value:,.0f}".replace(",", " ")


def spread(summary: Summary | None) -> str:
    """Requests/s: 41 552 (37 335–46 634)."""
    if summary is None:
        return NONE
    return f"{thousands(summary.median)} ({thousands(summary.lo)}–{thousands(summary.hi)})"


def cost(summary: Summary | None) -> str:
    """CPU µs per request: 7.04 (7.01–9.73)."""
    if summary is None:
        return NONE
    return f"{summary.median:.2f} ({summary.lo:.2f}–{summary.hi:.2f})"


def ranked_cost(view: View, row: Row | None) -> str:
    """The ranking column's cell: the figure the row is ranked on first (ranked_cpu), so that the
    table's order is its cells' order; a row the cap distorts says so and gives its capped figure:
    9.80 (9.51–10.02) whole core; capped 15.75 (15.01–16.44)."""
    figure, whole = ranked_cpu(view, row)
    if not whole:
        return cost(figure)
    return f"{cost(figure)} whole core; capped {cost(row.cpu)}"


def cost_and_rate(row: Row | None) -> str:
    """A mode's cell: CPU µs per request with its range, requests/s, and the samples wrk
    limited: 0.41 (0.40–0.42) · 1 701 340 · client-bound 3/3; `–` without figures."""
    if row is None or row.series is None:
        return NONE
    rps = row.summary("rps")
    out = f"{cost(row.cpu)} · {thousands(rps.median) if rps else NONE}"
    return out + (f" · client-bound {row.client_bound}/{row.samples}" if row.client_bound else "")


def times_reference(row: Row | None) -> str:
    if row is None or (row.ratio is None and not row.is_reference):
        return NONE
    if row.is_reference:
        return "1"
    return interval(row.ratio)


def of_floor(row: Row | None, run: Run) -> str:
    """1.00 for a floor; 0.94 n.s.; 1.06 n.s. of floor-uring (its floor named when not the default)."""
    if row is not None and row.entry.is_floor:  # a floor is its own
        return "1.00"
    if row is None or row.of_floor is None:
        return NONE
    named = "" if row.floor is None or row.floor is run.floor else f" of {row.floor.name}"
    return f"{interval(row.of_floor)}{named}"


def interval(r: PairedRatio) -> str:
    """A paired ratio as the README writes it: 1.71 [1.62–1.80]; n.s. only where the interval
    holds 1 (view.fmt_paired says when it is wider than ±3%)."""
    return fmt_paired(r) + ("" if r.significant else " n.s.")


def syscalls_cell(counts: EntryCounts | None) -> str:
    """System calls per request, keep-alive · 16 pipelined, as counted: 3.00 · 0.19; – · – when not."""
    found = [counts.count(m) if counts and not counts.error else None for m in (KEEPALIVE, PIPELINED)]
    return " · ".join(NONE if c is None else f"{c.per_request:.2f}" for c in found)


def startup_ms(summary: Summary | None) -> str:
    """3.2 ms, 163 ms, 4 377 ms."""
    if summary is None:
        return NONE
    v = summary.median
    return f"{v:.1f} ms" if v < 100 else f"{thousands(v)} ms"


def footprint(artifact: int | None, runtime: int | None) -> str:
    """603 kB alone (self-contained), 37 kB + 271.0 MB with its runtime."""
    if artifact is None:
        return NONE
    return fmt.size(artifact) + (f" + {fmt.size(runtime)}" if runtime else "")


def spec_cases(entry: EntryRecord) -> str:
    """235/235; an allowed alternative counted apart: 3 + 72 allowed of 235; a peer's core route."""
    if entry.is_floor:
        return "not a server of the spec"
    v = entry.verify
    if v is None:
        return NONE
    total = v.passed + v.alt + v.failed
    cases = f"{v.passed}/{total}" if not v.alt else f"{v.passed} + {v.alt} allowed of {total}"
    if entry.kind == "ours":
        return cases
    core = {True: "yes", False: "no", None: "not recorded"}[v.core_route]
    return f"{cases}; core route {core}"


def rows_by_mode(view: View) -> dict[str, dict[str, Row]]:
    return {mv.mode.name: {r.entry.name: r for r in mv.rows} for mv in view.modes}


def cells(view: View, name: str, syscalls: dict[str, EntryCounts] | None = None) -> list[str]:
    """NAME's row as its 14 cells, in COLUMNS order; syscalls: syscall_counts() of the run's
    directory (None: none). Raises KeyError when the run has no NAME."""
    entry = view.run.entry(name)
    if entry is None:
        raise KeyError(name)
    rows = {mode: by_name.get(name) for mode, by_name in rows_by_mode(view).items()}
    capped = rows.get(CAPPED)
    pipelined, close = rows.get(PIPELINED), rows.get(CLOSE_CAPPED)
    counts = [counted(entry, MODES[m]) for m in (KEEPALIVE, PIPELINED)]
    rss = [v for series in view.series_of(name) for v in series["peak_rss_bytes"]]
    return [
        f"`{fmt.text(name)}`",
        fmt.text(entry.tier_name),
        ranked_cost(view, capped),
        spread(capped.summary("rps") if capped else None),
        times_reference(capped),
        of_floor(capped, view.run),
        syscalls_cell((syscalls or {}).get(name)),
        " · ".join(NONE if c is None else thousands(c.per_request) for c in counts),
        cost_and_rate(pipelined),
        cost_and_rate(close),
        fmt.size(summarize(rss).median) if rss else NONE,
        footprint(entry.artifact_bytes, entry.runtime_bytes),
        startup_ms(startup(entry)),
        spec_cases(entry),
    ]


def compact_cells(
    view: View, name: str, syscalls: dict[str, EntryCounts] | None = None, link: Callable[[str], str] | None = None
) -> list[str]:
    """NAME's row of the README's compact table: the full row's cells of COMPACT_COLUMNS; link(name),
    when given, writes the first (the README's: the entry linked to its own README)."""
    full = dict(zip(COLUMNS, cells(view, name, syscalls), strict=True))
    out = [full[column] for column in COMPACT_COLUMNS]
    return [link(name), *out[1:]] if link else out


def line(row_cells: list[str]) -> str:
    return "| " + " | ".join(row_cells) + " |"


def row(view: View, name: str, syscalls: dict[str, EntryCounts] | None = None) -> str:
    """NAME's line of the README's results table; raises KeyError when the run has no NAME."""
    return line(cells(view, name, syscalls))


def compact_row(
    view: View, name: str, syscalls: dict[str, EntryCounts] | None = None, link: Callable[[str], str] | None = None
) -> str:
    """NAME's line of the README's compact table (link: compact_cells'); raises KeyError when the run has no NAME."""
    return line(compact_cells(view, name, syscalls, link))


def split(readme_line: str) -> list[str]:
    """A Markdown table line's cells, stripped."""
    return [c.strip() for c in readme_line.strip().strip("|").split("|")]


def readme_order(view: View) -> list[str]:
    """Every entry of the run in the README's order: FIRST, then as the capped keep-alive mode
    ranks them (the server's CPU per request, view.py; the floor among them by its own), then
    the entries without figures."""
    capped = rows_by_mode(view).get(CAPPED, {})
    names = [e.name for e in view.run.entries]

    def key(name: str) -> tuple:
        r = capped.get(name)
        value = r.rank_value if r is not None and r.reason is None else None
        return (name not in FIRST, value is None, -(value or 0), name)

    return sorted(names, key=key)


def find_row(text: str, name: str) -> str | None:
    """NAME's line in a results table of text (a table under HEADER's line), else None: a
    line of another table that names the entry is not its row."""
    header, under = HEADER.splitlines()[0], False
    for line in text.splitlines():
        if line.strip() == header:
            under = True
        elif not line.startswith("|"):
            under = False
        elif under and NAME_CELL.sub(r"\1", split(line)[0]) == f"`{name}`":
            return line
    return None


NAME_CELL = re.compile(r"^\[(`[^`]+`)\]\([^)]*\)$")  # [`name`](its README): the name linked


NOT_IN_RUN = (NONE, f"{NONE} · {NONE}")  # a cell the run holds no figure for


def stale(readme_line: str, expected: list[str]) -> list[tuple[str, str, str]]:
    """(column, README's cell, the run's cell) for every cell after the entry's name that the
    run holds a figure for (it measured the mode, verified the entry…) and that differs; a
    line with fewer cells lacks the rest."""
    have = split(readme_line)
    out = []
    for i, column in enumerate(COLUMNS[1:], start=1):
        mine = have[i] if i < len(have) else "(absent)"
        if expected[i] not in NOT_IN_RUN and mine != expected[i]:
            out.append((column, mine, expected[i]))
    return out


def declared_tiers(run: Run, repo: Path) -> list[str]:
    """Gives each peer of a run recorded before tiers (no `tier`) the tier its entry.toml declares
    here (a classification, not a figure: the run's own shows "peer"); the entries so named."""
    try:
        declared = {e.name: e.tier for e in discover(repo)}
    except ManifestError:
        return []
    named = []
    for record in run.entries:
        if record.kind == "peer" and record.tier is None and declared.get(record.name):
            record.tier = declared[record.name]
            named.append(f"{record.name}'s ({record.tier})")
    return named


def readme_links(repo: Path):
    """name(entry) for the compact and price tables: [`name`](its folder's README.md, from the repository's
    root) for an entry declared here, else `name`."""
    try:
        folders = {e.name: e.folder.relative_to(repo) for e in discover(repo)}
    except (ManifestError, ValueError):
        folders = {}
    return lambda name: f"[`{name}`]({folders[name]}/README.md)" if name in folders else f"`{name}`"
