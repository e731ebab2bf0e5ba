"""The launcher's readings of a server's resources, against a process whose memory is known."""

import os
import signal
import sys
import time

from renard_conformance.launcher import ServerProcess

HELD_MIB = 64

# Writes 64 MiB (resident), says so, holds it for `hold` seconds, then frees it (a bytearray
# this large is its own mapping: freeing it returns the pages at once), then lives on.
HOLDER = f"""
import sys, time
held = bytearray(b"x" * ({HELD_MIB} << 20))
print("held", file=sys.stderr, flush=True)
time.sleep(float(sys.argv[1]))
del held
time.sleep(60)
"""


def said(server: ServerProcess, line: str, within_s: float = 30) -> bool:
    """Whether the process writes `line` on stderr within within_s (polled every 10 ms)."""
    deadline = time.monotonic() + within_s
    while line not in server.stderr_tail and time.monotonic() < deadline:
        time.sleep(0.01)
    return line in server.stderr_tail


def holder(hold_s: float) -> ServerProcess:
    server = ServerProcess([sys.executable, "-c", HOLDER, str(hold_s)]).start()
    assert said(server, "held"), "the holder never held its memory"
    return server


def test_wait_rss_kib_returns_once_memory_freed_after_the_load_is_back_under_the_bound():
    server = holder(hold_s=1.0)
    try:
        held = server.rss_kib()
        bound = held - HELD_MIB * 1024 // 2
        assert server.wait_rss_kib(bound, timeout_s=30) <= bound
    finally:
        server.stop()


def test_wait_rss_kib_reports_memory_that_is_kept_past_its_timeout():
    server = holder(hold_s=60.0)
    try:
        held = server.rss_kib()
        bound = held - HELD_MIB * 1024 // 2
        began = time.monotonic()
        assert server.wait_rss_kib(bound, timeout_s=1.0) > bound
        assert time.monotonic() - began >= 1.0
    finally:
        server.stop()


BURST = 300

# Says it is ready; at SIGUSR1 opens BURST descriptors, holds them for 20 ms, closes them,
# says so, and lives on.
BURSTER = f"""
import os, signal, sys, time
signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGUSR1}})
print("ready", file=sys.stderr, flush=True)
signal.sigwait({{signal.SIGUSR1}})
held = [os.open("/dev/null", os.O_RDONLY) for _ in range({BURST})]
time.sleep(0.02)
for fd in held:
    os.close(fd)
print("burst over", file=sys.stderr, flush=True)
time.sleep(60)
"""


def test_peak_fd_count_sees_descriptors_held_for_20_ms_that_a_read_after_does_not():
    server = ServerProcess([sys.executable, "-c", BURSTER]).start()
    try:
        assert said(server, "ready"), "the burster never started"
        with server.peak_fd_count() as peak:
            os.kill(server.process.pid, signal.SIGUSR1)
            burst = said(server, "burst over")
        assert burst, "the burster never burst"
        after = server.fd_count()
        assert after < BURST
        assert peak[0] >= after + BURST
    finally:
        server.stop()
