"""One connection (SPEC §6, §7) as an asyncio Protocol: every complete request of one read
answered with one write, bodies discarded as they arrive, persistence, lingering close,
the output bound, and the facts the worker's timer and eviction read.

Clock contract: `head_started`, `last_progress` and `linger_until` are `time.monotonic()`
seconds; the worker's timer compares them once a second (a deadline fires up to 1 s late,
never early, SPEC §7.5).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from collections.abc import Callable
from time import monotonic
from typing import Protocol

from .request import COMPLETE, PARTIAL, REDIRECT, parse
from .response import CLOSE, KEEP_ALIVE, KEEP_OPEN, Responses
from .seed import k_for_hash

OUTPUT_BOUND = 64 * 1024    # most unsent response octets per connection (SPEC §7.5)
LINGER_SECONDS = 2.0        # lingering close: longest wait (SPEC §7.4)
LINGER_BYTES = 64 * 1024    # lingering close: most octets discarded

# Phases of a connection.
OPEN = 0        # reading requests
CLOSING = 1     # a closing response is queued; the socket closes once it is written
LINGERING = 2   # write side shut after the response; input discarded until EOF or a limit


class Owner(Protocol):
    """What a connection needs of the worker that owns it (worker.Worker is one): the
    responses, the draw, the shutdown flag, and the eviction categories it moves between."""

    responses: Responses
    max_response: int                   # octets of the longest response
    shutting_down: bool                 # the drain began: every answer closes (SPEC §7.6)
    getrandbits: Callable[[int], int]
    idle_conns: dict[Connection, None]  # eviction candidates, newest last (SPEC §7.5)

    def draw(self) -> int: ...
    def opened(self, conn: Connection) -> None: ...
    def closed(self, conn: Connection) -> None: ...
    def waiting_partial(self, conn: Connection) -> None: ...
    def lingering(self, conn: Connection) -> None: ...
    def not_a_candidate(self, conn: Connection) -> None: ...


class Connection(asyncio.Protocol):
    __slots__ = ("body_left", "category", "discarded", "head_started", "held", "last_progress",
                 "last_unsent", "linger_until", "paused", "phase", "resume", "transport",
                 "worker", "write_paused")

    def __init__(self, worker: Owner):
        self.worker = worker
        self.transport: asyncio.Transport | None = None
        self.phase = OPEN
        self.held = b""             # a partial head, or input held while output is full
        self.resume: tuple | None = None  # the parser's checkpoint in a held partial head
        self.body_left = 0          # body octets still to discard (SPEC §6)
        self.head_started: float | None = None
        self.last_progress = 0.0
        self.last_unsent = 0
        self.linger_until = 0.0
        self.discarded = 0
        self.paused = False         # reading paused: `held` waits for output room
        self.write_paused = False   # the transport's high-water mark was passed
        self.category: dict | None = None  # the worker's eviction candidates holding it

    # --- asyncio callbacks -------------------------------------------------------------

    def connection_made(self, transport) -> None:
        self.transport = transport
        now = time.monotonic()
        self.head_started = self.last_progress = now
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        transport.set_write_buffer_limits(high=OUTPUT_BOUND - self.worker.max_response)
        self.worker.opened(self)

    def connection_lost(self, exc) -> None:
        self.worker.closed(self)

    def data_received(self, data: bytes) -> None:
        self.last_progress = monotonic()
        if self.phase == OPEN:
            if self.held:
                data = self.held + data
                self.held = b""
            else:
                self.resume = None
            self.serve(data)
        elif self.phase == LINGERING:
            self.discarded += len(data)
            if self.discarded >= LINGER_BYTES:
                self.transport.close()

    def eof_received(self) -> None:
        # The peer can send nothing more: every whole request it sent is answered (reading
        # pauses while answers wait), a partial one never ends. Close once written.
        self.held = b""
        self.phase = CLOSING
        self.worker.not_a_candidate(self)
        return None  # the transport closes itself once its buffer is written

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        if self.paused and self.phase == OPEN:
            self.paused = False
            self.transport.resume_reading()
            held, self.held = self.held, b""
            self.serve(held)

    # --- serving -------------------------------------------------------------------------

    def serve(self, data: bytes) -> None:
        """Answer the requests in `data`, one write per batch; when the output bound stops
        the batch and the socket took the output at once, go on with the rest."""
        while (rest := self.answer(data)) is not None:
            if self.write_paused:  # resume_writing goes on
                self.held = rest
                self.paused = True
                self.transport.pause_reading()
                self.worker.not_a_candidate(self)
                return
            data = rest
        if self.phase == OPEN:
            worker = self.worker
            if self.held or self.body_left:
                worker.waiting_partial(self)
            else:  # the newest idle connection (SPEC §7.5); inline: once per request
                idle = worker.idle_conns
                if self.category is not None:
                    del self.category[self]
                idle[self] = None
                self.category = idle

    def answer(self, data: bytes) -> bytes | None:
        """Answer the requests at the start of `data` with one write; return the input left
        when the output bound stopped them (else None: all consumed, held or closing)."""
        worker = self.worker
        responses = worker.responses
        out = []
        size = at = 0
        end = len(data)
        answered = False
        # Octets of answers the bound still allows (SPEC §7.5). The first answer needs no
        # look at the buffer: the transport reports more than OUTPUT_BOUND - max_response
        # unsent as `write_paused`.
        room = -1 if self.write_paused else None
        resume, self.resume = self.resume, None
        while at < end:
            if self.body_left:
                skip = min(self.body_left, end - at)
                self.body_left -= skip
                at += skip
                if self.body_left:
                    break
                if at == end:
                    break
            if size:
                if room is None:
                    room = (OUTPUT_BOUND - worker.max_response
                            - self.transport.get_write_buffer_size())
                if size > room:
                    self.transport.write(b"".join(out))
                    return data[at:]
            elif room is not None:
                return data[at:]
            outcome, value, after = parse(data, at, resume)
            resume = None
            if outcome == COMPLETE:
                answered = True
                route, seed, head_method, http10, keep_alive, length, chunked, expect = value
                close = worker.shutting_down or not keep_alive or chunked or expect
                persistence = CLOSE if close else KEEP_ALIVE if http10 else KEEP_OPEN
                if route != REDIRECT:
                    response = responses.other(route, head_method, persistence)
                elif seed is not None:
                    response = responses.redirect(k_for_hash(seed, responses.count), True,
                                                  persistence)
                elif persistence == KEEP_OPEN and responses.random_keep_open is not None:
                    response = responses.random_keep_open[worker.getrandbits(64)
                                                          % responses.count + 1]
                else:
                    response = responses.redirect(worker.draw(), False, persistence)
                out.append(response)
                size += len(response)
                at = after
                if close:
                    # A request that asked to close, with nothing after it and no body
                    # to come, leaves the client nothing to send: no lingering.
                    done = (not keep_alive and not chunked and length == 0
                            and not worker.shutting_down and at == end)
                    self.close_after(out, linger=not done)
                    return None
                self.body_left = length
            elif outcome == PARTIAL:
                self.held = data[after:]
                self.resume = value
                break
            else:
                out.append(responses.other(value, False, CLOSE))
                self.close_after(out, linger=True)
                return None
        if out:
            self.transport.write(out[0] if len(out) == 1 else b"".join(out))
        if answered or self.head_started is None:
            self.head_started = monotonic() if self.held else None
        return None

    def close_after(self, out: list, linger: bool) -> None:
        """Write `out`, then close: at once when nothing more can come, else half-close
        and discard input (SPEC §7.4)."""
        self.held = b""
        self.worker.not_a_candidate(self)
        self.transport.write(b"".join(out))
        out.clear()
        if linger and self.transport.can_write_eof():
            self.transport.write_eof()  # after the buffered response
            self.phase = LINGERING
            self.linger_until = time.monotonic() + LINGER_SECONDS
            self.worker.lingering(self)
        else:
            self.phase = CLOSING
            self.transport.close()

    def time_out(self) -> None:
        """The header deadline passed with part of a head received: 408, then close."""
        out = [self.worker.responses.other(408, False, CLOSE)]
        self.close_after(out, linger=True)

    # --- what the worker reads -----------------------------------------------------------

    def unsent(self) -> int:
        return self.transport.get_write_buffer_size()

    def evictable(self) -> bool:
        """Neither a complete request waiting nor response octets unsent (SPEC §7.5)."""
        return not self.paused and self.transport.get_write_buffer_size() == 0
