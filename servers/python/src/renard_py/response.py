"""Response bytes (SPEC §4). Every part that does not change is rendered once: the status
line and `Location` per k (when N is small), the fixed fields of every other status, and
the `Date` line once per second, when the whole unseeded keep-alive 302 per k is rendered
again, so that the common answer is one list lookup."""

from __future__ import annotations

import time

from .request import HEALTH, METHOD_NOT_ALLOWED, NOT_FOUND

# Persistence (SPEC §4, §7): which `Connection` field follows `Content-Length`.
KEEP_OPEN, KEEP_ALIVE, CLOSE = 0, 1, 2

# Most k whose 302 head is rendered ahead of time (above: rendered per answer).
PRERENDER_MAX_COUNT = 4096
PRERENDER_MAX_BYTES = 1 << 20

_REDIRECT_START = b"HTTP/1.1 302 Found\r\nLocation: "
_NO_STORE = b"Cache-Control: no-store\r\n"
_CACHEABLE = b"Cache-Control: public, max-age=86400\r\n"
_TAILS = (b"\r\n", b"Connection: keep-alive\r\n\r\n", b"Connection: close\r\n\r\n")
_STATUS_LINES = {
    HEALTH: b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nCache-Control: no-store\r\n",
    NOT_FOUND: b"HTTP/1.1 404 Not Found\r\n",
    METHOD_NOT_ALLOWED: b"HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\n",
    400: b"HTTP/1.1 400 Bad Request\r\n",
    408: b"HTTP/1.1 408 Request Timeout\r\n",
    414: b"HTTP/1.1 414 URI Too Long\r\n",
    431: b"HTTP/1.1 431 Request Header Fields Too Large\r\n",
    501: b"HTTP/1.1 501 Not Implemented\r\n",
    505: b"HTTP/1.1 505 HTTP Version Not Supported\r\n",
}


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def date_line(epoch_seconds: float) -> bytes:
    """`Date: <IMF-fixdate>\\r\\n` (RFC 9110 §5.6.7) for the whole second; English names
    whatever the locale."""
    t = time.gmtime(epoch_seconds)
    return (f"Date: {_DAYS[t.tm_wday]}, {t.tm_mday:02d} {_MONTHS[t.tm_mon - 1]} {t.tm_year} "
            f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d} GMT\r\n").encode()


class Responses:
    """Renders every answer of one worker; `set_date` once a second."""

    def __init__(self, template: bytes, count: int, now: float):
        self.pieces = template.split(b"{n}")
        self.count = count
        per_k = len(_REDIRECT_START) + len(template) + 16
        self.heads: list[bytes] | None = None
        if count <= PRERENDER_MAX_COUNT and per_k * count <= PRERENDER_MAX_BYTES:
            self.heads = [b""] + [self._render_head(k) for k in range(1, count + 1)]
        # Longest response of any status, in octets (the output bound needs it, SPEC §7.5).
        self.max_response = (len(_REDIRECT_START) + len(template) + 7 * (len(self.pieces) - 1)
                             + 2 + 192)
        self.date = b""
        self.random_keep_open: list[bytes] | None = None
        self.set_date(now)

    def _render_head(self, k: int) -> bytes:
        return _REDIRECT_START + str(k).encode().join(self.pieces) + b"\r\n"

    def set_date(self, now: float) -> None:
        """Show the second of `now` (epoch seconds) in every later response."""
        self.date = date_line(now)
        if self.heads is not None:
            tail = _NO_STORE + self.date + b"Content-Length: 0\r\n\r\n"
            self.random_keep_open = [head + tail for head in self.heads]

    def redirect(self, k: int, seeded: bool, persistence: int) -> bytes:
        """The 302 to k (1..N); `seeded` selects the cache policy (SPEC §3)."""
        if not seeded and persistence == KEEP_OPEN and self.random_keep_open is not None:
            return self.random_keep_open[k]
        head = self.heads[k] if self.heads is not None else self._render_head(k)
        return b"".join((head, _CACHEABLE if seeded else _NO_STORE, self.date,
                         b"Content-Length: 0\r\n", _TAILS[persistence]))

    def other(self, status: int, head_method: bool, persistence: int) -> bytes:
        """A response without `Location`: HEALTH, NOT_FOUND, METHOD_NOT_ALLOWED (route
        codes) or an error status (400, 408, 414, 431, 501, 505)."""
        if status == HEALTH:
            return b"".join((_STATUS_LINES[HEALTH], self.date, b"Content-Length: 3\r\n",
                             _TAILS[persistence], b"" if head_method else b"ok\n"))
        return b"".join((_STATUS_LINES[status], self.date, b"Content-Length: 0\r\n",
                         _TAILS[persistence]))
