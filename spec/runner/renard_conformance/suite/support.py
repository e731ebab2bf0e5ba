"""What the limit and robustness tests share: their own servers, started from --renard-cmd
with some flags replaced, and small deadline-bounded client operations.

Every socket operation has a deadline and every loop is bounded in count and time. The
tests assert behaviour, not speed (except where the issue states a latency: eviction): the
waits are generous, for a slow, busy 2-core machine.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import os
import re
import resource
import select
import socket
import time

from .. import wire
from ..launcher import argv_with, at_most_within
from ..pytest_plugin import server_process, start_ready, target_of

ANSWER_WAIT_S = 5.0  # a request the server should answer: generous on a busy machine
CLOSE_WAIT_S = 3.0  # "closed at once": EOF or reset within this
LATE_S = 1.5  # SPEC §7.5: a timeout may fire up to 1 s late (+0.5 s for us)
SETTLE_S = 10.0  # descriptors back to baseline within this after the load ends
# Every connection of a load accepted within this after it ends (the defect: a server that has
# stopped accepting never empties its queue). Quiet, every renard's two floods had it empty
# 0.11 to 0.67 s after each round (read every 0.05 s); held to 2% of a core by a CPU cgroup,
# the C renard took 2.75 to 5.91 s after each round of the small-cap flood (24 rounds): 30 s
# is five times the slowest.
ACCEPT_WAIT_S = 30.0
# After a bound on descriptors or on an exit is missed, how much longer the test reads on, so
# that its message tells a late close or exit under load from a leak or a drain that never ends
# (the test fails either way: the bound is the spec's or the suite's).
LATE_READ_S = 20.0
ROOT = b"GET / HTTP/1.1\r\nHost: renard.test\r\n\r\n"


@contextlib.contextmanager
def started(request, base: list[str], flags: dict[str, str]):
    """A ready ServerProcess from base argv with `flags` replaced; always stopped at the end."""
    server = start_ready(server_process(argv_with(base, flags), request.config))
    server.target = target_of(server)
    try:
        yield server
    finally:
        server.stop()


def raise_fd_limit() -> int:
    """Raises this process's soft descriptor limit to its hard limit (servers started later
    inherit it); returns the soft limit now in force."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def read_response(conn: wire.Connection, deadline: float, no_body: bool = False) -> wire.Response | None:
    """The next response on conn (consumed from conn.received), or None at EOF/deadline."""
    while True:
        parsed = wire.parse_response(bytes(conn.received), no_body, conn.closed)
        if parsed is not wire.NEED_MORE:
            response, used = parsed
            del conn.received[:used]
            return response
        remaining = deadline - time.monotonic()
        if conn.closed or remaining <= 0:
            return None
        conn.pump(min(remaining, 0.5))


def ask(conn: wire.Connection, request: bytes = ROOT, wait_s: float = ANSWER_WAIT_S) -> wire.Response | None:
    deadline = time.monotonic() + wait_s
    if not conn.send(request, deadline):
        return None
    return read_response(conn, deadline)


def announces_close(response: wire.Response) -> bool:
    return any("close" in v.lower() for v in response.values("connection"))


def served_on_new_connection(target, request: bytes = ROOT) -> wire.Response | None:
    """The answer on a new connection (closed afterwards), or None if refused/closed/unanswered."""
    try:
        conn = wire.Connection.open(target.host, target.port)
    except OSError:
        return None
    try:
        return ask(conn, request)
    finally:
        conn.close()


def refused_or_closed_unanswered(target, within_s: float = 1.0) -> str:
    """ "" when a new connection is refused (or closed without an answer within within_s: the
    drain window is still open, so a closed listener is the only way), else what happened."""
    try:
        conn = wire.Connection.open(target.host, target.port, timeout=within_s)
    except OSError:
        return ""
    try:
        conn.send(ROOT, time.monotonic() + within_s)  # may fail: closed
        conn.wait_eof(time.monotonic() + within_s)
        if conn.received:
            return f"a connection made after the signal was answered: {wire.escape(bytes(conn.received))}"
        return "" if conn.closed else f"a connection made after the signal was left waiting {within_s:g} s"
    finally:
        conn.close()


