"""Verification: the spec's conformance runner (spec/runner/conformance.py) against each entry."""

from __future__ import annotations

import importlib
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

from .entries import Entry
from .process import Launch, StartError, free_port, launch_ready

VERDICTS = ("pass", "alt", "fail")
RUNNER_TIMEOUT_S = 600  # one entry's check_all; past it the entry is stopped and reported


def load_runner(repo: Path):
    """The conformance module of this repository (imported from <repo>/spec/runner)."""
    runner_dir = str(repo / "spec" / "runner")
    if runner_dir not in sys.path:
        sys.path.insert(0, runner_dir)
    return importlib.import_module("conformance")


@dataclass
class EntryVerdicts:
    entry: Entry
    outcomes: list           # conformance.Outcome, in the runner's order
    error: str | None = None  # the entry could not be started: no outcomes

    def counts(self) -> dict[str, int]:
        c = {v: 0 for v in VERDICTS}
        for o in self.outcomes:
            c[o.verdict] += 1
        return c

    @property
    def failed(self) -> bool:
        return self.error is not None or any(o.verdict == "fail" for o in self.outcomes)


def verify_entry(repo: Path, entry: Entry, quick: bool = False, cpus: str | None = None,
                 timeout_s: float = RUNNER_TIMEOUT_S) -> EntryVerdicts:
    """Starts the entry with the spec's default count, location and timeouts (one thread),
    runs every case except those that wait for a timeout, stops it. A runner that does not
    finish within timeout_s is reported as this entry's error (the entry is stopped)."""
    conformance = load_runner(repo)
    launch = Launch(port=free_port(), count=conformance.DEFAULT_COUNT,
                    location=conformance.DEFAULT_LOCATION, threads=1, cpus=cpus)
    try:
        server = launch_ready(entry, launch)
    except StartError as e:
        return EntryVerdicts(entry, [], str(e))
    target = conformance.Target(host=launch.host, port=server.port, count=launch.count,
                                location=launch.location)
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
