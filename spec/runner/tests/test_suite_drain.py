"""The suite's own helpers, where a helper's mistake would fail a correct server."""

import socket
import threading

from renard_conformance.suite.test_limits import drain

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
