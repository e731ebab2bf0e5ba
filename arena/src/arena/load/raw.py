"""The arena's raw HTTP/1.1 client, the load of the counts (`arena instructions`: callgrind,
`arena syscalls`: strace): the same request bytes every time, `per_write` requests per write,
every answer read, parsed strictly and checked a 302 before the next write. Built on the
conformance runner's wire (renard_conformance.wire: its parser, its connection whose every
operation is bounded by a deadline); every loop is bounded in count and time.

Keep-alive: one connection kept between calls of send. Close: a new connection per request
with `Connection: close`, read until the server closes. A server that closes a keep-alive
connection after its last answer (nginx's keepalive_requests) gets a new one, counted in
`reconnects`: its calls are part of that server's cost."""

from __future__ import annotations

import time

from renard_conformance.wire import NEED_MORE, Connection, MalformedResponse, parse_response

from .driver import LoadError

# The same bytes on every run: a Host with the (random) port would change the count, since
# the cost of a search over the head depends on the bytes searched.
REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
CLOSE_REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


def answers_in(buffer: bytearray, at_eof: bool = False) -> int:
    """Removes every complete answer from the front of buffer and returns how many there were;
    one that is not a 302, or not HTTP, raises LoadError (a count of error answers would
    measure the wrong path). at_eof: the server closed, so a body delimited by the close ends."""
    count = 0
    while buffer:
        try:
            parsed = parse_response(bytes(buffer), no_body=False, at_eof=at_eof)
        except MalformedResponse as err:
            raise LoadError(f"the server's answer is not HTTP/1.1: {err}") from None
        if parsed is NEED_MORE:
            break
        answer, used = parsed
        if answer.status != 302:
            raise LoadError(f"the server answered {answer.status} {answer.reason}, not a 302")
        del buffer[:used]
        count += 1
    return count


class Client:
    """Requests on 127.0.0.1:port, per_write to a write (keep-alive), or one per connection (close)."""

    def __init__(self, port: int, per_write: int, close: bool, deadline: float):
        self.port, self.per_write, self.close_each = port, per_write, close
        self.conn: Connection | None = None if close else self._connect(deadline)
        self.reconnects = 0

    def _connect(self, deadline: float) -> Connection:
        try:
            return Connection.open("127.0.0.1", self.port, timeout=max(1.0, min(30.0, deadline - time.monotonic())))
        except OSError as err:
            raise LoadError(f"no connection to port {self.port}: {err}") from None

    def send(self, requests: int, deadline: float) -> None:
        """`requests` requests (a multiple of per_write), every answer read; LoadError on a
        wrong answer, a server that closes a new connection unanswered, or the deadline."""
        if self.close_each:
            for _ in range(requests):
                conn = self._connect(deadline)
                try:
                    if self._exchange(conn, CLOSE_REQUEST, 1, deadline, until_eof=True) < 1:
                        raise LoadError("the server closed the connection without answering")
                finally:
                    conn.close()
            return
        for _ in range(requests // self.per_write):
            answered = self._exchange(self.conn, REQUEST * self.per_write, self.per_write, deadline)
            if answered < self.per_write:  # closed after `answered` answers: once more, anew
                self.conn.close()
                self.reconnects += 1
                self.conn = self._connect(deadline)
                left = self.per_write - answered
                if self._exchange(self.conn, REQUEST * left, left, deadline) < left:
                    raise LoadError("the server closed a new connection without answering")

    @staticmethod
    def _exchange(conn: Connection, data: bytes, want: int, deadline: float, until_eof: bool = False) -> int:
        """Sends data and reads until `want` answers (and the close, if until_eof); returns the
        answers read, fewer when the server closed the connection between two answers."""
        got = 0
        if not conn.send(data, deadline):
            if conn.send_failed.startswith("send timed out"):
                raise LoadError("the server did not take the requests in time")
            return 0  # gone before this write (a reset, a closed pipe)
        while got < want or (until_eof and not conn.closed):
            if time.monotonic() > deadline:
                raise LoadError("the server did not answer in time")
            conn.pump(min(1.0, deadline - time.monotonic()))
            got += answers_in(conn.received, at_eof=conn.closed)
            if conn.closed and got < want:
                if conn.received:
                    raise LoadError("the server closed the connection in the middle of an answer")
                return got
        return got

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
