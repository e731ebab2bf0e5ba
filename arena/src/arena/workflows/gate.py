"""`arena gate`: did a change make an entry slower? (docs/arena/gate.md, "The regression gate")

A is the entry at a baseline revision (built in a git worktree of it) or, with --aa, the
working tree itself (an A/A run: the machine's noise floor); B is the working tree. Or A and
B are servers the arena did not build (run_outside_gate): two command lines it starts
(outside.py: --baseline-cmd, --cmd), judged by the CPU of each server's process tree per
request, or two running servers (remote.py: --baseline-url, --url), judged by the client's
requests/s alone, since their CPU is not known here, unless their processes are named (--pid,
--baseline-pid: then by the CPU of each one's process tree).

- A native entry (entry.toml `native = true`) with valgrind here is compared by its
  instructions per request under callgrind in both loads (instructions.py): deterministic,
  so more than compare.COUNT_CHANGE apart is a change, with no statistics.
- Any other entry (or any entry with --timed): fresh-process wrk samples (bench.py) taken
  interleaved A B A B …, compared by the server's CPU time per request (its cgroup's counter
  in a capped mode, else /proc; requests/s is said beside, deciding nothing), at least
  `pairs` pairs; compare.decide_paired (each pair's ratio B÷A, so that the machine's drift
  cancels; significance needs compare.min_pairs(), 8 at alpha 0.01) tells significant, no change
  or inconclusive; an inconclusive result adds one pair at a time up to `max_pairs`, and then
  the answer is "inconclusive", never a guess.
- With `latency` (p50, p90 or p99; off by default), every entry or server is also judged by
  that percentile of its latency at a fixed rate, `at` (0.5) times A's capacity, A's median
  requests/s in the timed samples (wrk, keep-alive, `connections`, one fresh server per
  sample pinned to its core with one thread), or in CAPACITY_SAMPLES samples of A alone taken
  for it when A was counted, not timed. Pairs A B A B of oha at that rate, open loop with
  --latency-correction (curves/latency.py: fixed_rate_point), fresh servers warmed up as
  `arena latency` does; each pair's ratio B÷A of the percentile (higher is worse) goes to
  compare.decide_paired as the timed figure's do (the same pairs, noise, cap). A must be
  served at KEEPS_UP of the rate asked (the median of its samples), else oha, not the
  server, was the limit: an error.
- Two --cmd servers that run native code (`native`, `arena gate --native`) are counted as
  native entries are, instead of timed (instructions.py takes an outside.Outside).
- Every entry, with strace here (unless `syscalls` is off): system calls per request under
  strace in keepalive and pipeline16 (syscalls.py), counted twice each side (A B A B); means
  further apart than syscalls.tolerance (0.05 calls per request, plus the entry's
  background, plus the spread of a side's own two counts: 0 for a native entry, the
  scheduler's or JIT's variation for a runtime) are a change, with no statistics.

run_gate and run_outside_gate return every (entry, verdict); the command turns them into
its exit status and verdict files (report/verdicts.py). When they cannot run to the end they
raise GateError, which carries the verdicts decided before (the files still list them).
"""

from __future__ import annotations

import shutil
import statistics
import subprocess
import tempfile
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from ..analysis import compare
from ..bench.measure import SampleError, measure_sample, wrk_scripts
from ..core.model import Config
from ..counts import instructions, syscalls
from ..curves.latency import fixed_rate_point
from ..entries.build import build, needs_build
from ..entries.manifest import Entry, ManifestError, discover, load_manifest, select
from ..entries.process import StartError
from ..entries.remote import Remote
from ..host.cgroup import CapError
from ..load.driver import LoadError


class GateError(Exception):
    """The gate could not run to its end (no such revision, a build failed, a server that did
    not start or answer); str() says why, `found` holds the (entry, verdict)s decided before."""

    def __init__(self, reason: str, found: list | None = None):
        super().__init__(reason)
        self.found = list(found or [])


