"""The view of a run that every output renders: groups, ranked rows per mode, warnings.

Built once from a Run (already validated: every sample names a listed entry and a
configured mode). Every figure is the median with the min–max of the repetitions; a
comparison is a ratio of medians with the range of the extreme pairings, "not
significant" when the two samples' ranges overlap.

What a rank rests on (issue 8, "rank servers, not wrk"):
- a dedicated-core mode: requests/s; a client-bound row says so (it measured wrk);
- a capped mode: the capped requests/s, unless the cap distorts the entry (its CPU per
  request rises by more than CAP_DISTORTION over its dedicated-core figure, and the two
  min–max ranges do not overlap, so that noise alone never flags it): then its
  dedicated-core efficiency times the quota, the rate it would reach with that much CPU.
  A median rise beyond CAP_DISTORTION that the repetitions cannot tell from noise (the
  ranges overlap, or a side has one repetition, as in --quick) is not hidden: the row
  keeps its capped requests/s, its basis and a warning say the cap may distort it;
- a run where no cgroup could be made: efficiency (requests per server CPU-second), in
  every mode.

Longer than the arena's 350 lines on purpose: the ranking rules above are one decision,
read together; split, a reader would have to follow the basis of a rank across files.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import CAP_DISTORTION, STEAL_LIMIT, EntryRecord, Failure, InstructionCount, Mode, Run
from ..stats import Ratio, Series, Summary, group_samples, median, ratio, summarize

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
    ratio: Ratio | None = None  # requests/s to the reference's; None: no usable reference
    is_reference: bool = False
    of_floor: float | None = None  # requests/s median ÷ the floor's, same mode
    basis: str = ""  # what the rank rests on, in words
    rank_value: float | None = None  # the figure ranked by (requests/s or requests per CPU-second)
    cap_cost: Ratio | None = None  # capped CPU per request ÷ dedicated-core CPU per request
    cap_dedicated_reps: int = 0  # repetitions of the dedicated-core figure cap_cost divides by
    instructions: InstructionCount | None = None  # callgrind's count for this mode's load (native entries)
    instructions_of_floor: float | None = None  # ÷ the floor's count in the same mode
    floor: EntryRecord | None = None  # the floor of_floor divides by: the entry's own (Run.floor_of)

    def summary(self, metric: str) -> Summary | None:
        return self.series.summary(metric) if self.series else None

    def median(self, metric: str) -> float | None:
        s = self.summary(metric)
        return s.median if s else None

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
        reps = min(len(self.series["cpu_us_per_req"]), self.cap_dedicated_reps)
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
    warnings: list[str] = field(default_factory=list)
    failed: list[Failed] = field(default_factory=list)  # per entry and mode, in the run's order

    def series_of(self, entry: str) -> list[Series]:
        """Every series of one entry, in the run's mode order."""
        return [s for m in self.run.config.modes if (s := self.groups.get((entry, m)))]


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def fmt_ratio(r: Ratio) -> str:
    return f"{r.median_ratio:.2f}× ({r.lo:.2f}–{r.hi:.2f})"


def reference_problem(run: Run, groups: dict, mode: str, reference: str) -> str | None:
    """Plain words saying why ratios to `reference` cannot be shown in `mode`; None if they can."""
    entry = run.entry(reference)
    if entry is None:
        return f"the reference {reference} is absent from this run: no ratios are shown"
    if not entry.available:
        return f"the reference {reference} is unavailable ({entry.reason}): no ratios are shown"
    series = groups.get((reference, mode))
    if series is None:
        return f"the reference {reference} has no samples in mode {mode}: no ratios are shown for it"
    if min(series["rps"]) <= 0:
        return (
            f"the reference {reference} answered 0 requests/s in a repetition of mode {mode}: "
            "no ratios are shown for it"
        )
    return None


