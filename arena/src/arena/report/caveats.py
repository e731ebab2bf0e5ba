"""The warnings of a view: everything a reader must know before trusting its figures, in plain
words. What the ranked rows (view.py) leave unsaid: the run's state, the floors, a conforming
entry better than its own floor (a fault of the measurement, judged in requests/s and in CPU per
request in every mode), wrk as the bottleneck, the cap's distortion, errors, noise, and the
machine (steal, a cgroup's counter that disagrees with /proc's). report.build sets
View.warnings to caveats(view).
"""

from __future__ import annotations

from ..analysis.stats import Series, ratio
from ..core.modes import CAP_DISTORTION, STEAL_LIMIT
from .view import FLOOR_WORDS, ModeView, Row, View, fmt_paired, fmt_ratio, own_cpu_us, plural


def series_caveats(view: View, mv: ModeView, row: Row) -> list[str]:
    series, reference = row.series, view.reference
    name, mode, reps = row.entry.name, mv.mode.name, row.samples
    out = []
    if row.client_bound:
        out.append(
            f"the load generator was the bottleneck for {name} in mode {mode} "
            f"({row.client_bound} of {reps} repetitions): these figures measure wrk, not the server; its CPU "
            "per request is the server's own but taken at wrk's pace (a server that answers sooner is woken for "
            "fewer requests at a time and pays more per request), so the capped modes rank it"
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
            "request; ranked by its dedicated-core CPU per request instead of its capped one"
        )
    if row.maybe_distorted and not row.entry.is_floor:
        out.append(
            f"the cap may distort {name} in mode {mode}: {fmt_ratio(row.cap_cost)} its dedicated-core CPU per "
            f"request, more than {CAP_DISTORTION - 1:.0%} in the median, but {row.unconfirmed_words()}; "
            "ranked by its capped CPU per request (repetitions whose ranges separate would confirm it)"
        )
    out += floor_faults(view, mv, row)
    out += machine_caveats(name, mode, series)
    if row.ratio is not None and not row.is_reference and not row.ratio.significant:
        why = "its 95% interval holds 1" if row.ratio.pairs >= 2 else "one pair has no interval"
        out.append(f"{name} vs {reference} in mode {mode}: {fmt_paired(row.ratio)} is not significant ({why})")
    return out


FAULT = "so this is a fault of the measurement (the machine, the load generator, or the floor), not a result"


def floor_faults(view: View, mv: ModeView, row: Row) -> list[str]:
    """A conforming entry better than its own floor beyond the repetitions' noise, in either figure
    of the mode's table (requests/s, CPU per request), said as the measurement's fault."""
    floor, name, mode = row.floor, row.entry.name, mv.mode.name
    floor_series = view.groups.get((floor.name, mode)) if floor and not row.entry.is_floor else None
    if floor_series is None or min(floor_series["rps"]) <= 0:
        return []
    out = []
    above = ratio(row.series["rps"], floor_series["rps"])
    if above.median_ratio > 1 and above.significant:
        out.append(
            f"{name} measured above its floor ({floor.name}) in mode {mode}, beyond the repetitions' noise "
            f"({fmt_ratio(above)}): a server that parses and answers cannot outrun one that only answers, {FAULT}"
        )
    floor_cpu, mine = own_cpu_us(floor_series), row.cpu_values
    cheaper = ratio(floor_cpu, mine) if floor_cpu and mine and min(mine) > 0 else None
    if cheaper is not None and cheaper.median_ratio > 1 and cheaper.significant:
        bound = [n for n, s in ((name, row.series), (floor.name, floor_series)) if s.client_bound]
        pace = (
            f"; wrk was the bottleneck for {' and '.join(bound)} here, and a server that answers sooner is woken "
            "for fewer requests at a time, so CPU per request at wrk's pace measures batching as much as cost"
            if bound
            else ""
        )
        out.append(
            f"{name} measured below its floor's ({floor.name}) CPU per request in mode {mode}, beyond the "
            f"repetitions' noise (the floor's ÷ its own: {fmt_ratio(cheaper)}): a server that parses and answers "
            f"cannot cost less than one that only answers, {FAULT}{pace}"
        )
    return out


CGROUP_AGREES_S = 0.03  # /proc's ticks of 10 ms: its figure may be off by a tick at each end, plus one of rounding


def machine_caveats(name: str, mode: str, series: Series) -> list[str]:
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


def caveats(view: View) -> list[str]:
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
                out += series_caveats(view, mv, row)
    for entry in run.entries:
        if entry.verify and entry.verify.failed:
            out.append(f"{entry.name} failed {plural(entry.verify.failed, 'conformance case')}")
    return out
