"""The suite's reading of a listener's accept queue, against real sockets: a client's connect
completes in the kernel, so what a server does per connection waits for its accept."""

import contextlib
import signal
import socket
import sys
import threading
import time

import pytest

from renard_conformance.launcher import ServerProcess
from renard_conformance.suite.support import accept_queue, exit_within, fds_back_late, wait_accepted


@pytest.fixture
def listener():
    """A listening socket on loopback that nothing accepts from unless a test does."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    try:
        yield sock
    finally:
        sock.close()


@contextlib.contextmanager
def clients(port: int, count: int):
    socks = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(count)]
    try:
        yield socks
    finally:
        for sock in socks:
            sock.close()


def accept(listener: socket.socket, count: int) -> None:
    for _ in range(count):
        listener.accept()[0].close()


def test_accept_queue_counts_connections_completed_and_not_yet_accepted(listener):
    port = listener.getsockname()[1]
    assert accept_queue(port) == 0
    with clients(port, 20):
        assert accept_queue(port) == 20
        accept(listener, 5)
        assert accept_queue(port) == 15


def test_connections_their_clients_closed_stay_queued_until_the_server_accepts_them(listener):
    port = listener.getsockname()[1]
    with clients(port, 10):
        pass
    assert accept_queue(port) == 10
    accept(listener, 10)
    assert accept_queue(port) == 0


def test_wait_accepted_returns_once_a_late_server_has_accepted_its_queue(listener):
    port = listener.getsockname()[1]
    with clients(port, 10):
        late = threading.Timer(0.3, accept, (listener, 10))
        late.start()
        try:
            left, waited_s = wait_accepted(port, within_s=10)
        finally:
            late.join()
    assert left == 0
    assert 0.3 <= waited_s < 10


def test_wait_accepted_reports_the_connections_a_server_never_accepts(listener):
    port = listener.getsockname()[1]
    with clients(port, 10):
        began = time.monotonic()
        left, waited_s = wait_accepted(port, within_s=0.3)
    assert left == 10
    assert waited_s >= 0.3 and time.monotonic() - began >= 0.3


# A stand-in server: opens 3 pipes (6 descriptors), says it listens, keeps them argv[1] seconds
# (forever when negative), and exits argv[2] seconds after a SIGTERM.
STAND_IN = """
import os, signal, sys, time
hold_s, exit_s = float(sys.argv[1]), float(sys.argv[2])
signal.signal(signal.SIGTERM, lambda *_: (time.sleep(exit_s), sys.exit(0)))
pipes = [os.pipe() for _ in range(3)]
print("listening on http://127.0.0.1:1", file=sys.stderr, flush=True)
if hold_s >= 0:
    time.sleep(hold_s)
    for r, w in pipes:
        os.close(r), os.close(w)
time.sleep(60)
"""


@contextlib.contextmanager
def stand_in(hold_s: float, exit_s: float = 0.0):
    server = ServerProcess([sys.executable, "-c", STAND_IN, str(hold_s), str(exit_s)])
    server.start().wait_ready(10)
    try:
        yield server
    finally:
        server.stop(grace_s=0.1, group=True)


def test_descriptors_given_back_late_are_said_to_be_closed_late_not_kept():
    with stand_in(hold_s=1.5) as server:
        baseline = server.settled_fd_count(0.5) - 6
        said = fds_back_late(server, baseline, read_on_s=5.0)
    assert said.startswith(f"back to {baseline} "), said
    assert "closed late, not kept" in said and "pipe" in said, said


def test_descriptors_never_given_back_are_said_to_be_kept_a_leak():
    with stand_in(hold_s=-1) as server:
        baseline = server.settled_fd_count(0.5) - 6
        said = fds_back_late(server, baseline, read_on_s=0.5)
    assert said.startswith(f"still {baseline + 6} "), said
    assert "kept, a leak" in said and " pipe" in said, said


@pytest.mark.parametrize(
    ("exit_s", "read_on_s", "said"),
    [(1.0, 5.0, "exited late, status 0, 1."), (30.0, 0.3, "still running 0.5 s")],
    ids=["an-exit-past-its-deadline-is-said-with-when-it-came", "a-server-that-never-exits-is-said-to-be-running"],
)
def test_a_missed_exit_deadline_says_what_came_after(exit_s, read_on_s, said):
    with stand_in(hold_s=-1, exit_s=exit_s) as server:
        signalled_at = time.monotonic()
        server.signal(signal.SIGTERM)
        status, late = exit_within(server, signalled_at, 0.2, read_on_s=read_on_s)
    assert status is None and late.startswith(said), late
