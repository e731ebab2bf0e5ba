"""host/notrack.py against the real netfilter (root): the NOTRACK rule for lo is in place during
a sample and gone after, also when the block fails."""

import os
import shutil
import subprocess

import pytest

from arena.host import notrack

pytestmark = pytest.mark.skipif(
    not shutil.which("iptables")
    or os.geteuid() != 0
    or subprocess.run(["iptables", "-t", "raw", "-S"], capture_output=True).returncode != 0,
    reason="no iptables raw table here (not root, or netfilter unavailable)",
)


def test_the_rule_is_in_place_during_the_block_and_gone_after():
    tag = f"arena-notrack-{os.getpid()}"
    assert not notrack.active(tag)
    with notrack.untracked_loopback() as problem:
        assert problem is None
        assert notrack.active(tag) and not notrack.tracked()
    assert not notrack.active(tag)


def test_the_rule_is_removed_when_the_block_fails():
    tag = f"arena-notrack-{os.getpid()}"
    with pytest.raises(KeyboardInterrupt), notrack.untracked_loopback():
        assert notrack.active(tag)
        raise KeyboardInterrupt
    assert not notrack.active(tag)


def _insert(tag: str) -> None:
    for chain, side in notrack.CHAINS:
        subprocess.run(["iptables", "-t", "raw", "-I", *notrack._rule(chain, side, tag)], check=True)


def test_a_killed_runs_rules_are_removed_by_the_next_run_and_a_live_runs_are_kept():
    gone = subprocess.Popen(["true"])
    gone.wait()  # its pid names no process now, as a run killed with SIGKILL
    live = subprocess.Popen(["sleep", "60"])
    orphan, running = f"arena-notrack-{gone.pid}", f"arena-notrack-{live.pid}"
    _insert(orphan)
    _insert(running)
    try:
        with notrack.untracked_loopback() as problem:
            assert problem is None
            assert not notrack.active(orphan) and notrack.active(running)
    finally:
        live.kill()
        live.wait()
        for chain, side in notrack.CHAINS:
            for tag in (orphan, running):
                subprocess.run(["iptables", "-t", "raw", "-D", *notrack._rule(chain, side, tag)], capture_output=True)
    assert not notrack.active(running)