@dataclass
class Options:
    pairs: int = compare.min_pairs()  # A B pairs before the first decision: 8, the fewest that can be significant
    max_pairs: int = 15  # the cap on pairs when the decision stays inconclusive
    threshold: float = 0.05  # a regression must exceed this (0.05: 5% worse)
    noise: float = 0.05  # the noise floor: ratios within 1/(1+noise)–(1+noise) are noise
    timed: bool = False  # time native entries too instead of counting their instructions
    requests: int = instructions.DEFAULT_REQUESTS  # N for the instruction counts
    syscalls: bool = True  # also compare system calls per request (when strace is installed)
    latency: str | None = None  # also judge this percentile (a key of LATENCY_PERCENTILES); None: not
    at: float = 0.5  # the latency's fixed rate as a share of A's capacity (requests/s)
    native: bool = False  # outside servers (--cmd) run native code: count their instructions instead of timing


@contextmanager
def worktree(repo: Path, rev: str):
    """A detached git worktree of repo at rev, removed afterwards; raises GateError."""
    path = Path(tempfile.mkdtemp(prefix="arena-gate-")) / "baseline"
    added = subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "--detach", str(path), rev],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if added.returncode != 0:
        raise GateError(f"cannot check out {rev!r}: {added.stderr.strip().splitlines()[-1:]}")
    try:
        yield path
    finally:
        subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(path)], capture_output=True)
        shutil.rmtree(path.parent, ignore_errors=True)


def baseline_entries(root: Path, names: list[str]) -> dict[str, Entry]:
    """The named entries as declared at the baseline (an entry it lacks is left out). Only
    the manifests that declare one of them are read, so that another entry's manifest in a
    format this arena no longer reads (an older revision's) does not stop the gate; raises
    GateError when one of theirs cannot be read."""
    out: dict[str, Entry] = {}
    for manifest in [*sorted(root.glob("servers/*/entry.toml")), *sorted(root.glob("peers/*/entry.toml"))]:
        try:
            declared = {t.get("name") for t in tomllib.loads(manifest.read_text()).get("entry", [])}
        except (OSError, tomllib.TOMLDecodeError, AttributeError):
            declared = set()
        if not declared & set(names):
            continue
        try:
            out |= {e.name: e for e in load_manifest(manifest) if e.name in names}
        except ManifestError as err:
            raise GateError(f"the baseline's {manifest.relative_to(root)} cannot be read here: {err}") from None
    return out


def ensure_built(entry: Entry, log_dir: Path) -> None:
    if needs_build(entry):
        result = build(entry, log_dir)
        if not result.ok:
            raise GateError(f"{entry.name} at {entry.repo} does not build: {result.failed_command} (log {result.log})")


def count_verdicts(a: Entry, b: Entry, opts: Options, say: Callable[[str], None]) -> list[compare.Verdict]:
    """A and B by instructions per request in each load."""
    out = []
    for mode_name in instructions.PER_WRITE:
        counts = [instructions.count(side, mode_name, opts.requests).per_request for side in (a, b)]
        say(f"  {mode_name}: A {counts[0]:,.1f}, B {counts[1]:,.1f} instructions per request")
        out.append(compare.decide_count(*counts, f"instructions per request ({mode_name})"))
    return out


SYSCALL_MODES = ("keepalive", "pipeline16")  # close's count depends on timing (EAGAIN, wake-ups)
SYSCALL_REPEATS = 2  # counts per side, interleaved A B A B: each side's own spread is its tolerance


def syscall_verdicts(a: Entry, b: Entry, say: Callable[[str], None]) -> list[compare.Verdict]:
    """A and B by system calls per request in each of SYSCALL_MODES (syscalls.decide); a mode
    one side was not counted in (an entry that declares `pipelining = false` has no pipelined
    count) is said and left out."""
    sides: dict[str, list] = {"A": [], "B": []}
    for _ in range(SYSCALL_REPEATS):
        for name, entry in (("A", a), ("B", b)):
            counted = syscalls.count_entry(entry, SYSCALL_MODES, syscalls.DEFAULT_REQUESTS)
            if counted.error:
                raise syscalls.CountError(f"system calls not counted: {counted.error}")
            sides[name].append(counted)
    out = []
    for mode_name in SYSCALL_MODES:
        ca, cb = ([c.count(mode_name) for c in sides[name]] for name in ("A", "B"))
        if None in ca or None in cb:
            say(f"  system calls ({mode_name}): not compared, a side was not counted in it (pipelining = false)")
            continue
        verdict = syscalls.decide(ca, cb)
        say(f"  {verdict.metric}")
        out.append(verdict)
    return out


