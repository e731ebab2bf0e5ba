"""Shared by deploy/tests and deploy/images: what a podman test needs of the host."""

import shutil
import subprocess

import pytest


@pytest.fixture(scope="session")
def loopback_tracked():
    """Fails, naming the rules, while a NOTRACK rule for lo is in place: a published port is
    NAT, which needs connection tracking, and an arena bench untracks loopback while it runs
    (arena/src/arena/host/notrack.py; a killed one leaves its rule until the next bench)."""
    if not shutil.which("iptables"):
        return
    listed = subprocess.run(["iptables", "-w", "5", "-t", "raw", "-S"], capture_output=True, text=True)
    untracked = [line for line in listed.stdout.splitlines() if "NOTRACK" in line and "-o lo" in line]
    assert not untracked, f"loopback is untracked (a bench is running?), so no published port can answer: {untracked}"
