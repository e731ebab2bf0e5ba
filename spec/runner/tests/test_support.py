"""The suite's reading of a listener's accept queue, against real sockets: a client's connect
completes in the kernel, so what a server does per connection waits for its accept."""

import contextlib
import socket
import threading
import time

import pytest

from renard_conformance.suite.support import accept_queue, wait_accepted


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
