"""One worker process (SPEC §7.5, §7.6): its event loop, its listener, its connections,
the once-a-second timer (Date line and deadlines), eviction at the cap, and the drain.

The cap counts connections across every worker (`counter`); eviction chooses among this
worker's own connections, as SPEC §7.5 allows.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import socket
import time
from collections.abc import Callable

from .config import Config
from .connection import CLOSING, LINGERING, OPEN, Connection
from .response import Responses

try:
    import uvloop
except ImportError:  # the standard loop serves
    uvloop = None

SHUTDOWN_SIGNALS = {signal.SIGTERM, signal.SIGINT}
TICK_OFFSET = 0.001  # the timer runs this long after each whole wall-clock second
MAX_QUEUED = 65536  # the longest listen queue Linux allows (somaxconn at most 65535)
# Longest wait, at the drain, for the other workers' listeners to close. Measured beside the
# flake campaign's busy loops and tests, --threads 2: the first worker waited at most 5.1 ms
# (30 drains of the suite's drain under load) and every listener closed within 29.1 ms of
# the signal (20 drains, 8 keep-alive clients), a margin of 7 times that.
LISTENERS_WAIT_S = 0.25


class LocalCounter:
    """Open connections of a single worker."""

    def __init__(self):
        self.value = 0

    def add(self, delta: int) -> int:
        self.value += delta
        return self.value


class SharedCounter:
    """Open connections across worker processes: shared memory and a lock, made before
    the fork."""

    def __init__(self):
        import multiprocessing

        self.shared = multiprocessing.RawValue("q", 0)
        self.lock = multiprocessing.Lock()

    def add(self, delta: int) -> int:
        with self.lock:
            self.shared.value += delta
            return self.shared.value


class Worker:
    def __init__(self, config: Config, counter,
                 on_shutdown: Callable[[], None] | None = None, listening=None):
        self.config = config
        if listening is None:  # a lone worker: only its own listener
            listening = LocalCounter()
            listening.add(1)
        self.listening = listening  # workers whose listener is still open: see close_listener
        self.responses = Responses(config.location, config.count, time.time())
        self.max_response = self.responses.max_response
        self.count = config.count
        self.getrandbits = random.Random().getrandbits  # seeded from os.urandom (SPEC §3)
        self.counter = counter
        self.on_shutdown = on_shutdown
        self.shutting_down = False
        self.conns: set[Connection] = set()
        # Eviction candidates (SPEC §7.5), oldest first; dicts keep insertion order.
        self.lingering_conns: dict[Connection, None] = {}
        self.partial_conns: dict[Connection, None] = {}
        self.idle_conns: dict[Connection, None] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.server: asyncio.Server | None = None
        self.drain_ends: float | None = None
        # Accepted (the protocol made) but not yet opened: the loop runs connection_made a
        # turn or more later, and the drain must not end with one of them pending.
        self.opening = 0

    def draw(self) -> int:
        """k uniform in 1..N: a 64-bit draw mod N (bias below 2**-44 for N <= 10**6)."""
        return self.getrandbits(64) % self.count + 1

    # --- running -------------------------------------------------------------------------

    def run(self, sock, loop: asyncio.AbstractEventLoop) -> None:
        """Serve on the listening `sock` until the drain ends."""
        self.loop = loop
        self.sock = sock
        self.factory = self.new_connection
        self.server = loop.run_until_complete(
            loop.create_server(self.factory, sock=sock, backlog=4096))
        for signum in SHUTDOWN_SIGNALS:
            loop.add_signal_handler(signum, self.shutdown)
        # Blocked since start-up (a signal sent before now waits); unblocked once the loop
        # runs, since uvloop only watches for signals inside run_forever.
        loop.call_soon(signal.pthread_sigmask, signal.SIG_UNBLOCK, SHUTDOWN_SIGNALS)
        self._schedule_tick()
        loop.run_forever()

    def _schedule_tick(self) -> None:
        delay = 1.0 - time.time() % 1.0 + TICK_OFFSET
        self.loop.call_later(delay, self.tick)

    def tick(self) -> None:
        """Once a second: the Date line, then every deadline (SPEC §7.4, §7.5)."""
        self.responses.set_date(time.time())
        now = time.monotonic()
        config = self.config
        for conn in list(self.conns):
            unsent = conn.unsent()
            if unsent != conn.last_unsent:
                if unsent < conn.last_unsent:
                    conn.last_progress = now
                conn.last_unsent = unsent
            if unsent or conn.paused:
                if now >= conn.last_progress + config.idle_timeout:
                    self.drop(conn)
            elif conn.phase == LINGERING:
                if now >= conn.linger_until:
                    self.drop(conn)
            elif conn.phase == OPEN:
                started = conn.head_started
                idle_end = conn.last_progress + config.idle_timeout
                if started is not None and conn.held:
                    if now >= started + config.header_timeout:
                        conn.time_out()
                elif now >= (idle_end if started is None
                             else min(idle_end, started + config.header_timeout)):
                    self.drop(conn)
        self._schedule_tick()

    def drop(self, conn: Connection) -> None:
        """Close at once, without a response."""
        self.not_a_candidate(conn)
        conn.phase = CLOSING
        conn.transport.abort()

    # --- connections (called by Connection) ----------------------------------------------

    def new_connection(self) -> Connection:
        """The protocol factory: one Connection per accepted socket."""
        self.opening += 1
        return Connection(self)

    def opened(self, conn: Connection) -> None:
        self.conns.add(conn)
        if self.opening:  # 0 for a Connection made without the factory (the unit tests)
            self.opening -= 1
        if self.shutting_down and time.monotonic() >= self.drain_ends:
            self.drop(conn)  # the window is over (a queued one, with --drain-timeout 0)
            return
        self.move(conn, self.idle_conns)
        if self.counter.add(1) > self.config.max_connections and not self.evict(conn):
            self.drop(conn)

    def closed(self, conn: Connection) -> None:
        if conn in self.conns:
            self.conns.discard(conn)
            self.counter.add(-1)
        self.not_a_candidate(conn)
        if self.shutting_down and not self.conns and not self.opening:
            self.loop.stop()

    def move(self, conn: Connection, candidates: dict) -> None:
        """Make `conn` the newest of `candidates`."""
        if conn.category is not None:
            del conn.category[conn]
        candidates[conn] = None
        conn.category = candidates

    def waiting_partial(self, conn: Connection) -> None:
        """`conn` has part of a head (or a body) in progress: a candidate after the
        lingering ones, by the time its head began."""
        if conn.category is not self.partial_conns:
            self.move(conn, self.partial_conns)

    def lingering(self, conn: Connection) -> None:
        self.move(conn, self.lingering_conns)

    def not_a_candidate(self, conn: Connection) -> None:
        if conn.category is not None:
            del conn.category[conn]
            conn.category = None

    def evict(self, newcomer: Connection) -> bool:
        """Make room at the cap (SPEC §7.5): close the connection least likely to be a
        client: lingering, then the oldest partial head, then the longest idle."""
        for candidates in (self.lingering_conns, self.partial_conns, self.idle_conns):
            for conn in candidates:
                if conn is not newcomer and conn.evictable():
                    self.drop(conn)
                    return True
        return False

    # --- shutdown (SPEC §7.6) ------------------------------------------------------------

    def shutdown(self) -> None:
        """SIGTERM/SIGINT: stop listening, answer with `Connection: close` for the drain
        window, then close what is idle or incomplete; stop once no connection is left,
        and within the window plus one second at the latest."""
        if self.shutting_down:
            return
        self.shutting_down = True
        if self.on_shutdown is not None:
            self.on_shutdown()
        self.close_listener()
        window = min(self.config.drain_timeout, self.config.header_timeout)
        self.drain_ends = time.monotonic() + window
        self.loop.call_later(window, self.end_drain)
        self.loop.call_later(window + 0.9, self.loop.stop)
        if not self.conns and not self.opening:
            self.loop.stop()

    def close_listener(self) -> None:
        """SPEC §7.6 across workers: take what the kernel queued on this worker's listener
        (served with `Connection: close`), make the listener refuse at once (shutdown: the
        loop's own close takes effect only at its next turn), and wait, at most
        LISTENERS_WAIT_S, until every worker has done the same before answering anything: a
        client told to close must not reconnect to a sibling that has not seen the signal."""
        with contextlib.suppress(OSError):  # BlockingIOError: the queue is empty
            for _ in range(MAX_QUEUED):
                conn, _ = self.sock.accept()
                conn.setblocking(False)
                self.loop.create_task(self.loop.connect_accepted_socket(self.factory, conn))
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RD)
        self.server.close()
        deadline = time.monotonic() + LISTENERS_WAIT_S
        if self.listening.add(-1) > 0:
            while self.listening.add(0) > 0 and time.monotonic() < deadline:
                time.sleep(0.001)

    def end_drain(self) -> None:
        """The window is over: close every connection that is not finishing a response."""
        for conn in list(self.conns):
            if not (conn.paused or conn.unsent()):
                self.drop(conn)


def new_loop() -> asyncio.AbstractEventLoop:
    """uvloop's loop when installed (and RENARD_PY_LOOP is not `asyncio`), else asyncio's."""
    if uvloop is not None and os.environ.get("RENARD_PY_LOOP") != "asyncio":
        return uvloop.new_event_loop()
    return asyncio.new_event_loop()
