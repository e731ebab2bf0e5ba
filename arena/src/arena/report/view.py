"""The view of a run that every output renders: groups, ranked rows per mode (its warnings:
caveats.py).

Built once from a Run (already validated: every sample names a listed entry and a
configured mode). Every figure is the median with the min–max of the repetitions; a
comparison is a ratio of medians with the range of the extreme pairings, "not
significant" when the two samples' ranges overlap.

What a rank rests on (docs/arena/method.md: rank servers, not wrk; a timed figure that holds):
- a dedicated-core mode: requests/s; a client-bound row says so (it measured wrk);
- a capped mode: the server's own CPU µs per request under the cap, from its cgroup's counter
  (the kernel's ns; /proc's 10 ms ticks for a run that did not read it), fewer first: the
  requests one CPU-second buys, not wrk's requests/s. Unless the cap distorts the entry (its
  CPU per request rises by more than CAP_DISTORTION over its dedicated-core figure, and the
  two min–max ranges do not overlap, so that noise alone never flags it): then its
  dedicated-core CPU per request, its cost when nothing holds it back. A median rise beyond
  CAP_DISTORTION that the repetitions cannot tell from noise (the ranges overlap, or a side
  has one repetition, as in --quick) is not hidden: the row keeps its capped figure, its
  basis and a warning say the cap may distort it;
- a run where no cgroup could be made: efficiency (requests per server CPU-second), in
  every mode.
Each mode's ratios (to the reference, to the entry's own floor) compare the figure that mode
ranks on, pair by pair (analysis/pairing.py: samples of the two taken in the same round, or
back to back in an extra round), oriented so that above 1 is better: requests/s entry ÷ other,
CPU per request other ÷ entry; the median of the per-pair ratios with its bootstrap 95%
interval (compare.paired_ratio), "not significant" only when the interval holds 1. A run
whose dedicated-core modes read the server's cgroup (every sample: the server sits in an
uncapped cgroup there) ranks them on the server's CPU per request too, requests/s beside it;
an older run ranks them on requests/s. A conforming entry better than its own floor beyond
the repetitions' noise, in requests/s or in CPU per request, in any mode, is warned about as
a fault of the measurement.

What the rows leave for a reader to know (faults, noise, the machine) is in caveats.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..analysis.compare import PairedRatio, paired_ratio
from ..analysis.pairing import figures, pairs_of
from ..analysis.stats import Ratio, Series, Summary, group_samples, median, ratio, summarize
from ..core.model import EntryRecord, Failure, InstructionCount, Run
from ..core.modes import CAP_DISTORTION, Mode

FLOOR_WORDS = (
    "answers every request with one pre-rendered 302 without parsing it: not a conforming server, "
    "the limit of this design on this machine"
)


@dataclass
class Row:
    """One entry in one mode. reason is None when the row has figures."""

    entry: EntryRecord
    series: Series | None
    reason: str | None = None  # why there are no figures
    rank: int | None = None  # None: no figures, or the floor (not ranked)
    # Against the reference's and the own floor's figure in this mode (compared()), pair by pair,
    # above 1 better; None: no usable reference, no floor measured, or no pair of the two.
    ratio: PairedRatio | None = None
    is_reference: bool = False
    of_floor: PairedRatio | None = None
    basis: str = ""  # what the rank rests on, in words
    # The figure ranked by, higher first: requests/s, or requests per server CPU-second
    # (1e6 ÷ the median CPU µs per request); None: not ranked.
    rank_value: float | None = None
    cpu_values: list[float] = field(default_factory=list)  # own_cpu_us() of the series, in repetition order
    cap_cost: Ratio | None = None  # capped CPU per request ÷ dedicated-core CPU per request
    cap_dedicated_reps: int = 0  # repetitions of the dedicated-core figure cap_cost divides by
    dedicated_mode: str | None = None  # the mode cap_cost's dedicated-core figure is from
    instructions: InstructionCount | None = None  # callgrind's count for this mode's load (native entries)
    instructions_of_floor: float | None = None  # ÷ the floor's count in the same mode
    floor: EntryRecord | None = None  # the floor of_floor divides by: the entry's own (Run.floor_of)

    def summary(self, metric: str) -> Summary | None:
        return self.series.summary(metric) if self.series else None

    def median(self, metric: str) -> float | None:
        s = self.summary(metric)
        return s.median if s else None

    @property
    def cpu(self) -> Summary | None:
        """The server's CPU µs per request (own_cpu_us): median and min–max; None: not known."""
        return summarize(self.cpu_values) if self.cpu_values else None

    @property
    def distorted(self) -> bool:
        """The cap raised this entry's CPU per request by more than CAP_DISTORTION, beyond
        the noise (the two min–max ranges do not overlap)."""
        return self.cap_cost is not None and self.cap_cost.median_ratio > CAP_DISTORTION and self.cap_cost.significant

    @property
    def maybe_distorted(self) -> bool:
        """The median CPU per request rose by more than CAP_DISTORTION under the cap, but the
        repetitions cannot tell it from noise: said, not acted on."""
        return self.cap_cost is not None and self.cap_cost.median_ratio > CAP_DISTORTION and not self.distorted

    def unconfirmed_words(self) -> str:
        """Why a rise beyond CAP_DISTORTION is not confirmed (maybe_distorted)."""
        reps = min(len(self.cpu_values), self.cap_dedicated_reps)
        return "one repetition cannot tell it from noise" if reps < 2 else "the min–max ranges overlap"

    @property
    def client_bound(self) -> int:
        return self.series.client_bound if self.series else 0

    @property
    def samples(self) -> int:
        return len(self.series.samples) if self.series else 0


