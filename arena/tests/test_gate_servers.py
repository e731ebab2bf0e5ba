"""arena gate on servers the arena did not build, end to end with real servers: a planted
slowdown (fixtures/late_server.py spending 100 µs of CPU more on each answer as B, about 4
times its CPU per request of about 33 µs here, the same server without as A) is a regression
with its JSON and JUnit verdicts; the same command against itself is no change; two running
servers are judged by the client's figures alone, and the files say so; two native commands
(--native: the flagship as A, the C renard, about 1.6 times its instructions per request
here, as B) are counted under callgrind, not timed. Short samples (1 s, no warm-up); the
bounds are wide: a 4x change against a 1.2x bound and a ±25% noise band.

The planted slowdown is counted in the server thread's CPU time, so its size does not depend
on the machine or the load beside it; two real renards' ratio does (the python renard against
the flagship: about 2 on an Intel Xeon guest, 1.16 on an AMD EPYC one beside two busy loops)."""

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from arena.counts import instructions
from arena.entries.build import build, needs_build
from arena.entries.manifest import discover, select
from arena.entries.process import Launch, free_port, launch_ready

REPO = Path(__file__).resolve().parents[2]
SHORT = ["--duration", "1", "--warmup", "0", "--connections", "10"]


def arena(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "--repo", str(REPO), *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env=env,
    )


LATE_SERVER = Path(__file__).resolve().parent / "fixtures" / "late_server.py"
PROGRAMS = {"rust": "servers/rust/bin/renard", "c": "servers/c/bin/renard-c"}


def built_commands(names: tuple[str, ...]) -> dict[str, str]:
    """Each named renard's command line as an outsider would type it, built first when needed."""
    out = {}
    for name in names:
        entry = select(discover(REPO), [name])[0]
        if not entry.available:
            pytest.skip(f"{name}: {entry.reason}")
        if needs_build(entry) and not build(entry, None).ok:
            pytest.fail(f"{name} does not build")
        out[name] = f"{PROGRAMS[name]} --listen {{listen}} --threads 1"
    return out


@pytest.fixture(scope="module")
def tools() -> None:
    """The gate's timed samples need wrk, and taskset to pin each server."""
    for tool in ("wrk", "taskset"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not on PATH")


@pytest.fixture(scope="module")
def commands(tools) -> dict[str, str]:
    return built_commands(("rust",))


def test_two_native_commands_are_counted_not_timed_and_more_instructions_are_a_regression(tmp_path):
    if instructions.available():
        pytest.skip(instructions.available())
    native = built_commands(("rust", "c"))
    gate = ["gate", "--native", "--cmd", native["c"], "--baseline-cmd", native["rust"], "--requests", "160"]
    result = arena(*gate, "--json", str(tmp_path / "g.json"))
    assert result.returncode == 1, result.stdout + result.stderr
    criteria = json.loads((tmp_path / "g.json").read_text())["criteria"]
    assert [c["criterion"] for c in criteria] == [f"instructions per request ({m})" for m in instructions.PER_WRITE]
    assert all(c["test"] == "count" and c["verdict"] == "regression" and c["ratio"] > 1.2 for c in criteria)


def test_a_planted_slowdown_is_a_regression_in_the_exit_status_json_and_junit(tools, tmp_path):
    files = ["--json", str(tmp_path / "g.json"), "--junit", str(tmp_path / "g.xml"), "--summary", str(tmp_path / "s")]
    before = f"{sys.executable} {LATE_SERVER} --listen {{listen}}"
    after = f"{before} --burn-us 100"
    gate = ["gate", "--cmd", after, "--baseline-cmd", before, "--max-pairs", "12"]
    result = arena(*gate, *SHORT, *files)
    assert result.returncode == 1, result.stdout + result.stderr
    doc = json.loads((tmp_path / "g.json").read_text())
    (criterion,) = doc["criteria"]
    assert (doc["status"], doc["baseline"], doc["change"]) == ("regression", before, after)
    assert criterion["criterion"] == "CPU per request (keepalive)" and criterion["verdict"] == "regression"
    assert criterion["lo"] > 1.2 and criterion["p"] < 0.01 and criterion["pairs"] == len(criterion["a"]) >= 8
    suite = ET.parse(tmp_path / "g.xml").getroot().find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("1", "1")
    assert suite.find("testcase").get("name") == "CPU per request (keepalive)"
    assert (tmp_path / "s").read_text().startswith("### arena gate: regression")


def test_the_same_command_against_itself_is_no_change_in_the_step_summary(commands, tmp_path):
    summary = tmp_path / "step-summary.md"
    summary.write_text("earlier step\n")
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
    same = ["gate", "--cmd", commands["rust"], "--baseline-cmd", commands["rust"], "--pairs", "4", "--noise", "0.25"]
    result = arena(*same, *SHORT, "--json", str(tmp_path / "g.json"), env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    (criterion,) = json.loads((tmp_path / "g.json").read_text())["criteria"]
    assert criterion["verdict"] == "no change" and 0.8 <= criterion["lo"] <= criterion["hi"] <= 1.25
    assert summary.read_text().startswith("earlier step\n### arena gate: no regression")  # appended


@pytest.fixture
def running(commands):
    """The flagship started by the test, as a service the gate finds running: (URL, pid)."""
    entry = select(discover(REPO), ["rust"])[0]
    server = launch_ready(entry, Launch(port=free_port(), threads=1, cpus="0"))
    try:
        yield f"http://127.0.0.1:{server.port}/", server.proc.pid
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("with_pids", "criterion", "note"),
    [
        (False, "throughput (keepalive)", "only the client's figures"),
        (True, "CPU per request (keepalive)", "its CPU that of --pid's"),
    ],
)
def test_two_running_servers_are_judged_by_requests_per_second_or_with_their_pids_by_cpu(
    running, tmp_path, with_pids, criterion, note
):
    url, pid = running
    pids = ["--pid", str(pid), "--baseline-pid", str(pid)] if with_pids else []
    result = arena("gate", "--url", url, "--baseline-url", url, *pids, "--pairs", "3", "--noise", "0.5", *SHORT,
                   "--json", str(tmp_path / "g.json"))  # fmt: skip
    assert result.returncode in (0, 3), result.stdout + result.stderr  # A/A: never a regression
    doc = json.loads((tmp_path / "g.json").read_text())
    assert doc["criteria"][0]["criterion"] == criterion and note in doc["notes"][0]
