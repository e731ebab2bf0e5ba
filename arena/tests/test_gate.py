"""arena gate: its arguments, the baseline worktree, and an A/A count of the floor that
finds no change (instruction counts: seconds; no wall-clock figure is asserted)."""

import subprocess
import sys
from pathlib import Path

import pytest

from arena import instructions
from arena.gate import GateError, Options, gate_config, run_gate, worktree

REPO = Path(__file__).resolve().parents[2]


def arena(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "arena.cli", *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["gate", "floor"], "exactly one of --baseline REV and --aa"),
        (["gate", "--aa", "--baseline", "HEAD", "floor"], "exactly one of --baseline REV and --aa"),
        (["gate", "--aa", "--mode", "turbo", "floor"], "--mode"),
        (["gate", "--aa", "--pairs", "6", "--max-pairs", "5", "floor"], "--max-pairs"),
        (["gate", "--aa", "--pairs", "1", "floor"], "--pairs"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(args, words):
    result = arena(*args)
    assert result.returncode == 2, result.stderr
    assert words in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_the_baseline_worktree_is_removed_afterwards():
    with worktree(REPO, "HEAD") as root:
        assert (root / "arena" / "README.md").is_file()
    assert not root.exists()
    listed = subprocess.run(["git", "-C", str(REPO), "worktree", "list"], capture_output=True, text=True).stdout
    assert str(root) not in listed


def test_an_unknown_revision_is_an_error_naming_it():
    with pytest.raises(GateError, match="no-such-rev"), worktree(REPO, "no-such-rev-xyz"):
        pass


def test_the_floor_against_itself_counts_no_change(tmp_path):
    if instructions.available():
        pytest.skip(instructions.available())
    opts = Options(requests=160)
    cfg = gate_config("keepalive", 1, 0, 10, 0.5)
    verdicts = run_gate(REPO, ["floor"], None, cfg, opts, tmp_path, say=lambda line: None)
    assert [v.outcome for _, v in verdicts] == ["no change"] * 4  # instructions and system calls, two loads each
    assert not any(v.regression(0.0) for _, v in verdicts)
