"""Raw HTTP/1.1 on a TCP socket: a strict response parser and a connection that never hangs.

Stdlib only. The parser has three outcomes, as in picohttpparser: a complete response and
the octets it used, NEED_MORE, or MalformedResponse. Every socket operation is bounded by
a deadline (seconds, time.monotonic()).
"""

from __future__ import annotations

import re
import select
import socket
import time
from dataclasses import dataclass, field

NEED_MORE = None
MAX_HEAD_OCTETS = 65536  # a response head longer than this is malformed

STATUS_LINE = re.compile(rb"HTTP/(\d)\.(\d) (\d{3}) ([\t \x21-\x7e\x80-\xff]*)")
FIELD_LINE = re.compile(
    rb"([!#$%&'*+\-.^_`|~0-9A-Za-z]+):[ \t]*((?:[\t \x21-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?)[ \t]*"
)
CHUNK_SIZE_LINE = re.compile(rb"([0-9A-Fa-f]{1,15})(?:;[^\r\n]*)?\r\n")


class MalformedResponse(Exception):
    """The octets received are not an HTTP/1.x response; the message says why."""


@dataclass
class Response:
    version: str  # "HTTP/1.1"
    status: int
    reason: str
    fields: list[tuple[str, str]]  # in order, names as sent
    body: bytes
    raw: bytes  # the octets of the whole response
    framing: str = "content-length"  # "content-length" | "chunked" | "close" | "none"

    def values(self, name: str) -> list[str]:
        """Every value of the field `name` (case-insensitive), in order."""
        wanted = name.lower()
        return [value for key, value in self.fields if key.lower() == wanted]

    def names(self) -> list[str]:
        return [key for key, _ in self.fields]


def escape(data: bytes, limit: int = 200) -> str:
    """The first `limit` octets, printable, with \\r \\n \\xNN escapes (for failure details)."""
    shown = repr(bytes(data[:limit]))[2:-1]
    return shown + ("..." if len(data) > limit else "")


def parse_response(buf: bytes, no_body: bool, at_eof: bool):
    """Parses one response at the start of `buf`.

    no_body: the request was HEAD (the response has no body whatever its fields say).
    at_eof: the peer closed; a body delimited by the close ends here.
    Returns (Response, octets used), or NEED_MORE; raises MalformedResponse.
    """
    head_end = buf.find(b"\r\n\r\n")
    if head_end < 0:
        bare = re.search(rb"(?<!\r)\n", buf[:MAX_HEAD_OCTETS])
        if bare:
            raise MalformedResponse(f"bare LF in the response head at octet {bare.start()}")
        if len(buf) > MAX_HEAD_OCTETS:
            raise MalformedResponse(f"response head longer than {MAX_HEAD_OCTETS} octets")
        if at_eof:
            if buf:
                raise MalformedResponse("connection closed inside a response head")
        return NEED_MORE
    head = buf[:head_end]
    if re.search(rb"(?<!\r)\n|\r(?!\n)", head):
        raise MalformedResponse("bare LF or CR in the response head")
    lines = head.split(b"\r\n")
    status = STATUS_LINE.fullmatch(lines[0])
    if not status:
        raise MalformedResponse(f"bad status line {escape(lines[0], 80)}")
    fields = []
    for line in lines[1:]:
        match = FIELD_LINE.fullmatch(line)
        if not match:
            raise MalformedResponse(f"bad field line {escape(line, 80)}")
        fields.append((match.group(1).decode("ascii"), match.group(2).decode("latin-1")))
    response = Response(
        version=f"HTTP/{status.group(1).decode()}.{status.group(2).decode()}",
        status=int(status.group(3)),
        reason=status.group(4).decode("latin-1"),
        fields=fields,
        body=b"",
        raw=b"",
    )
    start = head_end + 4
    if no_body or response.status in (204, 304) or 100 <= response.status < 200:
        response.framing = "none"
        response.raw = buf[:start]
        return response, start
    codings = response.values("transfer-encoding")
    lengths = response.values("content-length")
    if codings:
        if codings[-1].lower().rsplit(",", 1)[-1].strip() != "chunked":
            return _body_until_close(response, buf, start, at_eof)
        return _chunked_body(response, buf, start, at_eof)
    if lengths:
        if len(lengths) > 1 or not re.fullmatch(r"\d{1,18}", lengths[0]):
            raise MalformedResponse(f"bad Content-Length {lengths!r}")
        end = start + int(lengths[0])
        if len(buf) < end:
            if at_eof:
                raise MalformedResponse(f"connection closed after {len(buf) - start} of {int(lengths[0])} body octets")
            return NEED_MORE
        response.body, response.raw = buf[start:end], buf[:end]
        return response, end
    return _body_until_close(response, buf, start, at_eof)