SIDES = {"A": "A (the baseline)", "B": "B (the change)"}


def client_only(entry: Entry) -> bool:
    """A running server whose process is not known here: only the client's figures."""
    return isinstance(entry, Remote) and entry.pid is None


def paired_verdict(
    measure_pair: Callable[[int], str], decide: Callable[[], compare.Verdict], opts: Options, say
) -> compare.Verdict:
    """The pairs' decision: measure_pair(i) takes pair i (A then B) and returns its line;
    decide() judges the pairs so far, from opts.pairs on, one more pair at a time while it is
    inconclusive, up to opts.max_pairs."""
    verdict = None
    for pair in range(opts.max_pairs):
        say(f"  pair {pair + 1}: {measure_pair(pair)}")
        if pair + 1 >= opts.pairs:
            verdict = decide()
            if verdict.outcome != "inconclusive":
                break
    return verdict


@dataclass
class Timed:
    """The timed criterion's verdict, and A's requests/s sample by sample (the capacity the
    latency criterion takes its share of)."""

    verdict: compare.Verdict
    a_rps: list[float]


def timed_verdict(a: Entry, b: Entry, cfg: Config, opts: Options, say: Callable[[str], None]) -> Timed:
    """A and B by the server's CPU time per request (Sample.own_cpu_us; fewer is better) of
    interleaved fresh-process samples in cfg.modes[0]: the server's own cost, which wrk's
    share of a loaded machine moves less than its requests/s. The requests/s interval of the
    same samples is said beside it, for reference, and decides nothing. When a side is a
    running server with no known process (client_only), requests/s is all there is: it decides."""
    mode_name = cfg.modes[0]
    by_rps = client_only(a) or client_only(b)
    cpu: dict[str, list[float]] = {"A": [], "B": []}
    rps: dict[str, list[float]] = {"A": [], "B": []}

    def measure_pair(pair: int) -> str:
        for side, entry in (("A", a), ("B", b)):
            try:
                sample = measure_sample(entry, mode_name, pair, cfg, scripts)
            except SampleError as err:
                raise SampleError(f"{SIDES[side]}: {err.reason}", err.tail) from None
            cost = sample.own_cpu_us
            if cost is None and not by_rps:
                raise SampleError(f"{SIDES[side]}: answered no request during the run")
            if cost == 0 and not by_rps:  # a --pid that is not the server, or ticks too coarse
                raise SampleError(f"{SIDES[side]}: no CPU time measured for its process tree")
            cpu[side].append(cost)
            rps[side].append(sample.rps)
        costs = "" if by_rps else f"A {cpu['A'][-1]:.2f}, B {cpu['B'][-1]:.2f} CPU µs per request "
        return f"{costs}(A {rps['A'][-1]:,.0f}, B {rps['B'][-1]:,.0f} requests/s)"

    def decide() -> compare.Verdict:
        if by_rps:
            return compare.decide_paired(rps["A"], rps["B"], f"throughput ({mode_name})", noise=opts.noise)
        return compare.decide_paired(
            cpu["A"], cpu["B"], f"CPU per request ({mode_name})", noise=opts.noise, higher_is_better=False
        )

    with wrk_scripts(cfg) as scripts:
        verdict = paired_verdict(measure_pair, decide, opts, say)
    if not by_rps:
        throughput = compare.decide_paired(rps["A"], rps["B"], f"throughput ({mode_name})", noise=opts.noise)
        say(f"  for reference, not deciding: {throughput.words()}")
    return Timed(verdict, rps["A"])


