"""`arena verify --full`: the runner's suite driven from an entry's `command` (in its folder),
its closing line, the per-scenario outcomes, the merged JSON table and the exit status;
against a tiny Python entry, with the suite narrowed to two SPEC §1 tests (-k). Then --jobs:
suites at once (stand-in suites), each failure its own, the table and JSON in the entries' order."""

import io
import json
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console

from arena.conformance import verify
from arena.entries.manifest import load_manifest
from arena.workflows import verify_full

SERVER = """
import os, socket, sys, time
args = sys.argv[1:]
if ("--help" in args or "--version" in args) and os.path.exists("slow-cli"):
    time.sleep(30)
if "--help" in args:
    print("usage: server.py [--listen HOST:PORT] ...")
    sys.exit(0)
if "--version" in args:
    print("VERSION")
    sys.exit(0)
host, _, port = args[args.index("--listen") + 1].rpartition(":")
s = socket.create_server((host, int(port)))
open("server.pid", "w").write(str(os.getpid()))
print(f"listening on http://{host}:{s.getsockname()[1]}", file=sys.stderr, flush=True)
while True:
    s.accept()[0].close()
"""

ENTRY = """
[[entry]]
name = "demo"
language = "Python"
kind = "ours"
description = "a stand-in server"
requires = ["python3"]
build = []
run = "python3 server.py --listen {listen}"
artifacts = ["server.py"]
version = "python3 --version"
command = "python3 server.py"
"""

NARROW = ["-k", "cli_help or cli_version"]


def demo_entry(tmp_path: Path, version_line: str):
    folder = tmp_path / "servers" / "demo"
    folder.mkdir(parents=True)
    (folder / "server.py").write_text(SERVER.replace("VERSION", version_line))
    (folder / "entry.toml").write_text(ENTRY)
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "SPEC.md").write_text("spec")
    (entry,) = load_manifest(folder / "entry.toml")
    return entry


def test_suite_runs_from_the_entry_command_and_reports_by_scenario(tmp_path):
    entry = demo_entry(tmp_path, "renard 0.0.0")
    result = verify.run_suite(entry, tmp_path / "logs", NARROW, timeout_s=120)
    assert result.command.startswith("python3 server.py --listen 127.0.0.1:0 --header-timeout 2")
    assert not result.failed, result.log.read_text()
    assert result.summary.startswith("2 passed"), result.summary
    row = result.scenarios["command line"]
    assert (row["passed"], row["failed"]) == (2, 0)
    assert verify.scenario_cell(row) == "✓ 2"


def test_a_failing_test_fails_the_entry_and_names_the_test(tmp_path):
    entry = demo_entry(tmp_path, "demo 1.0")  # SPEC §1: --version prints `renard VERSION`
    result = verify.run_suite(entry, tmp_path / "logs", NARROW, timeout_s=120)
    assert result.failed and result.exit_status == 1
    assert result.summary.startswith("1 failed, 1 passed"), result.summary
    row = result.scenarios["command line"]
    assert verify.scenario_cell(row) == "✗ 1/2"
    assert "test_cli_version_prints_renard_version" in row["failures"][0]["test"]


def test_a_failed_tests_assertion_is_printed_under_it_whole_as_the_flake_campaign_reads_it(tmp_path, flake_script):
    entry = demo_entry(tmp_path, "demo 1.0")
    result = verify.run_suite(entry, tmp_path / "logs", NARROW, timeout_s=120)
    out = io.StringIO()
    verify_full.print_suite_result(Console(file=out, width=40), result)  # narrower than any message
    test = "demo command line: test_cli_version_prints_renard_version"
    said = flake_script.failures_in(out.getvalue())[test]
    assert "demo 1.0" in said, out.getvalue()


def test_results_file_merges_entries(tmp_path):
    path = tmp_path / "verify-full.json"
    entry = demo_entry(tmp_path, "renard 0.0.0")
    first = verify.SuiteResult(
        entry,
        "python3 server.py",
        summary="2 passed",
        exit_status=0,
        scenarios={"soak": {"passed": 1, "failed": 0, "skipped": 0, "failures": []}},
    )
    verify.save_suite_results(path, [first])
    document = json.loads(path.read_text())
    document["entries"]["other"] = {"summary": "kept"}
    path.write_text(json.dumps(document))
    verify.save_suite_results(path, [first])
    document = json.loads(path.read_text())
    assert document["schema"] == 1 and set(document["entries"]) == {"demo", "other"}
    assert document["entries"]["demo"]["scenarios"]["soak"]["passed"] == 1