@dataclass
class ModeView:
    mode: Mode
    rows: list[Row]  # ranked rows, then the floor, then rows without figures
    reference_problem: str | None  # why no ratios are shown in this mode
    ranks_on: str = ""  # what this mode ranks and compares on, in one sentence
    figure: str = "Requests per second"  # what it ranks on, in a heading's words (ranked_figure)


@dataclass
class Failed:
    """The failed samples of one entry in one mode (run.failures), in repetition order."""

    entry: str
    mode: str
    failures: list[Failure]
    measured: int  # samples of the same entry and mode that were measured

    @property
    def reasons(self) -> list[str]:
        """The distinct reasons, first seen first."""
        return list(dict.fromkeys(f.reason for f in self.failures))

    def words(self) -> str:
        total = len(self.failures) + self.measured
        return f"{len(self.failures)} of {plural(total, 'sample')} of {self.entry} in mode {self.mode} failed: " + (
            "; ".join(self.reasons)
        )


@dataclass
class View:
    run: Run
    reference: str
    groups: dict[tuple[str, str], Series]
    modes: list[ModeView] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # caveats.caveats(), set by report.build
    failed: list[Failed] = field(default_factory=list)  # per entry and mode, in the run's order

    def series_of(self, entry: str) -> list[Series]:
        """Every series of one entry, in the run's mode order."""
        return [s for m in self.run.config.modes if (s := self.groups.get((entry, m)))]


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def fmt_ratio(r: Ratio) -> str:
    return f"{r.median_ratio:.2f}× ({r.lo:.2f}–{r.hi:.2f})"


def fmt_paired(r: PairedRatio) -> str:
    """1.71 [1.62–1.80]; a single pair: 1.71 [1 pair]; an interval wider than ±3%: its
    half-width and pairs said (the bench's bound on pairs or on time was reached)."""
    if r.lo is None or r.hi is None:
        return f"{r.median_ratio:.2f} [1 pair]"
    wide = "" if r.steady else f" ±{r.half_width:.0%} after {r.pairs} pairs"
    return f"{r.median_ratio:.2f} [{r.lo:.2f}–{r.hi:.2f}]{wide}"


def own_cpu_us(series: Series) -> list[float]:
    """Sample.own_cpu_us of each sample that has one, in repetition order."""
    return [v for v in (s.own_cpu_us for s in series.samples) if v is not None]


def on_cpu(run: Run, mode: Mode) -> bool:
    """The mode ranks on the server's CPU per request: a capped mode, or one whose every sample
    read the server's cgroup (a run that put the server in an uncapped cgroup there)."""
    samples = [s for s in run.samples if s.mode == mode.name]
    return mode.capped or (bool(samples) and all(s.cgroup_cpu_s is not None for s in samples))


def figure(cpu: bool):
    """A sample's figure the mode ranks on: own_cpu_us (cpu) or requests/s."""
    return (lambda s: s.own_cpu_us) if cpu else (lambda s: s.rps)


def compared(mode: Mode, series: Series, cpu: bool | None = None) -> list[float]:
    """The figure a mode ranks and compares on (the module's docstring), per repetition: the
    server's CPU µs per request (fewer is better) where cpu (default: a capped mode), else requests/s."""
    return own_cpu_us(series) if (mode.capped if cpu is None else cpu) else series["rps"]


def better(run: Run, mode: Mode, entry: str, other: str, cpu: bool) -> PairedRatio | None:
    """entry against other on the mode's figure, pair by pair, above 1 when entry is better:
    requests/s entry ÷ other, CPU per request other ÷ entry; None without a pair of the two."""
    mine, theirs = figures(pairs_of(run, mode.name, entry, other), figure(cpu))
    if not mine:
        return None
    return paired_ratio(theirs, mine) if cpu else paired_ratio(mine, theirs)