def _rank_basis(row: Row, view: View, mode: Mode) -> None:
    """Sets row.rank_value and row.basis (see the module's docstring)."""
    config = view.run.config
    bound = f", client-bound in {row.client_bound} of {row.samples} (wrk's limit)" if row.client_bound else ""
    efficiency = row.median("efficiency")
    if config.cap_problem is not None:
        row.rank_value, row.basis = efficiency, "efficiency (no CPU cap here)"
        return
    if not mode.capped:
        row.rank_value, row.basis = row.median("rps"), "requests/s" + bound
        return
    dedicated = view.groups.get((row.entry.name, mode.dedicated))
    dedicated_cpu = dedicated["cpu_us_per_req"] if dedicated else []
    if not dedicated_cpu or min(dedicated_cpu) <= 0 or not row.series["cpu_us_per_req"]:
        row.rank_value, row.basis = row.median("rps"), "capped requests/s (no dedicated-core figure to compare)" + bound
        return
    row.cap_cost = ratio(row.series["cpu_us_per_req"], dedicated_cpu)
    row.cap_dedicated_reps = len(dedicated_cpu)
    if row.distorted:
        row.rank_value = config.cpu_quota * 1e6 / median(dedicated_cpu)
        row.basis = (
            f"efficiency × {config.cpu_quota:g} core: the cap distorts this entry "
            f"(CPU per request {row.cap_cost.median_ratio:.2f}× its dedicated-core figure)"
        )
    elif row.maybe_distorted:
        row.rank_value = row.median("rps")
        row.basis = (
            f"capped requests/s{bound}; the cap may distort this entry (CPU per request "
            f"{row.cap_cost.median_ratio:.2f}× its dedicated-core figure, not confirmed: {row.unconfirmed_words()})"
        )
    else:
        row.rank_value, row.basis = row.median("rps"), "capped requests/s" + bound


def counted(entry: EntryRecord | None, mode: Mode) -> InstructionCount | None:
    """The entry's instruction count for mode's load (a capped mode: its dedicated one's)."""
    name = mode.dedicated or mode.name
    return next((c for c in entry.instructions if c.mode == name), None) if entry else None


def mode_view(view: View, mode: Mode) -> ModeView:
    run, reference = view.run, view.reference
    problem = reference_problem(run, view.groups, mode.name, reference)
    ref_series = None if problem else view.groups[(reference, mode.name)]
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
            if ref_series is not None:
                row.ratio = ratio(series["rps"], ref_series["rps"])
                row.is_reference = series is ref_series
            if floor_series is not None and min(floor_series["rps"]) > 0:
                row.of_floor = row.median("rps") / floor_series.summary("rps").median
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
    return ModeView(mode, ranked + sorted(rest, key=lambda r: r.reason is not None), problem)


def _series_warnings(view: View, mv: ModeView, row: Row) -> list[str]:
    series, reference = row.series, view.reference
    name, mode, reps = row.entry.name, mv.mode.name, row.samples
    out = []
    if row.client_bound:
        out.append(
            f"the load generator was the bottleneck for {name} in mode {mode} "
            f"({row.client_bound} of {reps} repetitions): these figures measure wrk, not the server; "
            "its efficiency (requests per CPU-second) and the capped modes measure the server"
        )
    if series.error_total:
        kinds = ", ".join(f"{k} {n}" for k, n in series.errors.items() if n)
        out.append(
            f"{name} in mode {mode} had {plural(series.error_total, 'socket error')} "
            f"({kinds}) over {plural(reps, 'repetition')}"
        )
    if series.non_3xx:
        out.append(
            f"{name} in mode {mode} gave {plural(series.non_3xx, 'answer')} that "
            f"{'was' if series.non_3xx == 1 else 'were'} not 3xx over {plural(reps, 'repetition')}"
        )
    for metric, count in series.missing.items():
        explained = (not mv.mode.timed and metric.startswith("latency_")) or metric == "efficiency"
        if count and not explained:
            out.append(f"{name} in mode {mode}: {metric} is missing from {count} of {reps} samples")
    if row.distorted and not row.entry.is_floor:
        out.append(
            f"the cap distorts {name} in mode {mode}: {fmt_ratio(row.cap_cost)} its dedicated-core CPU per "
            "request; ranked by its efficiency instead of its capped requests/s"
        )
    if row.maybe_distorted and not row.entry.is_floor:
        out.append(
            f"the cap may distort {name} in mode {mode}: {fmt_ratio(row.cap_cost)} its dedicated-core CPU per "
            f"request, more than {CAP_DISTORTION - 1:.0%} in the median, but {row.unconfirmed_words()}; "
            "ranked by its capped requests/s (repetitions whose ranges separate would confirm it)"
        )
    floor = row.floor
    floor_series = view.groups.get((floor.name, mode)) if floor and not row.entry.is_floor else None
    if floor_series is not None and min(floor_series["rps"]) > 0:
        above = ratio(series["rps"], floor_series["rps"])
        if above.median_ratio > 1 and above.significant:
            out.append(
                f"{name} measured above its floor ({floor.name}) in mode {mode}, beyond the repetitions' noise "
                f"({fmt_ratio(above)}): a server that parses and answers cannot outrun one that only answers, "
                "so this is a fault of the measurement (the machine, the load generator, or the floor), not a result"
            )
    out += _machine_warnings(name, mode, series)
    if row.ratio is not None and not row.is_reference and not row.ratio.significant:
        ref = view.groups[(reference, mode)]
        why = (
            "the min–max ranges overlap"
            if len(series["rps"]) >= 2 and len(ref["rps"]) >= 2
            else "fewer than 2 repetitions"
        )
        out.append(f"{name} vs {reference} in mode {mode}: {fmt_ratio(row.ratio)} is not significant ({why})")
    return out