def test_full_without_an_ours_entry_exits_1(tmp_path):
    folder = tmp_path / "peers" / "demo"
    folder.mkdir(parents=True)
    (folder / "server.py").write_text(SERVER)
    (folder / "entry.toml").write_text(ENTRY.replace('kind = "ours"', 'kind = "peer"\ntier = "infrastructure"'))
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "SPEC.md").write_text("spec")
    p = subprocess.run(
        [sys.executable, "-m", "arena.cli", "--repo", str(tmp_path), "verify", "--full"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 1 and "ours" in p.stderr, p.stdout + p.stderr


def test_a_suite_past_its_time_is_interrupted_and_its_servers_stopped(tmp_path):
    entry = demo_entry(tmp_path, "renard 0.0.0")
    (entry.folder / "slow-cli").write_text("")  # --help and --version hang: each test waits 5 s
    result = verify.run_suite(entry, tmp_path / "logs", NARROW, timeout_s=7)
    assert result.failed and "did not finish within 7 s" in result.error
    pid = int((entry.folder / "server.pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


# --- several suites at once (--jobs) ---------------------------------------------------------


def two_entries(tmp_path: Path):
    """Two stand-in `ours` entries, alpha and bravo, in one repository (tmp_path)."""
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "SPEC.md").write_text("spec")
    entries = []
    for name in ("alpha", "bravo"):
        folder = tmp_path / "servers" / name
        folder.mkdir(parents=True)
        (folder / "server.py").write_text(SERVER)
        (folder / "entry.toml").write_text(ENTRY.replace('name = "demo"', f'name = "{name}"'))
        entries.extend(load_manifest(folder / "entry.toml"))
    return entries


def passed(entry, seconds=1.0):
    return verify.SuiteResult(
        entry,
        entry.command,
        summary="2 passed",
        seconds=seconds,
        exit_status=0,
        scenarios={"command line": {"passed": 2, "failed": 0, "skipped": 0, "failures": []}},
    )


def built(_entry, _log_dir):
    return None


def test_two_jobs_run_two_at_once_and_return_results_in_the_items_order():
    both_running = threading.Barrier(2, timeout=30)  # broken, and raising, unless two run at once
    ended = []

    def work(item):
        both_running.wait()
        return item * 10

    results = verify.run_at_most(2, [1, 2], work, lambda item, result: ended.append((item, result)))
    assert results == [10, 20] and sorted(ended) == [(1, 10), (2, 20)]


def test_one_job_runs_one_at_a_time_in_the_items_order():
    running, most, started = [0], [0], []
    lock = threading.Lock()

    def work(item):
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
            started.append(item)
        time.sleep(0.05)
        with lock:
            running[0] -= 1
        return item

    assert verify.run_at_most(1, [3, 1, 2], work, lambda *_: None) == [3, 1, 2]
    assert most[0] == 1 and started == [3, 1, 2]


def test_a_failing_suite_is_reported_and_the_other_runs_to_its_end(tmp_path, capsys):
    alpha, bravo = two_entries(tmp_path)
    alpha_failed = threading.Event()

    def run(entry, log_dir, options, timeout_s):
        if entry.name == "alpha":
            alpha_failed.set()
            raise RuntimeError("pytest could not start")
        assert alpha_failed.wait(30)  # bravo was running when alpha failed: it goes on
        return passed(entry)

    failed = verify_full.verify_full(tmp_path, [alpha, bravo], False, built, jobs=2, run=run)
    assert failed == ["alpha"]
    document = json.loads((tmp_path / "results" / "verify-full.json").read_text())
    assert document["entries"]["alpha"]["error"] == "the suite could not run: RuntimeError: pytest could not start"
    assert document["entries"]["bravo"]["summary"] == "2 passed" and document["entries"]["bravo"]["error"] is None
    out = capsys.readouterr().out
    assert "FAIL alpha: the suite could not run" in out and "ok   bravo: 2 passed" in out


def test_each_result_is_reported_as_it_ends_not_in_the_items_order():
    second_reported = threading.Event()
    reported = []

    def work(item):
        if item == 1:  # waits for the report of 2, which a report in the items' order never gives
            assert second_reported.wait(30)
        return item

    def finished(item, _result):
        reported.append(item)
        if item == 2:
            second_reported.set()

    assert verify.run_at_most(2, [1, 2], work, finished) == [1, 2]
    assert reported == [2, 1]


def test_the_table_and_json_keep_the_entries_order_when_the_second_suite_ends_first(tmp_path, capsys):
    alpha, bravo = two_entries(tmp_path)
    bravo_ended = threading.Event()

    def run(entry, log_dir, options, timeout_s):
        if entry.name == "alpha":
            assert bravo_ended.wait(30)  # alpha, started first, ends last
            return passed(entry, seconds=2.0)
        bravo_ended.set()
        return passed(entry)

    assert verify_full.verify_full(tmp_path, [alpha, bravo], False, built, jobs=2, run=run) == []
    out = capsys.readouterr().out
    assert "ok   alpha: 2 passed (2 s" in out and "ok   bravo: 2 passed (1 s" in out
    header = next(line for line in out.splitlines() if "scenario" in line and "alpha" in line)
    assert header.index("alpha") < header.index("bravo")  # the table: the entries' order
    document = json.loads((tmp_path / "results" / "verify-full.json").read_text())
    assert list(document["entries"]) == ["alpha", "bravo"]


def test_an_entry_that_cannot_be_built_fails_and_the_others_run(tmp_path):
    alpha, bravo = two_entries(tmp_path)
    ran = []

    def run(entry, log_dir, options, timeout_s):
        ran.append(entry.name)
        return passed(entry)

    def build_fails_for_alpha(entry, _log_dir):
        return "build failed: make (log x)" if entry.name == "alpha" else None

    assert verify_full.verify_full(tmp_path, [alpha, bravo], False, build_fails_for_alpha, jobs=2, run=run) == ["alpha"]
    assert ran == ["bravo"]


def test_default_jobs_two_with_two_cores_or_more_one_with_one_core_or_soak(monkeypatch):
    monkeypatch.setattr(verify.os, "sched_getaffinity", lambda _pid: {0, 1, 2, 3})
    assert (verify.default_jobs(False), verify.default_jobs(True)) == (2, 1)
    monkeypatch.setattr(verify.os, "sched_getaffinity", lambda _pid: {0})
    assert verify.default_jobs(False) == 1


@pytest.mark.parametrize(
    "args, named",
    [(["--full", "--jobs", "0"], "--jobs"), (["--jobs", "2"], "--jobs: only with --full")],
)
def test_bad_jobs_is_one_line_and_exit_2(tmp_path, args, named):
    two_entries(tmp_path)
    p = subprocess.run(
        [sys.executable, "-m", "arena.cli", "--repo", str(tmp_path), "verify", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and len(p.stderr.splitlines()) == 1 and named in p.stderr, p.stdout + p.stderr