LATENCY_PERCENTILES = ("p50", "p90", "p99")  # the choices of --latency: keys of curves.latency's Point
LATENCY_MODE = "keepalive"  # the capacity is A's requests/s in this mode (oha keeps connections alive)
CAPACITY_SAMPLES = 3  # samples of A alone when its timed samples were not taken (a counted entry)
KEEPS_UP = 0.9  # A must be served this share of the rate asked, else oha was the limit


def capacity(a: Entry, cfg: Config, a_rps: list[float] | None, say: Callable[[str], None]) -> float:
    """A's capacity in requests/s: the median of a_rps, A's requests/s in the timed samples
    (taken in LATENCY_MODE: the command refuses --latency in another), or, when there were
    none (None: A was counted), of CAPACITY_SAMPLES samples of A alone in LATENCY_MODE.
    Raises SampleError."""
    if a_rps is None:
        a_rps = []
        with wrk_scripts(replace(cfg, modes=(LATENCY_MODE,))) as scripts:
            for rep in range(CAPACITY_SAMPLES):
                try:
                    a_rps.append(measure_sample(a, LATENCY_MODE, rep, cfg, scripts).rps)
                except SampleError as err:
                    raise SampleError(f"{SIDES['A']}: {err.reason}", err.tail) from None
        say(f"  A's capacity: {', '.join(f'{r:,.0f}' for r in a_rps)} requests/s ({LATENCY_MODE}, wrk)")
    return float(statistics.median(a_rps))


def latency_verdict(a: Entry, b: Entry, cap: float, cfg: Config, opts: Options, say) -> compare.Verdict:
    """A and B by opts.latency (µs; higher is worse) at opts.at × cap requests/s, pairs of
    fixed_rate_point A B A B (see the module's docstring). Raises SampleError, StartError, LoadError."""
    rate = max(1.0, opts.at * cap)
    name = opts.latency
    us: dict[str, list[float]] = {"A": [], "B": []}
    a_achieved: list[float] = []  # requests/s oha got answered by A, sample by sample

    def measure_pair(pair: int) -> str:
        achieved = {}
        for side, entry in (("A", a), ("B", b)):
            try:
                point = fixed_rate_point(entry, cfg, cfg.duration_s, rate, opts.at)
            except (StartError, LoadError) as err:
                raise SampleError(f"{SIDES[side]}: {str(err).splitlines()[0]}") from None
            if point.failed:
                raise SampleError(
                    f"{SIDES[side]}: {point.failed} requests failed or were answered wrongly at {rate:,.0f}/s"
                )
            if not point.latency_us.get(name):
                raise SampleError(f"{SIDES[side]}: oha measured no {name} at {rate:,.0f}/s")
            us[side].append(point.latency_us[name])
            achieved[side] = point.achieved
        a_achieved.append(achieved["A"])
        return (
            f"A {us['A'][-1]:,.1f}, B {us['B'][-1]:,.1f} µs {name} "
            f"(A {achieved['A']:,.0f}, B {achieved['B']:,.0f} of {rate:,.0f} requests/s)"
        )

    def decide() -> compare.Verdict:
        served = statistics.median(a_achieved)  # one sample stalled by a neighbour is not oha's limit
        if served < KEEPS_UP * rate:
            raise SampleError(
                f"oha sent only {served:,.0f} of the {rate:,.0f} requests/s asked to A (the baseline; median of "
                f"{len(a_achieved)} samples): the load generator was the limit, not the server "
                "(lower --at, or give oha more connections)"
            )
        metric = f"latency {name} at {opts.at:.0%} of A's capacity ({rate:,.0f} requests/s)"
        verdict = compare.decide_paired(us["A"], us["B"], metric, noise=opts.noise, higher_is_better=False)
        return replace(verdict, criterion=latency_criterion(opts))

    return paired_verdict(measure_pair, decide, opts, say)


def latency_criterion(opts: Options) -> str:
    """The latency verdict's stable name (a JUnit test case's), e.g. "latency p99 at 50% of capacity"."""
    return f"latency {opts.latency} at {opts.at:.0%} of capacity"


RUN_ERRORS = (SampleError, StartError, LoadError, CapError, instructions.CountError, syscalls.CountError)


