"""The load `arena syscalls` (syscalls.py) puts on a server while strace counts: the arena's own
HTTP/1.1 client, in the arena's mode names: `keepalive` (one connection, one request per round
trip), `pipeline16` (16 requests per write, all 16 answers read before the next write),
`close` (a new connection per request, read until the server closes). Every answer must be
a 302; every wait is bounded in time, every loop in count."""

from __future__ import annotations

import socket
import time

from .instructions import REQUEST
from .strace import CountError

MODES = {"keepalive": 1, "pipeline16": 16, "close": 1}  # mode -> requests per write
WARMUP_REQUESTS = 2000  # sequential keep-alive requests before counting (and warmup_s seconds)
CLOSE_REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


class Closed(Exception):
    """The server closed a keep-alive connection after `answered` answers of a write."""

    def __init__(self, answered: int):
        super().__init__(f"closed after {answered} answers")
        self.answered = answered


def _body_end(buffer: bytearray, start: int, head: bytes) -> int | None:
    """Where the body that begins at `start` ends (Content-Length, or chunked as nginx sends
    php-fpm's answers), None when it has not all arrived."""
    lines = [line.partition(b":") for line in head.split(b"\r\n")[1:]]
    fields = {name.strip().lower(): value.strip().lower() for name, _, value in lines}
    if fields.get(b"transfer-encoding") == b"chunked":
        at = start
        while True:
            eol = buffer.find(b"\r\n", at)
            if eol < 0:
                return None
            size = int(bytes(buffer[at:eol]).split(b";")[0], 16)
            at = eol + 2 + size + 2
            if len(buffer) < at:
                return None
            if size == 0:
                return at  # no trailers: a 302's empty chunked body ends "0\r\n\r\n"
    end = start + int(fields.get(b"content-length", b"0"))
    return end if len(buffer) >= end else None


def answers_in(buffer: bytearray) -> int:
    """Removes every complete answer from the front of buffer and returns how many; one that
    is not a 302 raises CountError (a count of error answers would measure the wrong path)."""
    count = 0
    while (head_end := buffer.find(b"\r\n\r\n")) >= 0:
        head = bytes(buffer[:head_end])
        end = _body_end(buffer, head_end + 4, head)
        if end is None:
            break
        if not head.startswith(b"HTTP/1.1 302 "):
            status = head.split(b"\r\n")[0]
            raise CountError(f"the server answered {status!r}, not a 302")
        del buffer[:end]
        count += 1
    return count


def _read_answers(conn: socket.socket, buffer: bytearray, want: int, deadline: float) -> None:
    got = 0
    while got < want:
        if time.monotonic() > deadline:
            raise CountError("the server did not answer in time under strace")
        try:
            data = conn.recv(65536)
        except ConnectionResetError:
            data = b""
        if not data:
            if buffer:
                raise CountError("the server closed a keep-alive connection in the middle of an answer")
            raise Closed(got)
        buffer += data
        got += answers_in(buffer)


def _connect(port: int, deadline: float) -> socket.socket:
    conn = socket.create_connection(("127.0.0.1", port), timeout=max(1.0, min(30.0, deadline - time.monotonic())))
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return conn


def _close_request(port: int, deadline: float) -> None:
    """One request on its own connection, read until the server closes it."""
    with _connect(port, deadline) as conn:
        conn.sendall(CLOSE_REQUEST)
        got = bytearray()
        while True:
            if time.monotonic() > deadline:
                raise CountError("the server did not answer in time under strace")
            data = conn.recv(65536)
            if not data:
                break
            got += data
    if not got.startswith(b"HTTP/1.1 302 "):
        raise CountError(f"the server answered {bytes(got[:40])!r}, not a 302")


class Client:
    """The load of one mode on a server; keep-alive modes keep one connection open between
    windows (opened and checked with one request before the first). A server that closes a
    keep-alive connection after its last answer (nginx's keepalive_requests) gets a new one,
    counted in `reconnects`: its calls are part of that server's cost."""

    def __init__(self, port: int, mode: str, deadline: float):
        self.port, self.mode, self.per_write = port, mode, MODES[mode]
        self.conn = None
        self.reconnects = 0
        self.buffer = bytearray()
        if mode != "close":
            self.conn = _connect(port, deadline)
            self.send(self.per_write, deadline)

    def send(self, requests: int, deadline: float) -> None:
        """`requests` requests (a multiple of the mode's per write), every answer read."""
        if self.conn is None:
            for _ in range(requests):
                _close_request(self.port, deadline)
            return
        batch = REQUEST * self.per_write
        for _ in range(requests // self.per_write):
            try:
                self.conn.sendall(batch)
                _read_answers(self.conn, self.buffer, self.per_write, deadline)
            except (Closed, BrokenPipeError, ConnectionResetError) as closed:
                left = self.per_write - (closed.answered if isinstance(closed, Closed) else 0)
                self.conn.close()
                self.reconnects += 1
                self.conn = _connect(self.port, deadline)
                self.conn.sendall(REQUEST * left)
                try:
                    _read_answers(self.conn, self.buffer, left, deadline)
                except Closed:
                    raise CountError("the server closed a new connection without answering") from None

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()


def warm_up(port: int, seconds: float, requests: int = WARMUP_REQUESTS) -> None:
    """At least `requests` sequential keep-alive requests, and on for `seconds` (a JIT's
    warmup_s), with a few of each other mode's shape; bounded by seconds + 60 s."""
    end = time.monotonic() + seconds
    deadline = end + 60.0
    client = Client(port, "keepalive", deadline)
    try:
        done = 0
        while done < requests or time.monotonic() < end:
            client.send(100, deadline)
            done += 100
    finally:
        client.close()
    Client(port, "pipeline16", deadline).close()
    Client(port, "close", deadline).send(20, deadline)
