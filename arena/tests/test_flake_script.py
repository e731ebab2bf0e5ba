"""scripts/flake (make flake) reaches the arena it drives (it once still imported arena.verify
after the house moved it, and said "needs the harness"), refuses a bad argument with one line
naming it, and finds in a run's log every test that failed with its message."""

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FLAKE = REPO / "scripts" / "flake"


def flake(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(FLAKE), *args], capture_output=True, text=True, timeout=60)


def test_flake_script_imports_the_harness_and_names_an_unknown_entry():
    p = flake("--scope", "suites", "--runs", "1", "no-such-entry")
    assert p.returncode == 2, p.stderr
    assert "ENTRY: not an `ours` entry: no-such-entry" in p.stderr


@pytest.mark.parametrize(
    "args, flag",
    [(["--runs", "0"], "--runs"), (["--runs", "x"], "--runs"), (["--scope", "all"], "--scope"), (["go"], "ENTRY")],
)
def test_flake_script_names_the_bad_argument_and_exits_2(args, flag):
    p = flake(*args)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(f"scripts/flake: {flag}"), p.stderr


def test_flake_finds_each_failed_test_with_its_message_in_a_run_of_make_test(flake_script):
    script = flake_script
    log = "\n".join(
        [
            "..F.",
            "FAILED arena/tests/test_x.py::test_y - AssertionError: 3 > 2",
            "ERROR deploy/tests/test_z.py::test_w - TimeoutError",
            "FAIL go: 1 failed, 298 passed in 93.18s (0:01:33)",
            "FAIL go connection flood: test_connections_faster_than_a_small_cap_leak_no_memory_round_after_round",
            "E   AssertionError: VmRSS 3164 KiB before, then after each round: 5216, 5220 KiB",
            "E   assert 4 <= 1536",
            "FAIL java test: renard.ServerTest.partial_head_gets_408_at_the_header_deadline",
            "E   not early ==> expected: <true> but was: <false>",
            "make: *** [Makefile:75: test-spec] Error 1",
        ]
    )
    assert script.failures_in(log) == {
        "arena/tests/test_x.py::test_y": "AssertionError: 3 > 2",
        "deploy/tests/test_z.py::test_w": "TimeoutError",
        "go connection flood: test_connections_faster_than_a_small_cap_leak_no_memory_round_after_round": (
            "AssertionError: VmRSS 3164 KiB before, then after each round: 5216, 5220 KiB assert 4 <= 1536"
        ),
        "java: renard.ServerTest.partial_head_gets_408_at_the_header_deadline": (
            "not early ==> expected: <true> but was: <false>"
        ),
        "make test-spec": "the target failed",
    }
