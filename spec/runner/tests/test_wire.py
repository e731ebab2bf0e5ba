"""The suite's client connection against real sockets: what it reads does not depend on how
late its caller comes to read it."""

import select
import socket
import time

import pytest

from renard_conformance import wire


@pytest.fixture
def connected():
    """(the client's wire.Connection, the server's side of it) on loopback."""
    with socket.create_server(("127.0.0.1", 0)) as listener:
        conn = wire.Connection.open("127.0.0.1", listener.getsockname()[1])
        server_side, _ = listener.accept()
        try:
            yield conn, server_side
        finally:
            server_side.close()
            conn.close()


def test_an_eof_that_came_before_the_deadline_is_seen_by_a_caller_that_comes_after_it(connected):
    conn, server_side = connected
    server_side.close()
    assert select.select([conn.sock], [], [], 10)[0], "the close did not arrive within 10 s"
    conn.wait_eof(time.monotonic() - 1)  # its deadline passed while the caller was busy
    assert conn.closed and conn.received == b""


def test_an_open_connection_past_its_deadline_is_left_open_at_once(connected):
    conn, _ = connected
    began = time.monotonic()
    conn.wait_eof(began - 1)
    assert not conn.closed and time.monotonic() - began < 5  # one read that waits for nothing
