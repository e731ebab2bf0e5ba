"""`arena verify --full`: the runner's suite driven from an entry's `command` (in its folder),
its closing line, the per-scenario outcomes, the merged JSON table and the exit status;
against a tiny Python entry, with the suite narrowed to two SPEC §1 tests (-k)."""

import json
import subprocess
import sys
from pathlib import Path

from arena import verify
from arena.entries import load_manifest

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
    (folder / "entry.toml").write_text(ENTRY.replace('kind = "ours"', 'kind = "peer"'))
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
