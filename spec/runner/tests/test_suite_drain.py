"""The suite's own helpers, where a helper's mistake would fail a correct server."""

import socket
import threading

from renard_conformance.conformance import Target
from renard_conformance.suite.test_limits import connect, drain, handed_over

RESPONSE = b"HTTP/1.1 302 Found\r\nLocation: /x\r\nContent-Length: 0\r\n\r\n"


def test_drain_waits_for_a_status_line_split_after_its_first_octets():
    reader, server = socket.socketpair()
    reader.setblocking(False)
    try:
        server.sendall(RESPONSE + b"HTTP/1.1 ")  # a read can end here, inside the last status line
        later = threading.Timer(0.2, server.sendall, args=(RESPONSE[len(b"HTTP/1.1 ") :],))
        later.start()
        try:
            assert drain(reader, b"", want_responses=2, limit_s=5.0) == (2, 2, "all responses read")
        finally:
            later.join()
    finally:
        reader.close()
        server.close()


def test_drain_reports_a_response_that_is_not_a_redirect():
    reader, server = socket.socketpair()
    reader.setblocking(False)
    try:
        server.sendall(RESPONSE + b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        server.close()
        assert drain(reader, b"", want_responses=2, limit_s=5.0) == (1, 2, "EOF")
    finally:
        reader.close()


def deferring_listener(seconds: int) -> socket.socket:
    """A loopback listener whose kernel holds a silent connection for `seconds` (TCP_DEFER_ACCEPT)."""
    listener = socket.socket()
    listener.setsockopt(socket.IPPROTO_TCP, socket.TCP_DEFER_ACCEPT, seconds)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    return listener


def test_handed_over_passes_a_one_second_deferral_and_fails_a_longer_one():
    for seconds, expected in ((1, True), (8, False)):  # 8 s: the kernel holds it 7 s or more (its retransmits)
        listener = deferring_listener(seconds)
        target = Target("127.0.0.1", listener.getsockname()[1])
        conn = connect(target)
        try:
            assert handed_over(target, conn) is expected, f"TCP_DEFER_ACCEPT {seconds} s"
        finally:
            conn.close()
            listener.close()
