"""The raw client of the counts (load/raw.py): answers split by the runner's wire parser, a
wrong one stops the count, a server that closes a kept connection gets a new one."""

import socket
import threading
import time

import pytest

from arena.load.driver import LoadError
from arena.load.raw import REQUEST, Client, answers_in


def test_answers_are_split_by_content_length_or_chunked_body():
    buffer = bytearray(
        b"HTTP/1.1 302 Found\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
        b"HTTP/1.1 302 Found\r\nContent-Length: 2\r\n\r\nok"
        b"HTTP/1.1 302 Found\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n"
    )
    assert answers_in(buffer) == 2  # the third's body has not all arrived
    buffer += b"\r\n"
    assert answers_in(buffer) == 1 and buffer == bytearray()


def test_a_head_cut_in_its_middle_waits_for_the_rest():
    buffer = bytearray(b"HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\nHTTP/1.1 302 Found\r\nContent-Len")
    assert answers_in(buffer) == 1 and buffer == bytearray(b"HTTP/1.1 302 Found\r\nContent-Len")


def test_an_answer_other_than_a_302_stops_the_count():
    with pytest.raises(LoadError, match="404 Not Found, not a 302"):
        answers_in(bytearray(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"))


def test_an_answer_that_is_not_http_stops_the_count():
    with pytest.raises(LoadError, match="not HTTP/1.1: bad status line"):
        answers_in(bytearray(b"HTTP/1.1 302\r\n\r\n"))


def serve(answers_per_connection: int, connections: int) -> int:
    """A server on loopback that answers each request with a 302 and closes each connection
    after `answers_per_connection` answers; its port. It ends after `connections`."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)

    def run():
        with listener:
            for _ in range(connections):
                conn, _ = listener.accept()
                with conn:
                    got = b""
                    for _ in range(answers_per_connection):
                        while REQUEST not in got:
                            got += conn.recv(4096)
                        got = got.replace(REQUEST, b"", 1)
                        conn.sendall(b"HTTP/1.1 302 Found\r\nLocation: /1\r\nContent-Length: 0\r\n\r\n")

    threading.Thread(target=run, daemon=True).start()
    return listener.getsockname()[1]


def test_a_kept_connection_closed_by_the_server_is_opened_again_and_counted():
    port = serve(answers_per_connection=3, connections=2)
    deadline = time.monotonic() + 10
    client = Client(port, 1, False, deadline)
    try:
        client.send(5, deadline)
    finally:
        client.close()
    assert client.reconnects == 1
