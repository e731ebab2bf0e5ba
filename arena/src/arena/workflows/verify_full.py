"""`arena verify --full`: the runner's whole suite for each `ours` entry, `jobs` at once, its
closing lines printed as each suite ends and the entry x scenario table (conformance/verify.py
runs one suite and reads its outcomes)."""

from __future__ import annotations

from pathlib import Path

from renard_conformance import differential

from ..conformance import verify
from ..entries.manifest import Entry
from ..ui import console, spinner, suite_table

SAID_LINES, SAID_CHARS = 3, 400  # of a failed test's assertion ("E " lines), printed under it


def print_suite_result(console, result: verify.SuiteResult) -> None:
    """An entry's closing line (ok or FAIL, pytest's summary, seconds, log) and its failed
    tests, each followed by the first lines of what its assertion said, unwrapped, as pytest
    prints them ("E   ..."): what the log, overwritten by the next run, may no longer hold."""
    mark = "[red]FAIL[/]" if result.failed else "[green]ok[/]  "
    console.print(
        f"{mark} {result.entry.name}: {result.summary or result.error} ({result.seconds:.0f} s; log {result.log})",
        highlight=False,
    )
    for name, row in result.scenarios.items():
        for failure in row["failures"]:
            test = failure["test"].rpartition("::")[2]
            console.print(f"[red]FAIL[/] {result.entry.name} {name}: {test}", highlight=False, soft_wrap=True)
            for line in verify.assertion_lines(failure)[:SAID_LINES]:
                console.print(line[:SAID_CHARS], highlight=False, markup=False, soft_wrap=True)


def verify_full(
    repo: Path, chosen: list[Entry], soak: bool, ensure_built, jobs: int | None = None, run=None
) -> list[str]:
    """`arena verify --full`: the suite for each `ours` entry in chosen, `jobs` at once
    (default_jobs when None; 1: one after another, in chosen's order). The entries are built
    first, one at a time, by ensure_built(entry, log_dir) -> problem or None (a build loads
    both cores; the js entries share a folder). Prints each entry's closing line as its suite
    ends, then the entry x scenario table in chosen's order, and writes
    results/verify-full.json (--soak: results/soak.json) in that order. Returns the names of
    the entries that failed, in chosen's order (an unavailable one fails). run stands for
    run_suite (tests)."""
    if not chosen:
        return ["(no `ours` entry: --full runs the suite on our entries only)"]
    jobs = jobs or verify.default_jobs(soak)
    run = run or verify.run_suite
    long_runs = ["--renard-soak-seconds", "600", "--renard-attack-seconds", "20", "-k", "soak or attack or flagship"]
    options = long_runs if soak else []
    timeout_s = verify.SOAK_TIMEOUT_S if soak else verify.SUITE_TIMEOUT_S
    log_dir = repo / "results" / "logs"
    problems: dict[str, str] = {}
    for entry in chosen:
        problem = entry.reason if not entry.available else ensure_built(entry, log_dir)
        if problem:
            console.print(f"[red]FAIL[/] {entry.name}: {problem}", highlight=False)
            problems[entry.name] = problem
    ready = [entry for entry in chosen if entry.name not in problems]
    if jobs > 1 and len(ready) > 1:
        if run is verify.run_suite:
            # every suite's differential starts the flagship, building it when missing: once,
            # here, not by two suites at once (if it cannot be built, that test says why)
            differential.ensure_flagship()
        console.print(f"suites: {len(ready)}, {min(jobs, len(ready))} at a time", highlight=False)

    with spinner() as progress:

        def one(entry: Entry) -> verify.SuiteResult:
            task = progress.add_task(f"suite on {entry.name}: {entry.command}", total=None)
            try:
                return verify.run_suite_reported(entry, log_dir, options, timeout_s, run)
            finally:
                progress.remove_task(task)

        results = verify.run_at_most(jobs, ready, one, lambda _entry, result: print_suite_result(console, result))
    failed = [entry.name for entry in chosen if entry.name in problems]
    failed += [result.entry.name for result in results if result.failed]
    failed.sort(key=[entry.name for entry in chosen].index)
    if results:
        console.print(suite_table(results))
        path = repo / "results" / ("soak.json" if soak else "verify-full.json")
        verify.save_suite_results(path, results)
        console.print(f"table: {path}", highlight=False)
    return failed