def _body_until_close(response: Response, buf: bytes, start: int, at_eof: bool):
    """A body delimited by the end of the connection (RFC 9112 §6.3 rule 8)."""
    if not at_eof:
        return NEED_MORE
    response.framing = "close"
    response.body, response.raw = buf[start:], buf
    return response, len(buf)


def _chunked_body(response: Response, buf: bytes, start: int, at_eof: bool):
    """A chunked body (only peers send one); trailers are skipped."""
    position, body = start, bytearray()
    while True:
        size_line = CHUNK_SIZE_LINE.match(buf, position)
        if not size_line:
            if len(buf) - position > 1024 or b"\r\n" in buf[position : position + 1024]:
                raise MalformedResponse("bad chunk-size line")
            return _need_more_or_truncated(at_eof)
        size = int(size_line.group(1), 16)
        position = size_line.end()
        if size == 0:
            trailer_end = buf.find(b"\r\n", position)
            while trailer_end > position:  # skip trailer fields
                position = trailer_end + 2
                trailer_end = buf.find(b"\r\n", position)
            if trailer_end < 0:
                return _need_more_or_truncated(at_eof)
            end = trailer_end + 2
            response.framing = "chunked"
            response.body, response.raw = bytes(body), buf[:end]
            return response, end
        if len(buf) < position + size + 2:
            return _need_more_or_truncated(at_eof)
        if buf[position + size : position + size + 2] != b"\r\n":
            raise MalformedResponse("chunk data not followed by CRLF")
        body += buf[position : position + size]
        position += size + 2


def _need_more_or_truncated(at_eof: bool):
    if at_eof:
        raise MalformedResponse("connection closed inside a chunked body")
    return NEED_MORE


@dataclass
class Connection:
    """One client connection: what was received, and when the server closed."""

    sock: socket.socket
    received: bytearray = field(default_factory=bytearray)
    eof_at: float | None = None  # monotonic time of EOF or reset
    reset: bool = False  # the server reset the connection
    send_failed: str = ""  # why a send failed ("" if none did)

    @classmethod
    def open(cls, host: str, port: int, timeout: float = 5.0) -> Connection:
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.setblocking(False)
        return cls(sock)

    @property
    def closed(self) -> bool:
        return self.eof_at is not None

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass

    def pump(self, timeout: float) -> int:
        """Waits up to `timeout` seconds for data; reads what is there. Returns octets read."""
        if self.closed:
            time.sleep(max(0.0, min(timeout, 0.01)))
            return 0
        if not _ready(self.sock, select.POLLIN, timeout):
            return 0
        return self._read_available()

    def _read_available(self) -> int:
        total = 0
        while True:
            try:
                data = self.sock.recv(65536)
            except BlockingIOError:
                return total
            except OSError:  # ECONNRESET and friends: the server is gone
                self.reset = True
                self.eof_at = time.monotonic()
                return total
            if not data:
                self.eof_at = time.monotonic()
                return total
            self.received += data
            total += len(data)

    def send(self, data: bytes, deadline: float) -> bool:
        """Writes all of `data` while reading whatever arrives (no deadlock with a server
        that answers while we still write). False if the server stopped reading or is gone."""
        view = memoryview(data)
        while view:
            if self.send_failed:
                return False
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.send_failed = f"send timed out with {len(view)} octets unsent"
                return False
            events = select.POLLOUT if self.closed else select.POLLOUT | select.POLLIN
            ready = _ready(self.sock, events, remaining)
            if not self.closed and ready & (select.POLLIN | select.POLLHUP | select.POLLERR):
                self._read_available()
            if ready & (select.POLLOUT | select.POLLHUP | select.POLLERR):
                try:
                    sent = self.sock.send(view[:65536])
                except BlockingIOError:
                    continue
                except OSError as error:
                    self.send_failed = f"send failed: {error.strerror or error}"
                    return False
                view = view[sent:]
        return True

    def wait_eof(self, deadline: float) -> None:
        """Reads until EOF or the deadline, and at least once: an EOF that came before the
        deadline is seen by a caller that comes to it late (a test scheduled late, or busy with
        other connections until then)."""
        while True:
            self.pump(max(0.0, deadline - time.monotonic()))
            if self.closed or time.monotonic() >= deadline:
                return


def _ready(sock: socket.socket, events: int, timeout: float) -> int:
    """The poll events of sock among `events` (plus hang-up and error) within timeout seconds;
    0 if none. poll, not select: a test may hold thousands of descriptors."""
    poller = select.poll()
    poller.register(sock, events)
    ready = poller.poll(max(0.0, timeout) * 1000)
    return ready[0][1] if ready else 0