def judge(a: Entry, b: Entry, cfg: Config, opts: Options, counted: bool, say) -> Iterator[compare.Verdict]:
    """A against B, each verdict as it is decided: by instructions per request (counted) or
    timed, then by latency when opts.latency asks for it. Raises one of RUN_ERRORS."""
    a_rps = None
    if counted:
        yield from count_verdicts(a, b, opts, say)
    else:
        timed = timed_verdict(a, b, cfg, opts, say)
        a_rps = timed.a_rps
        yield timed.verdict
    if opts.latency:
        say(f"{b.name}: latency {opts.latency} at {opts.at:.0%} of A's capacity (oha, open loop)")
        yield latency_verdict(a, b, capacity(a, cfg, a_rps, say), cfg, opts, say)


def run_outside_gate(
    new: Entry, old: Entry, cfg: Config, opts: Options, say: Callable[[str], None] = print
) -> list[tuple[str, compare.Verdict]]:
    """B = new against A = old, two servers the arena did not build (outside.Outside from a
    command line, or remote.Remote at a URL): timed, or, two commands that run native code
    (opts.native), counted; then by latency when asked; no system calls (what they run is not
    known to be started the same way). The verdicts are named after new's entry name ("cmd" or
    "url"). Raises GateError."""
    by_rps = client_only(new) or client_only(old)
    if opts.native:
        figure = "instructions per request (callgrind)"
    else:
        figure = "requests/s (client only: CPU unknown)" if by_rps else f"server CPU per request, {cfg.modes[0]}"
    say(f"{new.name}: {figure}")
    found = []
    try:
        for verdict in judge(old, new, cfg, opts, opts.native, say):
            found.append((new.name, verdict))
    except RUN_ERRORS as err:
        raise GateError(f"{new.name}: {str(err).splitlines()[0]}", found) from None
    return found


def run_gate(
    repo: Path,
    names: list[str],
    baseline: str | None,
    cfg: Config,
    opts: Options,
    log_dir: Path,
    say: Callable[[str], None] = print,
) -> list[tuple[str, compare.Verdict]]:
    """Every (entry, verdict) of the gate; baseline None: A/A (the working tree against itself)."""
    current = select(discover(repo), names)
    for entry in current:
        if not entry.available:
            raise GateError(f"{entry.name} is unavailable here: {entry.reason}")
        ensure_built(entry, log_dir)
    if baseline is None:
        return _compare_all({e.name: e for e in current}, current, cfg, opts, say)
    with worktree(repo, baseline) as root:
        old = baseline_entries(root, [e.name for e in current])
        for entry in old.values():
            say(f"building {entry.name} at {baseline}")
            ensure_built(entry, log_dir)
        return _compare_all(old, current, cfg, opts, say)


def _compare_all(old: dict[str, Entry], current: list[Entry], cfg: Config, opts: Options, say) -> list:
    out = []
    for entry in current:
        a = old.get(entry.name)
        if a is None:
            say(f"{entry.name}: not in the baseline, not compared")
            continue
        counted = entry.native and a.native and not opts.timed and instructions.available() is None
        figure = "instructions per request (callgrind)" if counted else f"server CPU per request, {cfg.modes[0]}"
        say(f"{entry.name}: {figure}")
        try:
            for verdict in judge(a, entry, cfg, opts, counted, say):
                out.append((entry.name, verdict))
            if opts.syscalls and syscalls.available() is None:
                say(f"{entry.name}: system calls per request (strace)")
                out += [(entry.name, v) for v in syscall_verdicts(a, entry, say)]
        except RUN_ERRORS as err:
            raise GateError(f"{entry.name}: {str(err).splitlines()[0]}", out) from None
    return out


def gate_config(mode_name: str, duration_s: int, warmup_s: int, connections: int, quota: float) -> Config:
    """The bench configuration of the gate's timed samples: one mode, short runs."""
    return replace(
        Config(),
        modes=(mode_name,),
        duration_s=duration_s,
        warmup_s=warmup_s,
        connections=connections,
        repetitions=1,
        cpu_quota=quota,
    )
