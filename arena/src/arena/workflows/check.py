"""`arena check NAME`: everything an entry must pass before it is ranked, as a checklist.

Each item gets a mark and one line: ✓ it holds, ✗ it does not (and why), – not required of
this kind of entry. An item that needs the program running is ✗ "not tried" when an
earlier item left no program. An `ours` entry is ready when every item holds; a peer
(or the floor) needs to build and answer the core route only (SPEC §2–3: GET / is a 302 to
a k drawn uniformly from 1..N).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..bench.measure import SampleError, measure_sample, wrk_scripts
from ..conformance.sections import tally
from ..conformance.verify import run_suite, verify_entry
from ..core.model import Config, Run
from ..entries.build import build, needs_build
from ..entries.junit import ReportError, count, remove_stale
from ..entries.logged import TEST_TIMEOUT_S, run_logged
from ..entries.manifest import Entry, artifact_paths
from ..entries.scaffold import TODO
from ..host.cgroup import probe
from ..report import build as build_view
from ..report import readme

PASS, FAIL, SKIP = "✓", "✗", "–"
ITEMS = ("entry.toml", "builds", "core route", "verify --full", "robustness", "capped bench", "results row", "tests")
NEEDED_BY_PEERS = ("entry.toml", "builds", "core route")
TESTS_COUNTED = re.compile(r"\b[1-9]\d* (passed|tests?|ok)\b", re.IGNORECASE)


@dataclass
class Item:
    name: str  # one of ITEMS
    mark: str  # PASS, FAIL or SKIP
    reason: str  # one line

    def line(self) -> str:
        return f"{self.mark} {self.name:<14} {self.reason}"


def robustness_scenarios() -> set[str]:
    """The scenarios of the suite's robustness module (docs/reliability.md), read from its marks."""
    source = resources.files("renard_conformance.suite").joinpath("test_robustness.py").read_text()
    return set(re.findall(r'scenario\("([^"]+)"\)', source))


def ready(items: list[Item], kind: str) -> bool:
    """An ours entry: every item holds. A peer or the floor: the items peers need hold."""
    needed = ITEMS if kind == "ours" else NEEDED_BY_PEERS
    return all(i.mark == PASS or (i.mark == SKIP and kind == "floor") for i in items if i.name in needed)


def check_manifest(entry: Entry) -> Item:
    problems = []
    if entry.description.startswith(TODO):
        problems.append(f"description still says {TODO}")
    if entry.kind == "ours" and not entry.requires:
        problems.append("requires is empty (name the executables the build and run need)")
    if entry.missing:
        problems.append(f"missing on PATH: {', '.join(entry.missing)}")
    if problems:
        return Item("entry.toml", FAIL, "; ".join(problems))
    return Item("entry.toml", PASS, f"loads; kind {entry.kind}, language {entry.language}")


def check_build(entry: Entry, log_dir: Path) -> Item:
    if entry.missing:
        return Item("builds", FAIL, f"not tried: missing on PATH: {', '.join(entry.missing)}")
    if needs_build(entry):
        result = build(entry, log_dir)
        if not result.ok:
            said = [line for line in result.tail(5).splitlines() if line.strip() and not line.startswith("arena:")]
            tail = said[-1].strip() if said else "no output"
            return Item("builds", FAIL, f"`{result.failed_command}` failed: {tail} (log {result.log})")
        how = f"built in {result.seconds:.1f} s"
    else:
        how = "up to date" if entry.build else "nothing to build"
    absent = [str(p.relative_to(entry.folder)) for p in artifact_paths(entry) if not p.exists()]
    if absent:
        return Item("builds", FAIL, f"{how}, but no artifact {', '.join(absent)}")
    return Item("builds", PASS, how)


def check_core_route(entry: Entry) -> Item:
    """The vectors and statistics (not the slow cases), quick; the core route must hold."""
    verdicts = verify_entry(entry.repo, entry, quick=True)
    if verdicts.error:
        return Item("core route", FAIL, f"does not start: {verdicts.error.splitlines()[0]}")
    _, failures, core = tally(verdicts.outcomes)
    c = verdicts.counts()
    counts = f"{c['pass']} pass, {c['alt']} alt, {c['fail']} fail of the vectors"
    if not core:
        return Item("core route", FAIL, f"GET / is not a uniform 302 to 1..N ({counts})")
    return Item("core route", PASS, f"GET / answers a uniform 302 ({counts})")