def refused_outright(target, within_s: float = 1.0) -> str:
    """ "" when a new connection is refused, else what happened: SPEC §7.6, once a client has
    been told to close, every listener is closed, so its new connection can find none open
    (not even one the kernel completes and then resets)."""
    try:
        conn = wire.Connection.open(target.host, target.port, timeout=within_s)
    except ConnectionRefusedError:
        return ""
    except OSError as error:
        return f"a new connection was neither made nor refused: {error}"
    try:
        conn.send(ROOT, time.monotonic() + within_s)  # may fail: closed
        conn.wait_eof(time.monotonic() + within_s)
        if conn.received:
            return f"a new connection was answered: {wire.escape(bytes(conn.received))}"
        return "a new connection was made (a listener was still open), then " + (
            "closed unanswered" if conn.closed else f"left waiting {within_s:g} s"
        )
    finally:
        conn.close()


def refused_by(target, deadline: float, probe_every_s: float = 0.01) -> float | None:
    """The time.monotonic() at which a new connection to target was first refused, polling
    until deadline; None if every attempt connected (or timed out). SPEC §7.6: a renard closes
    its listening sockets when its drain begins, so this is the drain seen from outside.
    A probe that connects is closed at once without a request."""
    while time.monotonic() < deadline:
        try:
            probe = socket.create_connection((target.host, target.port), timeout=max(0.05, probe_every_s))
        except ConnectionRefusedError:
            return time.monotonic()
        except OSError:
            pass  # a full backlog or a slow accept: not refused yet
        else:
            probe.close()
        time.sleep(probe_every_s)
    return None


def served_again(target, within_s: float = SETTLE_S) -> wire.Response | None:
    """A 302 on a new connection, retried (bounded) while the server catches up."""
    deadline, response = time.monotonic() + within_s, None
    for _ in range(100):
        response = served_on_new_connection(target)
        if (response is not None and response.status == 302) or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    return response


def client_that_does_not_read(target, sndbuf: int | None = None) -> socket.socket:
    """A non-blocking socket connected to target with a 4 KiB receive buffer (set before the
    connect: window scaling is agreed then), for a client that sends and never reads."""
    sock = socket.socket(socket.AF_INET6 if ":" in target.host else socket.AF_INET)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        if sndbuf is not None:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, sndbuf)
        sock.settimeout(ANSWER_WAIT_S)
        sock.connect((target.host, target.port))
        sock.setblocking(False)
    except OSError:
        sock.close()
        raise
    return sock


def send_until_stalled(sock: socket.socket, payload: memoryview, stall_s: float, limit_s: float = 60.0):
    """Sends payload without reading until no progress for stall_s seconds. Returns (octets
    sent, time.monotonic() of the last progress), or None if all of it went through or limit_s
    passed first (the server never stopped reading)."""
    poller = select.poll()
    poller.register(sock, select.POLLOUT)
    offset, start = 0, time.monotonic()
    last_progress = start
    while offset < len(payload) and time.monotonic() < start + limit_s:
        if poller.poll(100):
            with contextlib.suppress(BlockingIOError, ConnectionError):
                sent = sock.send(payload[offset : offset + 65536])
                if sent:
                    offset += sent
                    last_progress = time.monotonic()
        if time.monotonic() - last_progress >= stall_s:
            return offset, last_progress
    return None


def reset(sock: socket.socket) -> None:
    """Closes sock with a TCP reset (SO_LINGER 0) instead of a FIN."""
    with contextlib.suppress(OSError):
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
    sock.close()


# --- the listener's accept queue ---------------------------------------------------------------


def accept_queue(port: int) -> int:
    """Connections the kernel has completed on the listening sockets of `port` (every one of
    them, IPv4 and IPv6: a renard with a listener per thread has several) that the server has
    not yet accepted: a LISTEN row's rx_queue in /proc/net/tcp and tcp6 is its accept queue."""
    queued = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError), open(table) as rows:
            for row in list(rows)[1:]:
                fields = row.split()
                local, state, queues = fields[1], fields[3], fields[4]
                if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                    queued += int(queues.split(":")[1], 16)
    return queued


