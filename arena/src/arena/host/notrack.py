"""Loopback untracked for a run's length: a raw-table NOTRACK rule for lo.

Once NAT rules are loaded (podman's, as `make test`'s deploy tests load them) netfilter tracks
every connection, loopback included, and a close-mode sample pays the tracking of each new
connection; a machine where podman never ran does not. So that every run takes the same
kernel path, the bench inserts `-t raw -i lo -j NOTRACK` (PREROUTING) and `-o lo -j NOTRACK`
(OUTPUT) with iptables (this machine's is iptables-nft; `nft` itself is not installed) for
its length and deletes them after, on failure and Ctrl-C too (the `with` block's exit), as it
deletes its cgroups. Each rule carries a comment naming this process, so that only the rules
it inserted are deleted. A run killed outright (SIGKILL, a lost machine) cannot delete its
rules; the next run deletes the rules whose process is gone, before it inserts its own, since
they would leave loopback untracked for good and podman's published ports (NAT) dead. Where
iptables or the raw table is missing, nothing is inserted and the reason is given in words.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from . import conntrack

CHAINS = (("PREROUTING", "-i"), ("OUTPUT", "-o"))
TAG = "arena-notrack"  # every rule's comment starts with it; then the inserting process's id


def _rule(chain: str, side: str, tag: str) -> list[str]:
    return [chain, side, "lo", "-m", "comment", "--comment", tag, "-j", "NOTRACK"]


def _iptables(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["iptables", "-w", "5", "-t", "raw", *args], capture_output=True, text=True, timeout=30)


def active(tag: str = TAG) -> bool:
    """A NOTRACK rule for lo whose comment holds `tag` is in the raw table's OUTPUT chain."""
    if not shutil.which("iptables"):
        return False
    try:
        listed = _iptables("-S", "OUTPUT").stdout
    except (OSError, subprocess.TimeoutExpired):
        return False
    return any("-o lo" in line and "NOTRACK" in line and tag in line for line in listed.splitlines())


def tracked() -> bool:
    """Whether netfilter tracks loopback connections now: connection tracking is loaded and no
    arena NOTRACK rule for lo is in place (what a sample records as Sample.tracked)."""
    return conntrack.usage() is not None and not active()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: alive
    return True


def remove_orphans() -> list[str]:
    """Deletes the arena's NOTRACK rules for lo whose inserting process no longer runs; returns
    their tags. A live run's rules are left alone."""
    orphans = []
    for chain, side in CHAINS:
        for line in _iptables("-S", chain).stdout.splitlines():
            found = re.search(rf"--comment \"?({TAG}-(\d+))\"? ", line)
            if found and "NOTRACK" in line and not _alive(int(found[2])):
                _iptables("-D", *_rule(chain, side, found[1]))
                orphans.append(found[1])
    return orphans


@contextmanager
def untracked_loopback() -> Iterator[str | None]:
    """Inserts the NOTRACK rules for the block's length and deletes them after, whatever ends it;
    yields None when they are in place, else why not (in words)."""
    if not shutil.which("iptables"):
        yield "iptables is not installed"
        return
    remove_orphans()
    tag = f"{TAG}-{os.getpid()}"
    inserted = []
    try:
        problem = None
        for chain, side in CHAINS:
            done = _iptables("-I", *_rule(chain, side, tag))
            if done.returncode != 0:
                problem = f"iptables -t raw -I {chain} failed: {done.stderr.strip() or done.returncode}"
                break
            inserted.append((chain, side))
        yield problem
    finally:
        for chain, side in inserted:
            _iptables("-D", *_rule(chain, side, tag))
