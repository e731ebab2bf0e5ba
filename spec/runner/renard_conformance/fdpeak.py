"""The highest descriptor count of some processes, sampled every millisecond by a process of
its own: a thread of the suite shares the interpreter lock with the client whose load it
measures, and reads too seldom to see a burst the server holds for a few milliseconds.

    python -m renard_conformance.fdpeak PID...

prints `sampling` once it has read the count, then samples until its standard input closes
(so it never outlives its caller), then prints the highest sum it read.
"""

from __future__ import annotations

import select
import sys

from .launcher import proc_fd_count

EVERY_S = 0.001


def main(argv: list[str]) -> int:
    pids = [int(arg) for arg in argv]
    peak = proc_fd_count(pids)
    print("sampling", flush=True)
    while not select.select([sys.stdin], [], [], EVERY_S)[0]:
        peak = max(peak, proc_fd_count(pids))
    print(peak, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
