"""`arena bench` as a story: build, describe, verify, time the starts, measure, write run.json."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, replace
from pathlib import Path

from ..analysis import history
from ..bench import plan
from ..bench.measure import Plan, measure_startup, wrk_scripts
from ..conformance.sections import tally
from ..conformance.verify import verify_entry
from ..core import results
from ..core.model import Config, EntryRecord, Failure, Machine, Pair, Run, Timing, Verdicts
from ..core.modes import mode
from ..core.sample import Sample
from ..counts import instructions
from ..entries.build import needs_build
from ..entries.manifest import Entry, artifact_bytes, runtime_bytes
from ..entries.outside import Outside
from ..entries.process import StartError
from ..entries.remote import Remote
from ..host import notrack
from ..host.cgroup import probe
from ..host.machine import describe, first_line
from ..ui import bar, build_with_spinner, console, spinner
from .rounds import Recorder, grow_pairs, measure_plan


def _record(e: Entry) -> EntryRecord:
    said = {"name": e.name, "language": e.language, "kind": e.kind, "description": e.description}
    if isinstance(e, Remote):
        return EntryRecord(**said, available=True, url=e.url, pid=e.pid, unknown=e.unknowns())
    return EntryRecord(
        **said,
        available=e.available,
        reason=e.reason,
        warmup_s=e.warmup_s or None,
        floor=e.floor,
        tier=e.tier,
        tuned=e.tuned,
    )


def _drop(record: EntryRecord, reason: str) -> None:
    """Marks an entry unusable for the rest of the run, with the reason in plain words."""
    record.drop(reason)
    console.print(f"[red]{record.name}[/]: {reason}", highlight=False)


def with_cap_or_without(cfg: Config) -> Config:
    """cfg as it can run here: without its capped modes (and saying why) when no cgroup can be made
    (every mode puts the server in one: capped, or uncapped to count its CPU time)."""
    if not any(mode(m).capped for m in cfg.modes):  # uncapped groups only: kept where they can be made
        return cfg if cfg.cpu_quota is not None and probe(cfg.cpu_quota) is None else replace(cfg, cpu_quota=None)
    problem = probe(cfg.cpu_quota)
    if problem is None:
        return cfg
    console.print(
        f"[yellow]no CPU cap ({problem}): the capped modes are left out; the report ranks by efficiency instead[/]",
        highlight=False,
    )
    return replace(cfg, modes=tuple(m for m in cfg.modes if not mode(m).capped), cpu_quota=None, cap_problem=problem)


def count_instructions(live: list[Entry], records: dict[str, EntryRecord], cfg: Config, run_dir: Path) -> None:
    """Instructions per request of every native entry under callgrind (instructions.py); the
    annotated top functions go to run_dir/profiles/. A count that fails is said and skipped."""
    native = [e for e in live if e.native]
    if not native:
        return
    problem = instructions.available()
    if problem:
        console.print(f"[yellow]instructions per request not counted: {problem}[/]", highlight=False)
        return
    requests = instructions.QUICK_REQUESTS if cfg.quick else instructions.DEFAULT_REQUESTS
    with bar() as p:
        task = p.add_task("instructions per request (callgrind)", total=len(native) * len(instructions.PER_WRITE))
        for e in native:
            for mode_name in instructions.PER_WRITE:
                try:
                    counted = instructions.count(e, mode_name, requests, keep=run_dir / "profiles")
                    counted.annotation = f"profiles/{counted.annotation}"
                    records[e.name].instructions.append(counted)
                except (StartError, instructions.CountError, OSError) as err:
                    p.console.print(f"[red]{e.name} {mode_name} callgrind[/]: {str(err).splitlines()[0]}")
                p.advance(task)


@dataclass
class Outcome:
    """What a bench left: its directory, the entries it dropped on the way (build failed,
    verification could not run, did not start), and whether Ctrl-C ended it."""

    run_dir: Path
    dropped: list[str]
    interrupted: bool


@dataclass(frozen=True)
class Version:
    """The version of a server the arena did not build (--cmd, --url: `arena bench --commit`,
    `--commit-of`): its commit, and whether its checkout had uncommitted changes."""

    commit: str
    dirty: bool = False


def run_bench(
    repo: Path,
    chosen: list[Entry],
    cfg: Config,
    results_dir: Path,
    verify: bool = True,
    version: Version | None = None,
) -> Outcome:
    """Measures the chosen entries and writes results_dir/<run-id>/run.json, each sample also
    appended to its samples.jsonl as it is measured. A failed sample is recorded (with its
    server's stderr tail under logs/) and the run goes on; Ctrl-C ends it with what was
    measured written. version: that of the --cmd or --url server, for the history (append_history)."""
    started = results.utc_now()
    run_dir = results.new_run_dir(results_dir, started)
    log_dir = run_dir / "logs"
    cfg = with_cap_or_without(cfg)
    if any(isinstance(e, Remote) for e in chosen) and any(mode(m).capped for m in cfg.modes):
        console.print("[yellow]a running server (--url) cannot be capped: the capped modes are left out[/]")
        cfg = replace(cfg, modes=tuple(m for m in cfg.modes if not mode(m).capped), cpu_quota=None)
    records = {e.name: _record(e) for e in chosen}
    failures: list[Failure] = []
    samples: list[Sample] = []
    pairs: list[Pair] = []
    dropped: list[str] = []

    def drop(name: str, reason: str) -> None:
        _drop(records[name], reason)
        dropped.append(name)

    for e in chosen:
        if not e.available:
            console.print(f"[yellow]unavailable[/] {e.name}: {e.reason}")
    usable = [e for e in chosen if e.available]
    estimate = plan.estimate(usable, cfg, verify)
    console.print(plan.words(usable, cfg, estimate), highlight=False)
    timing = Timing(planned_s=round(estimate.total_s, 1), took_s=0)
    clock = time.monotonic()

    with spinner() as p:
        p.add_task("describing the machine", total=None)
        machine = Machine(**describe())

    def run_doc(unfinished: str | None) -> Run:
        return Run(
            run_id=run_dir.name,
            started=results.iso(started),
            finished=results.iso(results.utc_now()),
            machine=machine,
            config=cfg,
            entries=list(records.values()),
            samples=samples,
            failures=failures,
            unfinished=unfinished,
            pairs=pairs,
            timing=timing if timing.took_s else None,
        )

    planned = 0
    interrupted = False
    by_url = any(isinstance(e, Remote) for e in chosen)
    try:
        live = _prepare(repo, chosen, records, cfg, verify, log_dir, drop, timing)
        steps = Plan(live, cfg)
        planned = len(steps.steps)
        run_doc("the arena stopped while measuring: samples.jsonl holds what it measured").write(run_dir)
        # A server given by --url may sit behind NAT (a container's published port), which
        # untracked packets would skip: such a run keeps loopback tracked, and says so.
        behind_nat = nullcontext("a server given by --url may be behind NAT")
        untracking = behind_nat if by_url else notrack.untracked_loopback()
        with untracking as problem:  # the rules go whatever ends the block
            if problem:
                console.print(f"[yellow]loopback stays tracked ({problem})[/]", highlight=False)
            with wrk_scripts(cfg) as scripts:
                record = Recorder(cfg, scripts, run_dir, log_dir, samples, failures)
                with _timed(timing, "samples_s"):
                    measure_plan(steps, record)
                with _timed(timing, "pairs_s"):
                    if not cfg.quick:
                        spent = time.monotonic() - clock - timing.builds_s
                        budget = plan.pairs_budget_s(estimate, spent)
                        grow_pairs(steps, record, pairs, lambda: run_doc(None), budget)
        with _timed(timing, "instructions_s"):
            count_instructions([e for e in live if records[e.name].available], records, cfg, run_dir)
        _tally(timing, record, samples)
        timing.took_s = round(time.monotonic() - clock, 1)
        console.print(timing_words(timing), highlight=False)
    except KeyboardInterrupt:
        interrupted = True
        console.print(f"[yellow]interrupted[/]: writing the {len(samples) + len(failures)} samples measured so far")

    unfinished = None
    if interrupted:
        measured = len(samples) + len(failures)
        unfinished = (
            f"interrupted (Ctrl-C or SIGTERM) after {measured} of {planned} samples"
            if planned
            else "interrupted (Ctrl-C or SIGTERM)"
        )
    run = run_doc(unfinished)
    run.write(run_dir)
    results.point_latest(results_dir, run_dir)
    if not interrupted:  # a partial run is not in the history: it would read as a change of level
        append_history(run, repo, results_dir, chosen, version)
    return Outcome(run_dir, dropped, interrupted)


def append_history(run: Run, repo: Path, results_dir: Path, chosen: list[Entry], version: Version | None) -> None:
    """Appends run to results_dir/history.jsonl, a server the arena did not build (--cmd, --url)
    in a series of its own stamped with its version and what was measured (history.Service).
    Without a version such a server is left out, said: a --cmd run's line holds the repository's
    entries measured beside it; a --url run is not appended. With one, a --url run's line holds
    the running server alone (loopback stays tracked in such a run, so the entries beside it are
    not measured as in a bench; their floor's figures still divide its own)."""
    outside = {e.name: e for e in chosen if isinstance(e, (Outside, Remote))}
    by_url = any(isinstance(e, Remote) for e in outside.values())
    if outside and version is None:
        if by_url:
            console.print(f"not appended to {history.FILE}: a running server (--url) without --commit", highlight=False)
            return
        console.print(f"--cmd's server left out of {history.FILE}: name its version with --commit or --commit-of")
        history.append(run, repo, results_dir, left_out=list(outside))
        return
    services = {name: _service(e, version) for name, e in outside.items()}
    beside = [e.name for e in run.entries if e.name not in outside] if by_url else []
    history.append(run, repo, results_dir, services, left_out=beside)


def _service(e: Outside | Remote, version: Version) -> history.Service:
    """A --cmd or --url server as the history names it: the command line or the URL, and its version."""
    if isinstance(e, Remote):
        return history.Service("url", e.url, version.commit, version.dirty)
    return history.Service("cmd", e.run, version.commit, version.dirty)


@contextmanager
def _timed(timing: Timing, stage: str):
    """Adds the block's wall seconds to timing.<stage>, however the block ends."""
    began = time.monotonic()
    try:
        yield
    finally:
        setattr(timing, stage, round(getattr(timing, stage) + time.monotonic() - began, 3))


def _tally(timing: Timing, record: Recorder, samples: list[Sample]) -> None:
    """The samples' parts into timing: load runs, warm-ups, waits, and the rest (overhead)."""
    timing.sampled = record.sampled
    timing.load_s = round(sum(s.wall_s or 0 for s in samples), 1)
    timing.warmup_s = round(sum(s.warmup_took_s or 0 for s in samples), 1)
    timing.steal_repeats = record.repeats
    timing.steal_kept = sum(1 for s in samples if s.under_steal and s.steal_retry is None)
    timing.conntrack_wait_s = round(record.waited_s, 1)
    timing.overhead_s = round(record.measuring_s - timing.load_s - timing.warmup_s, 1)


def timing_words(t: Timing) -> str:
    """ "planned X, took Y" and where Y went, in one paragraph."""
    stages = ", ".join(f"{what} {plan.minutes(s)}" for what, s in t.phases() if s)
    each = f" ({t.overhead_s / t.sampled:.2f} s a sample)" if t.sampled else ""
    kept = f" ({t.steal_kept} more stolen from, kept unrepeated: the repeats' budget spent)" if t.steal_kept else ""
    return (
        f"planned {plan.minutes(t.planned_s)} (builds not counted), took {plan.minutes(t.took_s)}: {stages}; "
        f"{t.sampled} samples: load runs {plan.minutes(t.load_s)}, warm-ups {plan.minutes(t.warmup_s)}, "
        f"start, checks, stop and {t.steal_repeats} steal repeats {plan.minutes(t.overhead_s)}{each}"
        f"{kept}, "
        f"conntrack waits {plan.minutes(t.conntrack_wait_s)}"
    )


def _prepare(repo, chosen, records, cfg, verify, log_dir, drop, timing: Timing) -> list[Entry]:
    """Builds, describes, verifies and times the start of each entry (each stage's wall seconds
    into timing); returns those still usable."""
    with _timed(timing, "builds_s"):
        _build(chosen, records, log_dir, drop)
    with _timed(timing, "verify_s"):
        live = _verify(repo, chosen, records, cfg, verify, drop)
    with _timed(timing, "starts_s"):
        return _time_starts(live, records, cfg, drop)


def _build(chosen, records, log_dir, drop) -> None:
    """Builds what needs it; a failing build drops that entry only."""
    for e in [e for e in chosen if records[e.name].available and needs_build(e)]:
        result = build_with_spinner(e, log_dir)
        if result.ok:
            console.print(f"built {e.name} in {result.seconds:.1f} s")
        else:
            drop(e.name, f"build failed: `{result.failed_command}` (log {result.log})")
            console.print(result.tail(10), markup=False, highlight=False)


def _verify(repo, chosen, records, cfg, verify, drop) -> list[Entry]:
    """Describes and verifies the entries still available; returns those still usable."""
    live = [e for e in chosen if records[e.name].available]
    for e in live:
        if isinstance(e, Remote):  # nothing of it is on disk here
            continue
        records[e.name].version = first_line([e.version], cwd=e.folder, shell=True)
        records[e.name].artifact_bytes = artifact_bytes(e)
        records[e.name].runtime_bytes = runtime_bytes(e)

    if verify:
        for e in live:
            if e.kind == "floor":
                console.print(f"not verified {e.name}: the floor is not a conforming server")
            elif isinstance(e, Outside):
                console.print(f"not verified {e.name}: GET {e.path} must answer {e.expect} before each sample")
            elif isinstance(e, Remote):
                console.print(f"not verified {e.name}: GET {e.url} must answer {e.expect} before and after each sample")
        to_verify = [e for e in live if e.kind != "floor" and not isinstance(e, (Outside, Remote))]
        quick = " (quick)" if cfg.quick else ""
        with spinner() as p, ThreadPoolExecutor(plan.VERIFY_AT_ONCE) as pool:
            p.add_task(f"verifying {len(to_verify)} entries, {plan.VERIFY_AT_ONCE} at a time{quick}", total=None)
            futures = {pool.submit(verify_entry, repo, e, quick=cfg.quick): e for e in to_verify}
            for future in as_completed(futures):
                e, v = futures[future], future.result()
                if v.error:
                    drop(e.name, f"verification could not run: {v.error.splitlines()[0]}")
                else:
                    c = v.counts()
                    sections, failed_cases, core = tally(v.outcomes)
                    records[e.name].verify = Verdicts(c["pass"], c["alt"], c["fail"], sections, failed_cases, core)
                    p.console.print(f"verified {e.name}: {c['pass']} pass, {c['alt']} alt, {c['fail']} fail")
    return [e for e in live if records[e.name].available]


def _time_starts(live, records, cfg, drop) -> list[Entry]:
    """Times each entry's start (cfg.startup_runs times); returns those that started."""
    started = [e for e in live if not isinstance(e, Remote)]  # a running server's start is not timed
    with bar() as p:
        task = p.add_task("startup: exec to first correct 302", total=len(started) * cfg.startup_runs)
        for e in started:
            try:
                records[e.name].startup_ms = measure_startup(e, cfg)
            except StartError as err:
                drop(e.name, f"does not start: {str(err).splitlines()[0]}")
            p.advance(task, cfg.startup_runs)
    return [e for e in live if records[e.name].available]