def ranks_on(run: Run, mode: Mode) -> str:
    """What mode ranks and compares on, in one sentence (the report prints it under its heading)."""
    if run.config.cap_problem is not None:
        return (
            "Ranked by requests per server CPU-second (no CPU cap could be made here); the ratios compare requests/s."
        )
    if not on_cpu(run, mode):
        return (
            "Ranked by requests/s, wrk's count (a client-bound row measured wrk; the capped modes rank the "
            "server's own CPU per request); the ratios compare requests/s pair by pair, above 1 better."
        )
    samples = [s for s in run.samples if s.mode == mode.name]
    if not mode.capped:
        return (
            "Ranked by the server's own CPU µs per request on its dedicated core, from its cgroup's counter "
            "(uncapped), fewer first, requests/s beside it (a client-bound row: wrk was the limit, and the "
            "server, woken for fewer requests at a time, pays more per request); the ratios divide the "
            "reference's and the floor's CPU per request by the entry's, pair by pair, so above 1 is cheaper."
        )
    from_cgroup = sum(s.cgroup_cpu_s is not None for s in samples)
    source = (
        "its cgroup's counter"
        if from_cgroup == len(samples)
        else "/proc's ticks (this run did not read the cgroup's counter)"
        if not from_cgroup
        else "its cgroup's counter where recorded, else /proc's ticks"
    )
    return (
        f"Ranked by the server's own CPU µs per request under the cap, from {source}, fewer first (the "
        "requests one CPU-second buys), not by wrk's requests/s; the ratios divide the reference's and the "
        "floor's CPU per request by the entry's, pair by pair, so above 1 is cheaper."
    )


def ranked_figure(run: Run, mode: Mode) -> str:
    """What mode ranks on, as a heading names it (ranks_on's sentence, in three words)."""
    if run.config.cap_problem is not None:
        return "Requests per server CPU-second"
    return "Server CPU µs per request" if on_cpu(run, mode) else "Requests per second"


def reference_problem(run: Run, groups: dict, mode: Mode, reference: str) -> str | None:
    """Plain words saying why ratios to `reference` cannot be shown in `mode`; None if they can."""
    entry = run.entry(reference)
    if entry is None:
        return f"the reference {reference} is absent from this run: no ratios are shown"
    if not entry.available:
        return f"the reference {reference} is unavailable ({entry.reason}): no ratios are shown"
    series = groups.get((reference, mode.name))
    if series is None:
        return f"the reference {reference} has no samples in mode {mode.name}: no ratios are shown for it"
    if min(series["rps"]) <= 0:
        return (
            f"the reference {reference} answered 0 requests/s in a repetition of mode {mode.name}: "
            "no ratios are shown for it"
        )
    if not compared(mode, series, on_cpu(run, mode)):
        return f"the reference {reference} has no CPU figure in mode {mode.name}: no ratios are shown for it"
    return None


def _rank_basis(row: Row, view: View, mode: Mode) -> None:
    """Sets row.rank_value and row.basis (see the module's docstring)."""
    config = view.run.config
    bound = f", client-bound in {row.client_bound} of {row.samples} (wrk's limit)" if row.client_bound else ""
    efficiency = row.median("efficiency")
    if config.cap_problem is not None:
        row.rank_value, row.basis = efficiency, "efficiency (no CPU cap here)"
        return
    if not on_cpu(view.run, mode):
        row.rank_value, row.basis = row.median("rps"), "requests/s" + bound
        return
    if not mode.capped:
        cpu = row.cpu_values
        row.rank_value = 1e6 / median(cpu) if cpu and min(cpu) > 0 else None
        row.basis = "CPU per request (cgroup, uncapped)" + bound if row.rank_value else "not ranked: no CPU figure"
        return
    capped = row.cpu_values
    if not capped or min(capped) <= 0:
        row.rank_value, row.basis = None, "not ranked: no CPU figure under the cap"
        return
    row.rank_value = 1e6 / median(capped)
    source = "cgroup" if all(s.cgroup_cpu_s is not None for s in row.series.samples) else "/proc"
    figure = f"capped CPU per request ({source})"
    dedicated = view.groups.get((row.entry.name, mode.dedicated))
    dedicated_cpu = own_cpu_us(dedicated) if dedicated else []
    if not dedicated_cpu or min(dedicated_cpu) <= 0:
        row.basis = figure + " (no dedicated-core figure to compare)" + bound
        return
    row.cap_cost = ratio(capped, dedicated_cpu)
    row.dedicated_mode = mode.dedicated
    row.cap_dedicated_reps = len(dedicated_cpu)
    if row.distorted:
        row.rank_value = 1e6 / median(dedicated_cpu)
        row.basis = (
            "dedicated-core CPU per request: the cap distorts this entry "
            f"(capped CPU per request {row.cap_cost.median_ratio:.2f}× its dedicated-core figure)"
        )
    elif row.maybe_distorted:
        row.basis = (
            f"{figure}{bound}; the cap may distort this entry (CPU per request "
            f"{row.cap_cost.median_ratio:.2f}× its dedicated-core figure, not confirmed: {row.unconfirmed_words()})"
        )
    else:
        row.basis = figure + bound


