"""`arena history --backfill REV..REV ENTRY…`: the history replayed, as `asv run A..B` does.

For REV (the range's start) and each later commit of the range's first-parent line that changed
a named entry's folder or its floor's (git rev-list --first-parent --reverse, oldest first), a
detached worktree of that commit (the gate's), the entries and their floor built there, and
each native entry's user-space instructions per request counted under callgrind in keep-alive
and pipelined by 16 (counts are deterministic to a fraction of a percent: one count per commit
is a point), the floor's alike; one history line per commit (history.backfill_line: each count
and its ratio to the floor of the same commit), appended as measured. A commit whose entry
cannot be read or built, or whose sample fails, is said and skipped, never fatal.

With Timed (--timed), what counts cannot see (a new connection's cost, a runtime's): each
commit's entries and their floor, built there, measured in Timed.pairs rounds (each entry, then
the floor: a fresh process per sample, as the gate's timed_verdict takes them with
measure_sample) by the server's CPU time per request in a capped mode, for a bounded time per
commit (Timed.commit_s, said before the first); the line (history.timed_backfill_line) holds each
round's ratio entry ÷ floor, their median and its bootstrap 95% interval, so that E-Divisive
finds a change of level across commits. Any entry can be timed, native or not.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from ..analysis import history
from ..bench import plan
from ..bench.measure import SampleError, measure_sample, wrk_scripts
from ..core.model import Config
from ..core.modes import mode, tier_of
from ..counts import instructions
from ..entries.manifest import Entry
from ..entries.process import StartError
from ..host import notrack
from ..host.cgroup import CapError, probe
from ..load.driver import LoadError
from .gate import GateError, baseline_entries, ensure_built, gate_config, worktree


class BackfillError(Exception):
    """The range cannot be replayed (a bad range, no valgrind, an entry that is not native)."""


@dataclass(frozen=True)
class Timed:
    """How a timed replay measures each commit: `pairs` rounds of fresh-process samples in
    `mode_name` (a capped mode), each `seconds` long after `warmup_s` of warm-up (or the
    entry's own), with `connections` and the server capped at `cpu_quota` of one core."""

    mode_name: str = "keepalive-capped"
    pairs: int = 6
    seconds: int = 2
    warmup_s: int = 1
    connections: int = 50
    cpu_quota: float = 0.5

    def config(self) -> Config:
        return gate_config(self.mode_name, self.seconds, self.warmup_s, self.connections, self.cpu_quota)

    def commit_s(self, entries: list[Entry]) -> float:
        """Seconds of samples one commit is expected to take (plan.sample_s per sample), builds aside."""
        return self.pairs * sum(plan.sample_s(e, self.config()) for e in entries)

    def problem(self) -> str | None:
        """Why it cannot run here, or None."""
        if not mode(self.mode_name).capped:
            return f"{self.mode_name} is not a capped mode"
        missing = [tool for tool in ("wrk", "taskset") if not shutil.which(tool)]
        if missing:
            return f"{missing[0]} is not on PATH"
        cap = probe(self.cpu_quota)
        return f"no CPU cap here ({cap})" if cap else None


def commits(repo: Path, span: str, folders: list[str]) -> list[str]:
    """The range's start and every commit after it on its first-parent line (as `asv run`: a
    merged branch's commits count as their merge) that touched one of folders, oldest first."""
    start, sep, end = span.partition("..")
    if not sep or not start or not end:
        raise BackfillError(f"{span!r} is not a range REV..REV")

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, timeout=120)
        if done.returncode:
            raise BackfillError(f"git {' '.join(args[:2])}: {done.stderr.strip().splitlines()[-1:]}")
        return done.stdout

    try:
        first = git("rev-parse", "--verify", f"{start}^{{commit}}").strip()
    except BackfillError:
        raise BackfillError(f"no commit {start!r} here") from None
    later = git("rev-list", "--first-parent", "--reverse", f"{first}..{end}", "--", *folders).split()
    return [first, *later]