def check_suite(entry: Entry, log_dir: Path) -> tuple[Item, Item]:
    """`verify --full` (the suite but its robustness module) and the robustness scenarios."""
    result = run_suite(entry, log_dir)
    if result.error and not result.scenarios:
        return (Item("verify --full", FAIL, result.error), Item("robustness", FAIL, "not tried: the suite did not run"))
    robust = robustness_scenarios()
    items = []
    for name, chosen in (("verify --full", lambda s: s not in robust), ("robustness", lambda s: s in robust)):
        rows = {s: row for s, row in result.scenarios.items() if chosen(s)}
        passed = sum(row["passed"] for row in rows.values())
        failed = {s: row["failed"] for s, row in rows.items() if row["failed"]}
        if failed:
            where = ", ".join(f"{s} {n}" for s, n in failed.items())
            items.append(Item(name, FAIL, f"{sum(failed.values())} failed ({where}); log {result.log}"))
        elif not passed:
            items.append(Item(name, FAIL, f"no test ran ({result.summary or result.error}); log {result.log}"))
        else:
            items.append(Item(name, PASS, f"{passed} passed in {len(rows)} scenarios"))
    if result.error and all(i.mark == PASS for i in items):
        items[0] = Item("verify --full", FAIL, result.error)
    return items[0], items[1]


def check_bench(entry: Entry) -> Item:
    """One second of keep-alive under the CPU cap (no cgroup here: on a dedicated core)."""
    capped = probe(0.5) is None
    cfg = Config(duration_s=1, warmup_s=0, repetitions=1, quick=True, modes=("keepalive-capped", "keepalive"))
    mode_name = "keepalive-capped" if capped else "keepalive"
    try:
        with wrk_scripts(cfg) as scripts:  # their folder goes too (the files alone left it behind)
            sample = measure_sample(entry, mode_name, 0, cfg, scripts)
    except SampleError as err:
        return Item("capped bench", FAIL, f"{mode_name}: {str(err).splitlines()[0]}")
    if sample.error_total or sample.non_3xx:
        return Item(
            "capped bench", FAIL, f"{mode_name}: {sample.error_total} socket errors, {sample.non_3xx} answers ≥ 400"
        )
    where = "capped at 50 % of a core" if capped else "no cgroup here, so uncapped"
    return Item("capped bench", PASS, f"{mode_name} 1 s, {where}: {sample.rps:,.0f} req/s, no errors")


def results_row(entry: Entry, run_dir: Path | None = None) -> Item:
    """A row starting `| \\`NAME\\`` under the results table's header (report/readme.py) in
    the entry's README or the repository's whole table (docs/results.md), compared with the row `arena row NAME`
    prints from run_dir (default results/latest) when that run measured NAME: a stale cell is
    a ✗ naming the column, the README's figure and the run's. A quick run is not compared
    (its figures are not for the README), nor a run that lacks NAME."""
    for readme_path in (entry.folder / "README.md", entry.repo / "docs" / "results.md"):
        found = readme.find_row(readme_path.read_text(errors="replace"), entry.name) if readme_path.is_file() else None
        if found:
            return compare_row(entry, found, readme_path.relative_to(entry.repo), run_dir)
    where = (entry.folder / "README.md").relative_to(entry.repo)
    return Item(
        "results row",
        FAIL,
        f"no line starting | `{entry.name}` under the results table's header in {where} (`arena row {entry.name}`)",
    )