def ranked_cpu(view: View, row: Row | None) -> tuple[Summary | None, bool]:
    """(the CPU µs per request a capped mode's row is ranked on, whether it is the whole core's):
    its capped figure, or for a row the cap distorts its dedicated core's (_rank_basis)."""
    if row is None:
        return None, False
    dedicated = view.groups.get((row.entry.name, row.dedicated_mode)) if row.distorted else None
    whole = own_cpu_us(dedicated) if dedicated else []
    return (summarize(whole), True) if whole else (row.cpu, False)


def counted(entry: EntryRecord | None, mode: Mode) -> InstructionCount | None:
    """The entry's instruction count for mode's load (a capped mode: its dedicated one's)."""
    name = mode.dedicated or mode.name
    return next((c for c in entry.instructions if c.mode == name), None) if entry else None


def mode_view(view: View, mode: Mode) -> ModeView:
    run, reference = view.run, view.reference
    problem = reference_problem(run, view.groups, mode, reference)
    ref_series = None if problem else view.groups[(reference, mode.name)]
    cpu = on_cpu(run, mode)
    rows = []
    for entry in run.entries:
        series = view.groups.get((entry.name, mode.name))
        floor = run.floor_of(entry)  # each entry's own: the floor of its mechanism
        floor_series = view.groups.get((floor.name, mode.name)) if floor else None
        floor_count = counted(floor, mode)
        row = Row(entry, series, instructions=counted(entry, mode), floor=floor)
        if row.instructions and floor_count and floor_count.per_request > 0:
            row.instructions_of_floor = row.instructions.per_request / floor_count.per_request
        if not entry.available:
            row.reason = "unavailable: " + (entry.reason or "no reason given")
        elif series is None:
            failed = next((f for f in view.failed if f.entry == entry.name and f.mode == mode.name), None)
            row.reason = f"every sample failed: {failed.reasons[0]}" if failed else "no samples in this mode"
        else:
            row.cpu_values = own_cpu_us(series)
            if ref_series is not None:
                row.is_reference = series is ref_series
                row.ratio = better(run, mode, entry.name, reference, cpu)  # the reference's own: 1 [1.00–1.00]
            if floor_series is not None and min(floor_series["rps"]) > 0 and floor is not entry:
                row.of_floor = better(run, mode, entry.name, floor.name, cpu)
            _rank_basis(row, view, mode)
            if entry.is_floor:
                row.basis = "not ranked: the floor"
        rows.append(row)
    ranked = sorted(
        (r for r in rows if r.reason is None and not r.entry.is_floor and r.rank_value is not None),
        key=lambda r: (-r.rank_value, r.entry.name),
    )
    for rank, row in enumerate(ranked, start=1):
        row.rank = rank
    rest = [r for r in rows if r.rank is None]
    ordered = ranked + sorted(rest, key=lambda r: r.reason is not None)
    return ModeView(mode, ordered, problem, ranks_on(run, mode), ranked_figure(run, mode))


def rank(run: Run, reference: str | None = None) -> View:
    """The view of run, with ratios to `reference` (default: the run's own), without its warnings
    (report.build adds them: caveats.py)."""
    view = View(run, reference or run.config.reference, group_samples(run.samples))
    view.failed = failed_groups(run)
    view.modes = [mode_view(view, m) for m in run.modes]
    return view


def failed_groups(run: Run) -> list[Failed]:
    """run.failures grouped by entry and mode, in the order of the run's entries and modes."""
    out = []
    for entry in run.entries:
        for mode_name in run.config.modes:
            mine = sorted(
                (f for f in run.failures if f.entry == entry.name and f.mode == mode_name), key=lambda f: f.rep
            )
            if mine:
                measured = sum(1 for s in run.samples if s.entry == entry.name and s.mode == mode_name)
                out.append(Failed(entry.name, mode_name, mine, measured))
    return out


def startup(entry: EntryRecord) -> Summary | None:
    return summarize(entry.startup_ms) if entry.startup_ms else None
