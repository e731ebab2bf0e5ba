"""The history of benches, and the changes in it (docs/arena/curves.md, "Latency, saturation, history").

Each `arena bench` appends one line to results/history.jsonl: when, the commit it measured
(and whether the tree had uncommitted changes), and per entry and mode the median requests/s
and CPU µs per request and the instruction counts of native entries (absolute: they belong
to the machine), and each of them divided by the same figure of the entry's floor measured
in the same run (`*_of_floor`: the arena's machine-independent figure, which a change of CI
runner leaves alone). `arena history` reads the series of one figure per (entry, mode), the
ratios by default, and finds where its level changed with E-Divisive means (MongoDB's
signal-processing-algorithms, the detector their CI performance tracking uses): a
permutation test on energy statistics, so no threshold is tuned by hand; instruction counts,
deterministic, change where one differs from the one before by more than 1% (count_steps, the
gate's rule); a timed replay's ratios (`*_rounds` beside them, workflows/backfill.py) by
E-Divisive over their rounds (round_cuts). Each change names
the commits between which it happened and its size as a ratio of the two levels' medians
with a bootstrap 95% interval (compare.decide). new_changes: those the latest run makes
appear (E-Divisive shows a new level from its second run on).

A server the arena did not build (`arena bench --cmd`, `--url`) is in the history only when its
version is named (Service): its series is named after what was measured ("cmd COMMAND",
"url URL": a space, which no entry's name holds, so never an entry's series), and its points
carry its own commit (the line's `services`), not the repository's.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path

from ..core import results
from ..core.model import Run
from ..core.modes import TIERS
from .compare import COUNT_CHANGE, decide, paired_ratio
from .stats import group_samples, median

FILE = "history.jsonl"
METRICS = {  # name -> (words, higher is better)
    "rps": ("requests/s", True),
    "cpu_us_per_req": ("CPU µs per request", False),
    "instructions": ("instructions per request", False),
    "rps_of_floor": ("requests/s ÷ the floor's", True),
    "cpu_of_floor": ("CPU per request ÷ the floor's", False),
    "instructions_of_floor": ("instructions per request ÷ the floor's", False),
}
OF_FLOOR = {"rps": "rps_of_floor", "cpu_us_per_req": "cpu_of_floor", "instructions": "instructions_of_floor"}
ABSOLUTE = {ratio: absolute for absolute, ratio in OF_FLOOR.items()}  # a ratio's absolute figure
ROUNDS = "_rounds"  # a timed replay's ratio keeps its rounds' ratios beside it: `cpu_of_floor_rounds`
PVALUE = 0.01  # of E-Divisive's permutation test
PERMUTATIONS = 1000


def commit_of(repo: Path) -> tuple[str | None, bool]:
    """(the checked-out commit, whether the tree has uncommitted changes); None outside git."""
    try:
        head = subprocess.run(["git", "-C", str(repo), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
        status = subprocess.run(
            ["git", "-C", str(repo), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None, False
    if head.returncode != 0:
        return None, False
    return head.stdout.strip(), bool(status.stdout.strip())


@dataclass(frozen=True)
class Service:
    """A server the arena did not build, in the history: how it was given (flag: "cmd" or
    "url"), what was measured (the command line or the URL) and its version (commit: as
    named, or its checkout's HEAD; dirty: that checkout had uncommitted changes)."""

    flag: str
    measured: str
    commit: str
    dirty: bool = False

    @property
    def series(self) -> str:
        """Its name in the history: never an entry's (an entry's name has no space)."""
        return f"{self.flag} {self.measured}"

    def stamp(self) -> dict:
        return {"commit": self.commit, "dirty": self.dirty, "measured": f"--{self.flag} {self.measured}"}


def summary(run: Run, commit: str | None, dirty: bool, services: dict[str, Service] | None = None, left_out=()) -> dict:
    """The history line of one run: each figure, its ratio to the floor, and for a timed ratio
    the bootstrap 95% interval of the repetitions' paired ratios (`*_of_floor_lo`, `_hi`: the
    entry and its floor measured in the same repetition, interleaved) when there are two or more.
    services: the run's entries the arena did not build, by name, each written as its own series
    with its own version; left_out: entries of the run not written (their ratios are still taken
    to the floor measured beside them)."""
    figures: dict[str, dict] = {}
    grouped = group_samples(run.samples)
    for (entry, mode_name), series in grouped.items():
        mine = figures.setdefault(entry, {})
        mine[mode_name] = {m: median(series[m]) for m in ("rps", "cpu_us_per_req") if series[m]}
    for e in run.entries:
        for c in e.instructions:
            figures.setdefault(e.name, {}).setdefault(c.mode, {})["instructions"] = c.per_request
    for e in run.entries:
        floor = run.floor_of(e)
        if floor is None or floor is e or e.name not in figures:
            continue
        for mode_name, mine in figures[e.name].items():
            theirs = figures.get(floor.name, {}).get(mode_name, {})
            for absolute, ratio in OF_FLOOR.items():
                if mine.get(absolute) and theirs.get(absolute):
                    mine[ratio] = mine[absolute] / theirs[absolute]
            pair = grouped.get((e.name, mode_name)), grouped.get((floor.name, mode_name))
            if all(pair):
                mine |= _rep_intervals(*pair)
    services = services or {}
    tiers = {e.name: e.tier_name for e in run.entries}
    for name in [*left_out, *services]:
        tier, measured = tiers.pop(name, "peer"), figures.pop(name, None)
        if name in services and measured is not None:
            figures[services[name].series], tiers[services[name].series] = measured, tier
    line = {
        "run_id": run.run_id,
        "finished": run.finished,
        "commit": commit,
        "dirty": dirty,
        "quick": run.config.quick,
        "tiers": tiers,
        "entries": figures,
    }
    if services:
        line["services"] = {s.series: s.stamp() for s in services.values()}
    return line


def commit_of_series(line: dict, entry: str) -> str | None:
    """The commit a line's figures of entry belong to: a service's own (Service), else the line's."""
    services = line.get("services", {})
    return services[entry].get("commit") if entry in services else line.get("commit")


def _rep_intervals(mine, floors) -> dict[str, float]:
    """`<ratio>_lo` and `_hi` for each timed ratio: the interval of the median of the
    repetitions' ratios (compare.paired_ratio), the entry's and its floor's sample of one
    repetition paired; none with fewer than two repetitions measured by both."""
    out = {}
    for absolute in ("rps", "cpu_us_per_req"):
        by_rep = [
            {s.rep: getattr(s, absolute) for s in side.samples if getattr(s, absolute)} for side in (mine, floors)
        ]
        reps = sorted(set(by_rep[0]) & set(by_rep[1]))
        if len(reps) >= 2:
            ratio = paired_ratio([by_rep[0][r] for r in reps], [by_rep[1][r] for r in reps])
            out[f"{OF_FLOOR[absolute]}_lo"], out[f"{OF_FLOOR[absolute]}_hi"] = ratio.lo, ratio.hi
    return out


def backfill_line(
    commit: str, date: str, counts: dict[str, dict[str, float]], floor: str, tiers: dict[str, str]
) -> dict:
    """The history line of one replayed commit (workflows/backfill.py): counts maps each entry,
    its floor among them, to its instructions per request by mode; each other entry's count is
    also divided by the floor's of the same commit and mode; tiers: each entry's."""
    entries: dict[str, dict] = {}
    for name, modes in counts.items():
        for mode_name, value in modes.items():
            figures = entries.setdefault(name, {}).setdefault(mode_name, {"instructions": value})
            theirs = counts.get(floor, {}).get(mode_name)
            if name != floor and theirs:
                figures["instructions_of_floor"] = value / theirs
    return {
        "run_id": f"backfill-{commit[:12]}",
        "finished": date,
        "commit": commit,
        "dirty": False,
        "quick": False,
        "backfill": True,
        "tiers": {name: tiers[name] for name in counts},
        "entries": entries,
    }


def timed_backfill_line(
    commit: str,
    date: str,
    mode_name: str,
    cpu: dict[str, list[float]],
    rps: dict[str, list[float]],
    floor: str,
    tiers: dict[str, str],
    method: dict,
) -> dict:
    """The history line of one commit replayed by time (workflows/backfill.py, --timed): cpu and
    rps map each entry, its floor among them, to its samples' server CPU µs per request and
    requests/s in mode_name, sample i of every entry taken in the same round (entry, floor,
    entry, floor …). Each entry's figures are the medians of its samples, which are kept
    (`cpu_us_samples`); each other entry's `cpu_of_floor` is the median of its rounds' ratios
    to the floor's sample of the same round (kept: `cpu_of_floor_rounds`, which changes() reads),
    `_lo`–`_hi` that median's bootstrap 95% interval (compare.paired_ratio); method: how it was
    measured (pairs, seconds, quota), as said."""
    entries: dict[str, dict] = {}
    for name, costs in cpu.items():
        figures = {"cpu_us_per_req": median(costs), "rps": median(rps[name]), "cpu_us_samples": list(costs)}
        if name != floor and cpu.get(floor):
            ratio = paired_ratio(costs, cpu[floor])
            figures["cpu_of_floor"] = ratio.median_ratio
            figures["cpu_of_floor" + ROUNDS] = [c / f for c, f in zip(costs, cpu[floor], strict=True)]
            if ratio.lo is not None:
                figures["cpu_of_floor_lo"], figures["cpu_of_floor_hi"] = ratio.lo, ratio.hi
        entries[name] = {mode_name: figures}
    return {
        "run_id": f"backfill-timed-{commit[:12]}",
        "finished": date,
        "commit": commit,
        "dirty": False,
        "quick": False,
        "backfill": True,
        "timed": method,
        "tiers": {name: tiers[name] for name in cpu},
        "entries": entries,
    }


def dumps(line: dict) -> str:
    """One line of a history file."""
    return json.dumps(line, sort_keys=True) + "\n"


def append(run: Run, repo: Path, results_dir: Path, services: dict[str, Service] | None = None, left_out=()) -> Path:
    """Appends run's summary line (summary's services and left_out) to results_dir/history.jsonl;
    returns the file."""
    path = results_dir / FILE
    commit, dirty = commit_of(repo)
    with path.open("a", encoding="utf-8") as out:
        out.write(dumps(summary(run, commit, dirty, services, left_out)))
    return path


def read(path: Path) -> list[dict]:
    """Every line of a history file, oldest first; a line that is not JSON is skipped."""
    return results.read_lines(path)


def figure(value: float) -> str:
    """A figure in words: whole with thousands apart from 1 000 up, else 4 significant digits."""
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


@dataclass
class Change:
    """A new level of one figure, from line `index` of the history's kept lines on."""

    entry: str
    mode: str
    metric: str
    index: int  # the first point of the new level in the figure's series
    run_id: str  # the first run at the new level
    commit: str | None  # its commit
    before: float  # median of the level before
    after: float  # and after
    commit_before: str | None = None  # the commit of the last run at the old level
    lo: float | None = None  # bootstrap 95% interval of after ÷ before; None: a level of one run
    hi: float | None = None
    absolute: tuple[float, float] | None = None  # a ratio's absolute figure, medians before and after
    service: bool = False  # a server the arena did not build: its commits are its own, not this repository's

    @property
    def ratio(self) -> float:
        return self.after / self.before if self.before else float("inf")

    @property
    def better(self) -> bool:
        return (self.ratio > 1) == METRICS[self.metric][1]

    @property
    def commits(self) -> str:
        """The range in which it happened, git's way: old..new (12 hex digits each)."""
        return f"{(self.commit_before or 'start')[:12]}..{(self.commit or 'no commit')[:12]}"

    def words(self) -> str:
        what = METRICS[self.metric][0]
        interval = "" if self.lo is None else f", 95% CI {self.lo - 1:+.1%} … {self.hi - 1:+.1%}"
        if self.metric in COUNTS:
            interval = ", a count: beyond 1%"
        line = (
            f"{self.entry} {self.mode} {what}: {figure(self.before)} → {figure(self.after)} ({self.ratio - 1:+.1%}"
            f"{interval}, {'better' if self.better else 'worse'})"
        )
        if self.absolute is not None:
            absolute = METRICS[ABSOLUTE[self.metric]][0]
            line += f" [{absolute} {figure(self.absolute[0])} → {figure(self.absolute[1])}]"
        return f"{line} in commits {self.commits}, from run {self.run_id}"


def series(lines: list[dict], entry: str, mode: str, metric: str) -> list[tuple[int, float]]:
    """(line index, value) of one figure over the history."""
    out = []
    for i, line in enumerate(lines):
        value = line.get("entries", {}).get(entry, {}).get(mode, {}).get(metric)
        if value is not None:
            out.append((i, float(value)))
    return out


def change_points(values: list[float], seed: int = 0) -> list[int]:
    """Indices into values where a new level starts (E-Divisive means, PVALUE). The library
    draws its permutations from numpy's global generator: seeded here (and restored after)
    so that the same history always gives the same answer."""
    import numpy as np
    from signal_processing_algorithms.energy_statistics.energy_statistics import e_divisive

    if len(values) < 4:
        return []
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        return sorted(e_divisive(values, pvalue=PVALUE, permutations=PERMUTATIONS))
    finally:
        np.random.set_state(state)


def round_cuts(rounds: list[list[float]], seed: int = 0) -> list[int]:
    """Indices into the points where a new level starts, found by E-Divisive (change_points)
    over every point's rounds in order: a timed replay's six ratios a commit rather than their
    median, so that a level of one or two commits can be told (over medians alone, two points
    on one side of a step can never reach p < 0.01). A cut between two rounds of one point moves
    to the nearer edge of that point (ties: the later), its rounds being taken in one sitting."""
    flat = [v for r in rounds for v in r]
    edges = [0, *accumulate(len(r) for r in rounds)]  # edges[k]: the first round of point k
    out = set()
    for cut in change_points(flat, seed):
        k = min(range(len(edges)), key=lambda e: (abs(edges[e] - cut), -e))
        if 0 < k < len(rounds):
            out.add(k)
    return sorted(out)


def _kept(lines: list[dict], include_quick: bool) -> list[dict]:
    return [line for line in lines if include_quick or not line.get("quick")]


def _figures(kept: list[dict], entries: list[str] | None, absolute: bool) -> list[tuple[str, str, str]]:
    """Every (entry, mode, figure) the lines hold, sorted: the ratios to the floor, or with
    absolute=True the absolute figures; only `entries`' when given."""
    wanted = set(OF_FLOOR) if absolute else set(ABSOLUTE)
    return sorted(
        {
            (entry, mode, metric)
            for line in kept
            for entry, modes in line.get("entries", {}).items()
            for mode, figures in modes.items()
            for metric in figures
            if metric in wanted and (not entries or entry in entries)
        }
    )


COUNTS = {"instructions", "instructions_of_floor"}  # deterministic: a step beyond COUNT_CHANGE is a change


def count_steps(values: list[float]) -> list[int]:
    """Indices where a deterministic count (instructions per request: callgrind repeats within
    0.03% here) differs from the one before by more than compare.COUNT_CHANGE, the gate's rule:
    no statistics, as for the gate's counts, and a level of one run is a level."""
    return [i for i in range(1, len(values)) if values[i - 1] and abs(values[i] / values[i - 1] - 1) > COUNT_CHANGE]


def changes(
    lines: list[dict], entries: list[str] | None = None, include_quick: bool = False, absolute: bool = False
) -> list[Change]:
    """Every change of level in every figure of the history (quick runs left out): the ratios
    to the floor (OF_FLOOR's), or with absolute=True the absolute figures."""
    kept = _kept(lines, include_quick)
    out = []
    for entry, mode, metric in _figures(kept, entries, absolute):
        points = series(kept, entry, mode, metric)
        values = [v for _, v in points]
        rounds = [kept[i]["entries"][entry][mode].get(metric + ROUNDS) for i, _ in points]
        by_rounds = metric not in COUNTS and all(rounds)  # a timed replay's: E-Divisive over the rounds
        cuts = count_steps(values) if metric in COUNTS else round_cuts(rounds) if by_rounds else change_points(values)
        bounds = [0, *cuts, len(values)]
        for n, cut in enumerate(cuts):
            before, after = values[bounds[n] : cut], values[cut : bounds[n + 2]]
            line, previous = kept[points[cut][0]], kept[points[cut - 1][0]]
            commit = commit_of_series(line, entry)
            change = Change(entry, mode, metric, cut, line["run_id"], commit, median(before), median(after))
            change.commit_before = commit_of_series(previous, entry)
            change.service = entry in line.get("services", {})
            if by_rounds:  # the interval from the rounds of either level
                before, after = (
                    [v for r in rounds[a:b] for v in r] for a, b in ((bounds[n], cut), (cut, bounds[n + 2]))
                )
            if metric not in COUNTS and len(before) >= 2 and len(after) >= 2 and min(before + after) > 0:
                verdict = decide(before, after, noise=0.0)
                change.lo, change.hi = verdict.lo, verdict.hi
            if metric in ABSOLUTE:
                plain = dict(series(kept, entry, mode, ABSOLUTE[metric]))
                sides = [
                    [plain[i] for i, _ in points[a:b] if i in plain]
                    for a, b in ((bounds[n], cut), (cut, bounds[n + 2]))
                ]
                if all(sides):
                    change.absolute = (median(sides[0]), median(sides[1]))
            out.append(change)
    return out


def new_changes(
    lines: list[dict], entries: list[str] | None = None, include_quick: bool = False, absolute: bool = False
) -> list[Change]:
    """The changes the latest kept run makes appear: found with it and not without it (a change
    of the same figure found without it, its start at most one run away, is the same change)."""
    kept = _kept(lines, include_quick)
    if not kept:
        return []
    now = changes(kept, entries, True, absolute)
    then = changes(kept[:-1], entries, True, absolute)
    return [
        c
        for c in now
        if not any(
            (o.entry, o.mode, o.metric) == (c.entry, c.mode, c.metric) and abs(o.index - c.index) <= 1 for o in then
        )
    ]


@dataclass
class Point:
    """One run's value of a figure; lo–hi its interval over the run's repetitions, when known."""

    run_id: str
    commit: str | None
    value: float
    lo: float | None = None
    hi: float | None = None


@dataclass
class Trend:
    """One (entry, mode, figure) over the history: its points, oldest first, and its changes."""

    entry: str
    mode: str
    metric: str
    tier: str
    points: list[Point]
    changes: list[Change]


def trends(
    lines: list[dict], entries: list[str] | None = None, include_quick: bool = False, absolute: bool = False
) -> list[Trend]:
    """Every figure's trend (the ratios to the floor, or with absolute=True the absolute
    figures), in the order of the tiers (modes.TIERS), then entry, mode and figure."""
    kept = _kept(lines, include_quick)
    found = changes(kept, entries, True, absolute)
    tiers = {entry: tier for line in kept for entry, tier in line.get("tiers", {}).items()}
    out = []
    for entry, mode, metric in _figures(kept, entries, absolute):
        points = []
        for line in kept:
            figures = line.get("entries", {}).get(entry, {}).get(mode, {})
            if metric in figures:
                lo, hi = figures.get(f"{metric}_lo"), figures.get(f"{metric}_hi")
                points.append(Point(line["run_id"], commit_of_series(line, entry), float(figures[metric]), lo, hi))
        mine = [c for c in found if (c.entry, c.mode, c.metric) == (entry, mode, metric)]
        out.append(Trend(entry, mode, metric, tiers.get(entry, "peer"), points, mine))
    rank = {tier: i for i, tier in enumerate(TIERS)}
    return sorted(out, key=lambda t: (rank.get(t.tier, len(TIERS)), t.entry, t.mode, t.metric))
