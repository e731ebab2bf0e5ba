"""Verification with the spec's conformance runner (the `renard_conformance` package).

- `verify_entry`: the vectors and statistical checks (not those that wait for a timeout)
  against an entry started from its `run` template: every entry, ours and peers.
- `run_suite`: the runner's whole pytest suite (vectors with the slow cases, statistics,
  SPEC §1 command line, restart, limits, robustness) against an `ours` entry started from its
  `command` with the short timeout flags; its outcomes grouped by scenario.
- `run_at_most`: `jobs` suites at once, for `arena verify --full` (workflows/verify_full.py).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

import renard_conformance
from renard_conformance import conformance

from ..entries.manifest import Entry
from ..entries.process import Launch, StartError, free_port, launch_ready

VERDICTS = ("pass", "alt", "fail")
RUNNER_TIMEOUT_S = 600  # one entry's check_all; past it the entry is stopped and reported
SUITE_TIMEOUT_S = 480  # one entry's whole suite (about 2 min); past it pytest is interrupted, the entry fails
SOAK_TIMEOUT_S = 1200  # --soak: 10 min of wrk and 20 s of attack, with their servers' starts and settles
INTERRUPT_GRACE_S = 30  # an interrupted pytest stops its servers within this, else it is killed
FULL_SCHEMA = 1  # of results/verify-full.json
# Suites at once by default: two is what scripts/flake (make flake) runs and has found sound,
# each suite the other's load; a suite mostly waits (timeouts, pauses), so two share 2 cores.
DEFAULT_JOBS = 2
SUMMARY_RE = re.compile(r"^=*\s*(\d+ (passed|failed|skipped|errors?|deselected|xfailed|xpassed)\b.*?)\s*=*$")


@dataclass
class EntryVerdicts:
    entry: Entry
    outcomes: list  # conformance.Outcome, in the runner's order
    error: str | None = None  # the entry could not be started: no outcomes

    def counts(self) -> dict[str, int]:
        c = {v: 0 for v in VERDICTS}
        for o in self.outcomes:
            c[o.verdict] += 1
        return c

    @property
    def failed(self) -> bool:
        return self.error is not None or any(o.verdict == "fail" for o in self.outcomes)


def verify_entry(
    repo: Path, entry: Entry, quick: bool = False, cpus: str | None = None, timeout_s: float = RUNNER_TIMEOUT_S
) -> EntryVerdicts:
    """Starts the entry with the spec's default count, location and timeouts (one thread),
    runs every case except those that wait for a timeout (the statistical draws one request per
    write to an entry that declares `pipelining = false`), stops it. A runner that does not
    finish within timeout_s is reported as this entry's error (the entry is stopped)."""
    launch = Launch(
        port=free_port(), count=conformance.DEFAULT_COUNT, location=conformance.DEFAULT_LOCATION, threads=1, cpus=cpus
    )
    try:
        server = launch_ready(entry, launch)
    except StartError as e:
        return EntryVerdicts(entry, [], str(e))
    target = conformance.Target(
        host=launch.host, port=server.port, count=launch.count, location=launch.location, pipelined=entry.pipelining
    )
    done: dict = {}

    def work():
        try:
            done["outcomes"] = conformance.check_all(target, quick=quick, skip_slow=True)
        except Exception as e:  # a runner crash is this entry's failure, reported, not hidden
            done["error"] = f"the conformance runner raised {type(e).__name__}: {e}"

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    try:
        worker.join(timeout_s)
    finally:
        server.stop()  # also ends a runner still waiting on the server
    if worker.is_alive():
        return EntryVerdicts(entry, [], f"the conformance runner did not finish within {timeout_s:g} s")
    if "error" in done:
        return EntryVerdicts(entry, [], done["error"])
    return EntryVerdicts(entry, done["outcomes"])


# --- the whole suite (arena verify --full) ---------------------------------------------------


@dataclass
class SuiteResult:
    """One entry's run of the suite: pytest's closing line and the outcomes by scenario."""

    entry: Entry
    command: str  # what --renard-cmd was (run in the entry's folder)
    summary: str = ""  # pytest's closing line, e.g. "812 passed in 95.1s"
    seconds: float = 0.0
    exit_status: int | None = None  # pytest's; None when it did not finish
    error: str | None = None  # why the suite could not run or finish
    log: Path | None = None
    scenarios: dict[str, dict] = field(default_factory=dict)  # name -> passed/failed/skipped/failures

    @property
    def failed(self) -> bool:
        return self.error is not None or self.exit_status != 0

    def record(self) -> dict:
        return {
            "command": self.command,
            "summary": self.summary,
            "seconds": round(self.seconds, 1),
            "exit_status": self.exit_status,
            "error": self.error,
            "log": str(self.log or ""),
            "finished": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "scenarios": self.scenarios,
        }


def suite_command(entry: Entry) -> str:
    """The entry's `command` with the suite's flags (port 0, short timeouts)."""
    return shlex.join(shlex.split(entry.command) + renard_conformance.SUITE_FLAGS)


