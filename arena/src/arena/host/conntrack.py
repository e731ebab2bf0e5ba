"""The kernel's connection-tracking table, which a close-mode sample can fill.

Where NAT or stateful firewall rules are loaded (podman's netavark rules, as `make test`'s
deploy tests load them), netfilter tracks every connection, loopback included, and keeps a
closed one for nf_conntrack_tcp_timeout_time_wait (120 s). wrk in a close mode opens
10 000-15 000 connections a second: the table (nf_conntrack_max, 262 144 here) is full
after about 20 s of such load, and from then on the kernel drops new connections' SYNs
("nf_conntrack: table full, dropping packet"): a fresh server's first connect times out
and wrk measures a few requests a second. Neither is the entry's doing.

The bench waits, before a sample, until the table has room for the connections the sample
will open (wait_for_room), and fails a sample during which the kernel dropped packets for
want of room (drops()).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

PROC = Path("/proc/sys/net/netfilter")
STAT = Path("/proc/net/stat/nf_conntrack")
FULL = 0.95  # of nf_conntrack_max: a sample starts when it will not fill the table beyond this
CONNECTS_PER_S = 15_000  # the most wrk opened per second in a close mode here (servers/c, 2 cores)
FEW = 1_000  # what a keep-alive or pipelined sample opens: its 50 connections, the checks
TIME_WAIT_S = 120.0  # the kernel's default hold of a closed connection, when unreadable


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def usage() -> tuple[int, int] | None:
    """(entries tracked now, nf_conntrack_max); None where connection tracking is not loaded."""
    count, limit = _read_int(PROC / "nf_conntrack_count"), _read_int(PROC / "nf_conntrack_max")
    return None if count is None or not limit else (count, limit)


def drops() -> int | None:
    """Packets dropped since boot because the table was full (the `drop` column of
    /proc/net/stat/nf_conntrack, one hexadecimal line per CPU, summed); None: not loaded."""
    try:
        header, *lines = STAT.read_text().splitlines()
        column = header.split().index("drop")
        return sum(int(line.split()[column], 16) for line in lines)
    except (OSError, ValueError, IndexError):
        return None


def needed(connects_per_request: bool, seconds: float) -> int:
    """The entries a sample adds: CONNECTS_PER_S for each second of load (warm-up included)
    in a close mode, FEW otherwise."""
    return round(CONNECTS_PER_S * seconds) if connects_per_request else FEW


def has_room(now: tuple[int, int] | None, entries: int) -> bool:
    """Room for `entries` more within FULL of the table; a sample that would need more than half
    of it (a JVM peer's long close-mode warm-up, which runs far below CONNECTS_PER_S) waits
    for half."""
    return now is None or now[0] + min(entries, now[1] // 2) <= FULL * now[1]


def wait_for_room(say: Callable[[str], None], entries: int, sleep=time.sleep) -> float:
    """Waits until the table has room for `entries` more (up to FULL of nf_conntrack_max), at
    most the time a closed connection is held (the entries that fill it expire by then);
    returns the seconds waited."""
    now = usage()
    if has_room(now, entries):
        return 0.0
    hold = _read_int(PROC / "nf_conntrack_tcp_timeout_time_wait") or TIME_WAIT_S
    say(
        f"the kernel's connection-tracking table holds {now[0]:,} of {now[1]:,} entries "
        f"(closed connections are kept {hold:g} s): waiting for room for the next sample's {entries:,}"
    )
    began = time.monotonic()
    while time.monotonic() - began < hold + 5:
        sleep(1.0)
        now = usage()
        if has_room(now, entries):
            break
    return time.monotonic() - began
