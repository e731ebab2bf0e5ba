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