def wait_accepted(port: int, within_s: float = ACCEPT_WAIT_S) -> tuple[int, float]:
    """Waits until the server has accepted every connection queued on `port`, within_s at most:
    (connections still queued, seconds waited). A client's connect completes in the kernel, not
    in the server: a flood's last few thousand connections can still wait in the queue, closed,
    when the client is done, and whatever the server does per connection (a leak, a descriptor)
    happens only once it accepts them; a starved server accepts them seconds later."""
    began = time.monotonic()
    left = at_most_within(lambda: accept_queue(port), 0, within_s, interval_s=0.05)
    return left, round(time.monotonic() - began, 2)


# --- leaks: growth that repeats ------------------------------------------------------------

RSS_SETTLE_S = 1.0  # after a round: the lowest resident set read over this long, every 0.1 s


def settled_rss_kib(server, over_s: float = RSS_SETTLE_S) -> int:
    """The lowest resident set (VmRSS, KiB) read every 0.1 s over `over_s` seconds: the level a
    round leaves, which a collector's garbage still being returned lifts only while it lasts."""
    deadline, lowest = time.monotonic() + over_s, server.rss_kib()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        lowest = min(lowest, server.rss_kib())
    return lowest


def exit_within(server, signalled_at: float, within_s: float, read_on_s: float = LATE_READ_S) -> tuple[int | None, str]:
    """(The exit status, "") when the server exited within `within_s` of the signal; else (None,
    when it did exit, read on for `read_on_s` more, or that it was still running then)."""
    status = server.wait(signalled_at + within_s - time.monotonic())
    if status is not None:
        return status, ""
    late = server.wait(read_on_s)
    after_s = time.monotonic() - signalled_at
    if late is None:
        return None, f"still running {after_s:.1f} s after the signal"
    return None, f"exited late, status {late}, {after_s:.2f} s after the signal"


def fds_back_late(server, baseline: int, read_on_s: float = LATE_READ_S) -> str:
    """What the descriptors over `baseline` became, read on for `read_on_s` (a leak keeps them, a
    close that was only late gives them back), with the server's descriptors by kind at the miss."""
    kinds = fd_kinds(server.tree_pids())
    began = time.monotonic()
    count = server.wait_fd_count(baseline, read_on_s)
    waited_s = time.monotonic() - began
    if count <= baseline:
        return f"back to {count} {waited_s:.1f} s later: closed late, not kept; at the miss: {kinds}"
    return f"still {count} {waited_s:.1f} s later: kept, a leak; at the miss: {kinds}"


def fd_kinds(pids: list[int]) -> str:
    """The descriptors of pids counted by kind (socket, pipe, anon_inode:[eventpoll], a path)."""
    kinds = collections.Counter()
    for pid in pids:
        with contextlib.suppress(OSError):
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with contextlib.suppress(OSError):
                    kinds[re.sub(r":\[\d+\]$", "", os.readlink(f"/proc/{pid}/fd/{fd}"))] += 1
    return ", ".join(f"{count} {kind}" for kind, count in kinds.most_common()) or "none"


@dataclasses.dataclass
class Growth:
    """The resident set read after each round of one load repeated (KiB): `readings[0]` before
    the first round, then one per round.

    A leak grows by about the same amount in every round, and never gives it back. A
    high-water mark (a runtime's heap, freed stacks, an allocator's arenas) is reached in the
    first round or the first few, then stays or wanders both ways; a collector's garbage grows
    round after round until its collection takes it back (js-bun: +3 MB a round for 2 to 9
    rounds of 5 000 connections, then -14 MB). So the verdict rests on the later rounds, each
    over the one before: a server that leaks grows more than the bound in every one of them;
    any other server, given rounds enough for its collector to run, has one that does not.
    `no_leak_seen` says when to stop: the first later round within the bound."""

    readings: list[int]

    def later_growths(self) -> list[int]:
        """KiB each round after the first added over the round before it."""
        return [after - before for before, after in zip(self.readings[1:], self.readings[2:], strict=False)]

    def no_leak_seen(self, bound_kib: int) -> bool:
        """Whether a round after the first grew by at most bound_kib."""
        return any(grew <= bound_kib for grew in self.later_growths())

    def describe(self, what: str) -> str:
        """The series a failure message shows, so that a flake and a defect can be told apart."""
        rounds = ", ".join(f"{kib}" for kib in self.readings[1:])
        return (
            f"VmRSS {self.readings[0]} KiB before, then after each {what} ({RSS_SETTLE_S:g} s settled): {rounds} "
            f"KiB; the later rounds grew {self.later_growths()} KiB"
        )