def compare_row(entry: Entry, line: str, where: Path, run_dir: Path | None) -> Item:
    path = run_dir or entry.repo / "results" / "latest"
    if not path.exists():
        return Item("results row", PASS, f"in {where} (no run at {path.name} to compare it with)")
    try:
        run = Run.read(path)
    except (ValueError, OSError) as err:
        return Item("results row", PASS, f"in {where} (not compared: {path.name} cannot be read: {err})")
    measured = run.entry(entry.name)
    if measured is None or not any(s.entry == entry.name for s in run.samples):
        return Item("results row", PASS, f"in {where} (run {run.run_id} did not measure {entry.name})")
    if run.config.quick:
        return Item("results row", PASS, f"in {where} (not compared: run {run.run_id} is a quick run)")
    try:
        syscalls = readme.syscall_counts(path if path.is_dir() else path.parent)
    except ValueError as err:
        return Item("results row", PASS, f"in {where} (not compared: {err})")
    stale = readme.stale(line, readme.cells(build_view(run), entry.name, syscalls))
    if stale:
        cells = "; ".join(f"{column}: README {mine}, run {theirs}" for column, mine, theirs in stale)
        return Item(
            "results row",
            FAIL,
            f"in {where}, stale against run {run.run_id} (`arena row {entry.name}` prints it): {cells}",
        )
    return Item("results row", PASS, f"in {where}, as run {run.run_id} gives it")


def check_tests(entry: Entry, log_dir: Path) -> Item:
    """The entry's `test` commands as `make test` runs them (arena test NAME)."""
    if not entry.test:
        return Item("tests", FAIL, "entry.toml declares no `test` (make test runs them through arena test)")
    log = log_dir / f"test-{entry.name}.log"
    remove_stale(entry.folder, entry.junit)
    failed = run_logged(entry.test, entry.folder, log, TEST_TIMEOUT_S)
    if failed is not None:
        command, status = failed
        if status is None:
            return Item("tests", FAIL, f"`{command}` did not finish in {TEST_TIMEOUT_S} s (log {log})")
        return Item("tests", FAIL, f"`{command}` exited {status} (log {log})")
    summary = closing_line(log.read_text(errors="replace"))
    if not entry.junit:
        return Item("tests", PASS, f"{summary} (log {log})")
    try:
        counts = count(entry.folder, entry.junit)
    except ReportError as err:
        return Item("tests", FAIL, f"{err} (log {log})")
    if counts is None:  # declared, not written: the count would be a guess
        return Item("tests", FAIL, f"no JUnit report matches {', '.join(entry.junit)} (log {log})")
    if counts.failed:
        return Item("tests", FAIL, f"{counts.line()} in its JUnit reports, though it exited 0 (log {log})")
    return Item("tests", PASS, f"{counts.line()}, from its JUnit reports (log {log})")


def closing_line(output: str) -> str:
    """The runner's summary: the last line counting passed tests (cargo prints one per target,
    the doc tests' often 0), else the last line."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    counted = [line for line in lines if TESTS_COUNTED.search(line)]
    return ((counted or lines)[-1] if lines else "passed")[:100]


def check(entry: Entry, log_dir: Path, report=lambda item: None) -> list[Item]:
    """Every item in order; report(item) is called as each is known."""
    log_dir.mkdir(parents=True, exist_ok=True)
    items: list[Item] = []

    def add(*new: Item) -> None:
        for item in new:
            items.append(item)
            report(item)

    ours = entry.kind == "ours"
    add(check_manifest(entry))
    add(check_build(entry, log_dir))
    if entry.kind == "floor" and items[-1].mark == PASS:  # answers without parsing: a benchmark, not a server
        add(Item("core route", SKIP, "not required of the floor (it answers one fixed 302)"))
    elif items[-1].mark == PASS:
        add(check_core_route(entry))
    else:
        add(Item("core route", FAIL, "not tried: it does not build"))
    running = items[-1].mark in (PASS, SKIP)
    if not ours:
        add(*(Item(name, SKIP, f"not required of a {entry.kind}") for name in ("verify --full", "robustness")))
    elif running:
        add(*check_suite(entry, log_dir))
    else:
        add(Item("verify --full", FAIL, "not tried: the core route does not hold"))
        add(Item("robustness", FAIL, "not tried: the core route does not hold"))
    if running:
        add(check_bench(entry))
    else:
        add(Item("capped bench", FAIL if ours else SKIP, "not tried: the core route does not hold"))
    add(results_row(entry) if ours else Item("results row", SKIP, f"not required of a {entry.kind}"))
    if ours or entry.test:
        add(check_tests(entry, log_dir))
    else:
        add(Item("tests", SKIP, f"none declared (not required of a {entry.kind})"))
    return items