CGROUP_AGREES_S = 0.03  # /proc's ticks of 10 ms: its figure may be off by a tick at each end, plus one of rounding


def _machine_warnings(name: str, mode: str, series: Series) -> list[str]:
    """Samples the machine spoiled, said and never dropped: taken under steal (after their one
    repeat), repeated for steal, and a cgroup's CPU counter that disagrees with /proc's."""
    out = []
    stolen = [s for s in series.samples if s.under_steal]
    if stolen:
        which = ", ".join(f"{s.rep + 1} ({s.steal_share:.1%})" for s in stolen)
        out.append(
            f"{name} in mode {mode}: {plural(len(stolen), 'repetition')} taken under steal, {which} of the "
            f"server's and wrk's CPU time stolen by the hypervisor (above {STEAL_LIMIT:.0%}), repeated once "
            "and stolen again: kept, but their figures include a neighbour's share of the machine"
        )
    repeated = [s for s in series.samples if s.steal_retry is not None and not s.under_steal]
    if repeated:
        which = ", ".join(f"{s.rep + 1} (first {s.steal_retry:.1%})" for s in repeated)
        out.append(f"{name} in mode {mode}: repeated for steal, the first attempt discarded: repetition {which}")
    for s in series.samples:
        bound = None if s.cgroup_cpu_s is None else CGROUP_AGREES_S + 0.05 * s.cgroup_cpu_s
        if bound is not None and abs(s.cgroup_cpu_s - s.server_cpu_s) > bound:
            out.append(
                f"{name} in mode {mode}, repetition {s.rep + 1}: the server's cgroup counted {s.cgroup_cpu_s:.3f} s "
                f"of CPU where /proc counted {s.server_cpu_s:.2f} s: a process outside its tree, or one that left it"
            )
    return out


def _warnings(view: View) -> list[str]:
    """Everything a reader must know before trusting the figures, in plain words."""
    run = view.run
    out = []
    if run.unfinished:
        out.append(f"this run did not finish ({run.unfinished}): the figures are those of the samples measured before")
    out += [f.words() for f in view.failed]
    if run.config.quick:
        out.append("this was a quick run: durations and repetitions are too short to compare entries")
    if run.config.cap_problem:
        out.append(
            f"no CPU cap could be made here ({run.config.cap_problem}): the capped modes were left out "
            "and every ranking rests on efficiency (requests per server CPU-second)"
        )
    floors = [e for e in run.entries if e.is_floor and e.available]
    if floors:
        names = " and ".join(e.name for e in floors)
        verb = "is the floor" if len(floors) == 1 else "are the floors, one per mechanism"
        out.append(f"{names} {verb}: it {FLOOR_WORDS}" if len(floors) == 1 else f"{names} {verb}: each {FLOOR_WORDS}")
    for e in run.entries:
        if not e.is_floor and e.available and e.floor and run.floor_of(e) is None:
            out.append(
                f"{e.name} is divided by its own floor, {e.floor}, which this run did not measure: "
                "it has no ratio to a floor here (bench it beside that floor)"
            )
    for e in run.entries:
        if e.url is not None:
            out.append(f"{e.name} is a running server at {e.url}, measured as it was: {'; '.join(e.unknown)}")
    out += list(dict.fromkeys(mv.reference_problem for mv in view.modes if mv.reference_problem))
    for mv in view.modes:
        if mv.mode.latency_note and any(r.series for r in mv.rows):
            out.append(f"mode {mv.mode.name}: {mv.mode.latency_note}")
    for mv in view.modes:
        for row in mv.rows:
            if row.series is not None:
                out += _series_warnings(view, mv, row)
    for entry in run.entries:
        if entry.verify and entry.verify.failed:
            out.append(f"{entry.name} failed {plural(entry.verify.failed, 'conformance case')}")
    return out


def build(run: Run, reference: str | None = None) -> View:
    """The view of run, with ratios to `reference` (default: the run's own)."""
    view = View(run, reference or run.config.reference, group_samples(run.samples))
    view.failed = failed_groups(run)
    view.modes = [mode_view(view, m) for m in run.modes]
    view.warnings = _warnings(view)
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