def run_suite(entry: Entry, log_dir: Path, options: list[str] = (), timeout_s: float = SUITE_TIMEOUT_S) -> SuiteResult:
    """pytest on the runner's suite for one `ours` entry, in a child process (its output goes
    to log_dir/verify-full-NAME.log); the per-scenario outcomes come from --renard-report."""
    log_dir.mkdir(parents=True, exist_ok=True)
    command = suite_command(entry)
    log = log_dir / f"verify-full-{entry.name}.log"
    # the report goes to a file of this run's own: two runs at once do not read each other's
    report = Path(tempfile.mkdtemp(prefix=f"verify-full-{entry.name}-")) / "scenarios.json"
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "-p",
        renard_conformance.PLUGIN,
        "--pyargs",
        renard_conformance.SUITE,
        "--renard-cmd",
        command,
        "--renard-cwd",
        str(entry.folder),
        "--renard-report",
        str(report),
        *options,
    ]
    result = SuiteResult(entry, command, log=log)
    started = time.monotonic()
    with open(log, "w") as out:
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=entry.folder)
        try:
            result.exit_status = child.wait(timeout_s)
        except subprocess.TimeoutExpired:
            result.error = f"the suite did not finish within {timeout_s:g} s (log {log})"
            child.send_signal(signal.SIGINT)  # pytest tears down: the servers it started are stopped
            try:
                child.wait(INTERRUPT_GRACE_S)
            except subprocess.TimeoutExpired:
                child.kill()
                child.wait()
    result.seconds = time.monotonic() - started
    result.summary = closing_line(log.read_text(errors="replace"))
    if report.is_file():
        result.scenarios = json.loads(report.read_text())["scenarios"]
    elif result.error is None:
        result.error = f"pytest wrote no report (exit status {result.exit_status}; log {log})"
    shutil.rmtree(report.parent, ignore_errors=True)
    if result.error is None and result.exit_status not in (0, 1):
        result.error = f"pytest exit status {result.exit_status}: {result.summary or 'see'} (log {log})"
    return result


def assertion_lines(failure: dict) -> list[str]:
    """What a failed test's assertion said: the lines of its report pytest marks "E   "."""
    return [line for line in str(failure.get("detail", "")).splitlines() if line.startswith("E ")]


def closing_line(output: str) -> str:
    """pytest's closing summary line (`N passed, N failed in S s`), or ""."""
    for line in reversed(output.splitlines()):
        match = SUMMARY_RE.match(line.strip())
        if match:
            return match.group(1)
    return ""


def save_suite_results(path: Path, results: list[SuiteResult]) -> None:
    """Merges these entries' records into the JSON file at path (other entries are kept):
    {"schema": 1, "suite_flags": [...], "entries": {name: record}}; written atomically."""
    document = {"schema": FULL_SCHEMA, "suite_flags": renard_conformance.SUITE_FLAGS, "entries": {}}
    if path.is_file():
        try:
            old = json.loads(path.read_text())
            if old.get("schema") == FULL_SCHEMA:
                document["entries"] = old.get("entries", {})
        except ValueError:
            pass
    for result in results:
        document["entries"][result.entry.name] = result.record()
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(document, indent=1) + "\n")
    temporary.replace(path)


def scenario_names(results: list[SuiteResult]) -> list[str]:
    """Every scenario seen, in a stable order (first appearance)."""
    names: list[str] = []
    for result in results:
        for name in result.scenarios:
            if name not in names:
                names.append(name)
    return names


def scenario_cell(row: dict | None) -> str:
    """One cell of the entry x scenario table: `✓ 12`, `✗ 2/12`, `skipped`, or `·` (not run)."""
    if row is None:
        return "·"
    ran = row["passed"] + row["failed"]
    if row["failed"]:
        return f"✗ {row['failed']}/{ran}"
    if ran:
        return f"✓ {ran}"
    return "skipped"


def default_jobs(soak: bool) -> int:
    """Suites at once when --jobs is not given: DEFAULT_JOBS, or fewer on a machine with fewer
    usable cores; one with --soak (each soak holds one renard under wrk's whole load)."""
    if soak:
        return 1
    return max(1, min(DEFAULT_JOBS, len(os.sched_getaffinity(0))))


def run_at_most(jobs: int, items: Sequence, work: Callable, finished: Callable) -> list:
    """work(item) for every item, at most `jobs` at once, started in the items' order;
    finished(item, result) is called in this thread as each one ends, in the order they end.
    Returns the results in the items' order. work reports its own failures as its result: a
    raise is re-raised here once the others have ended."""
    results: list = [None] * len(items)
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(work, item): index for index, item in enumerate(items)}
        for future in as_completed(futures):
            index = futures[future]
            results[index] = future.result()
            finished(items[index], results[index])
    return results


def run_suite_reported(entry: Entry, log_dir: Path, options: list[str], timeout_s: float, run) -> SuiteResult:
    """run (run_suite) for one entry; anything it raises is this entry's error, reported, and
    never stops the other suites."""
    started = time.monotonic()
    try:
        return run(entry, log_dir, options, timeout_s)
    except Exception as error:
        return SuiteResult(
            entry,
            entry.command,
            seconds=time.monotonic() - started,
            error=f"the suite could not run: {type(error).__name__}: {error}",
        )
