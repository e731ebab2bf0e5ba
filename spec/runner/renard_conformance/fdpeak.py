"""The highest descriptor count of some processes, sampled every millisecond by a process of
its own: a thread of the suite shares the interpreter lock with the client whose load it
measures, and reads too seldom to see a burst the server holds for a few milliseconds.

    python -m renard_conformance.fdpeak PID...

prints `sampling` once it has read the count, then samples until its standard input closes
(so it never outlives its caller), then prints the highest sum it read.
"""

from __future__ import annotations

import os
import select
import sys

EVERY_S = 0.001


def fd_count(pids: list[int]) -> int:
    """Open descriptors of pids now, summed (a process gone counts 0)."""
    total = 0
    for pid in pids:
        try:
            total += len(os.listdir(f"/proc/{pid}/fd"))
        except OSError:
            pass
    return total


def main(argv: list[str]) -> int:
    pids = [int(arg) for arg in argv]
    peak = fd_count(pids)
    print("sampling", flush=True)
    while not select.select([sys.stdin], [], [], EVERY_S)[0]:
        peak = max(peak, fd_count(pids))
    print(peak, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