def replay(
    repo: Path,
    span: str,
    entries: list[Entry],
    floor: Entry,
    out: Path,
    requests: int = instructions.DEFAULT_REQUESTS,
    say: Callable[[str], None] = print,
    timed: Timed | None = None,
) -> int:
    """Replays span for entries beside their floor, appending a line per commit to out: counted
    (native entries only), or with timed, timed (any entry); returns the lines written. Raises
    BackfillError before the first commit when it cannot run."""
    problem = timed.problem() if timed else instructions.available()
    if problem:
        raise BackfillError(problem)
    foreign = [e.name for e in entries if not e.native]
    if foreign and not timed:
        raise BackfillError(f"not native, so not counted: {', '.join(foreign)} (replay them by time: --timed)")
    folders = sorted({str(e.folder.relative_to(repo)) for e in [*entries, floor]})
    chosen = commits(repo, span, folders)
    say(f"backfill: {len(chosen)} commits of {span} touching {', '.join(folders)}")
    if timed:
        say(
            f"each commit: {timed.pairs} rounds of {', '.join(e.name for e in entries)} then {floor.name}, "
            f"{timed.seconds} s samples in {timed.mode_name} at {timed.cpu_quota:g} of a core, "
            f"about {plan.minutes(timed.commit_s([*entries, floor]))} plus its builds"
        )
    names = [e.name for e in entries] + [floor.name]
    written = 0
    for n, commit in enumerate(chosen, 1):
        line = _commit_line(repo, commit, names, floor.name, requests, timed, say)
        if line is None:
            continue
        with out.open("a", encoding="utf-8") as file:
            file.write(history.dumps(line))
        written += 1
        say(f"  {n}/{len(chosen)} {commit[:12]}: {_figures_words(line, floor.name)}")
    return written


def _figures_words(line: dict, floor: str) -> str:
    """A replayed line's figures in words: the counts, or the timed ratios with their intervals."""
    words = []
    for name, modes in line["entries"].items():
        for mode_name, f in modes.items():
            if "instructions" in f:
                words.append(f"{name} {mode_name} {f['instructions']:,.1f}")
            elif "cpu_of_floor" in f:
                interval = f" [{f['cpu_of_floor_lo']:.3f}–{f['cpu_of_floor_hi']:.3f}]" if "cpu_of_floor_lo" in f else ""
                words.append(f"{name} {mode_name} {f['cpu_of_floor']:.3f}× {floor}{interval}")
            else:
                words.append(f"{name} {mode_name} {f['cpu_us_per_req']:.2f} µs")
    return ", ".join(words)


def _commit_line(
    repo: Path, commit: str, names: list[str], floor: str, requests: int, timed: Timed | None, say
) -> dict | None:
    """The history line of one commit, or None (said) when it cannot be measured."""
    failures = (GateError, instructions.CountError, SampleError, StartError, LoadError, CapError)
    try:
        with worktree(repo, commit) as root:
            there = baseline_entries(root, names)
            if floor not in there:
                say(f"  {commit[:12]}: no {floor} at this commit: skipped")
                return None
            present = [name for name in names if name in there]
            for name in present:
                ensure_built(there[name], root / "results" / "logs")
            if timed:
                cpu, rps = time_rounds([there[name] for name in present], timed)
            else:
                counts = {
                    name: {m: instructions.count(there[name], m, requests).per_request for m in instructions.PER_WRITE}
                    for name in present
                }
    except failures as err:
        say(f"  {commit[:12]}: {str(err).splitlines()[0]}: skipped")
        return None
    date = subprocess.run(
        ["git", "-C", str(repo), "show", "-s", "--format=%cI", commit], capture_output=True, text=True
    ).stdout.strip()
    tiers = {name: tier_of(there[name].kind, there[name].tier) for name in present}
    if timed:
        return history.timed_backfill_line(commit, date, timed.mode_name, cpu, rps, floor, tiers, asdict(timed))
    return history.backfill_line(commit, date, counts, floor, tiers)


def time_rounds(entries: list[Entry], timed: Timed) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """timed.pairs rounds, each a fresh-process sample of every entry in order (the floor last),
    loopback untracked as in a bench; returns each entry's server CPU µs per request and
    requests/s, sample i of each from round i. Raises SampleError (a sample without CPU time too)."""
    cfg = timed.config()
    cpu: dict[str, list[float]] = {e.name: [] for e in entries}
    rps: dict[str, list[float]] = {e.name: [] for e in entries}
    with wrk_scripts(cfg) as scripts, notrack.untracked_loopback():
        for rep in range(timed.pairs):
            for entry in entries:
                try:
                    sample = measure_sample(entry, timed.mode_name, rep, cfg, scripts)
                except SampleError as err:
                    raise SampleError(f"{entry.name}: {err.reason}", err.tail) from None
                if not sample.own_cpu_us:  # None: nothing answered; 0: no CPU time read
                    raise SampleError(f"{entry.name}: no CPU time measured for its process tree")
                cpu[entry.name].append(sample.own_cpu_us)
                rps[entry.name].append(sample.rps)
    return cpu, rps
