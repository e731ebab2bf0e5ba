"""The rules of SPEC §7.5 and §7.6 that the JSON vectors cannot express: the connection cap,
the output bound, shutdown on SIGTERM/SIGINT, and the header deadline under a slowloris.

Only with --renard-cmd (or RENARD_CMD): each test starts its OWN server from that command,
with some flags replaced (e.g. `--max-connections 5`), and always stops it (SIGTERM, then
SIGKILL after 5 s). Every socket operation has a deadline and every loop is bounded in
count and time. The tests assert behaviour, not speed: the waits are generous, for a slow,
busy 2-core machine. Descriptor and memory checks read /proc (Linux), summed over the
server's process tree (a runtime without threads may use worker processes, SPEC §1).
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import signal
import socket
import subprocess
import time

import pytest

import reference
import wire

SHUTDOWN_LIMIT_S = 5.0        # SPEC §7.6: exit within 5 seconds of the signal
ANSWER_WAIT_S = 5.0           # a request the server should answer: generous on a busy machine
CLOSE_WAIT_S = 3.0            # "closed at once": EOF or reset within this
LATE_S = 1.5                  # SPEC §7.5: a timeout may fire up to 1 s late (+0.5 s for us)
SETTLE_S = 10.0               # descriptors back to baseline within this after the load ends


# --- starting our own servers ----------------------------------------------------------

@pytest.fixture(scope="module")
def base_argv(request) -> list[str]:
    command = request.config.getoption("--renard-cmd")
    if not command:
        pytest.skip("the limit and shutdown checks start their own servers: pass --renard-cmd "
                    "\"PATH --listen 127.0.0.1:0 ...\" (or set RENARD_CMD)")
    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("the limit checks read /proc (Linux only)")
    return shlex.split(command)


def argv_with(argv: list[str], flags: dict[str, str]) -> list[str]:
    """argv without any `--flag V` / `--flag=V` for the given flags, then `--flag V` appended."""
    out, skip = [], False
    for word in argv:
        if skip:
            skip = False
            continue
        if word in flags:
            skip = True
            continue
        if any(word.startswith(flag + "=") for flag in flags):
            continue
        out.append(word)
    for flag, value in flags.items():
        out += [flag, value]
    return out


@contextlib.contextmanager
def started(base: list[str], flags: dict[str, str]):
    """A ServerProcess (conftest) from base argv with `flags`; always stopped at the end."""
    import conftest
    server = conftest.ServerProcess(shlex.join(argv_with(base, flags)))
    server.start()
    try:
        yield server
    finally:
        server.stop()


# --- /proc ------------------------------------------------------------------------------

def process_tree(pid: int) -> list[int]:
    """pid and its descendants (by parent pid in /proc/N/stat)."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    parents[int(name)] = int(f.read().rpartition(b")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    tree, frontier = [pid], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in parents.items() if ppid == parent and child not in tree]
        tree += children
        frontier += children
    return tree


def fd_count(pid: int) -> int:
    total = 0
    for member in process_tree(pid):
        with contextlib.suppress(OSError):
            total += len(os.listdir(f"/proc/{member}/fd"))
    return total


def rss_kib(pid: int) -> int:
    total = 0
    for member in process_tree(pid):
        with contextlib.suppress(OSError, ValueError):
            with open(f"/proc/{member}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
    return total


def settled_fd_count(pid: int, deadline: float) -> int:
    """The descriptor count once three readings 0.2 s apart agree (or at the deadline)."""
    readings = [fd_count(pid)]
    while time.monotonic() < deadline and not (len(readings) >= 3 and len(set(readings[-3:])) == 1):
        time.sleep(0.2)
        readings.append(fd_count(pid))
    return readings[-1]


# --- requests ---------------------------------------------------------------------------

ROOT = b"GET / HTTP/1.1\r\nHost: renard.test\r\n\r\n"


def read_response(conn: wire.Connection, deadline: float) -> wire.Response | None:
    """The next response on conn (consumed from conn.received), or None at EOF/deadline."""
    while True:
        parsed = wire.parse_response(bytes(conn.received), False, conn.closed)
        if parsed is not wire.NEED_MORE:
            response, used = parsed
            del conn.received[:used]
            return response
        remaining = deadline - time.monotonic()
        if conn.closed or remaining <= 0:
            return None
        conn.pump(min(remaining, 0.5))


def ask(conn: wire.Connection, request: bytes = ROOT) -> wire.Response | None:
    deadline = time.monotonic() + ANSWER_WAIT_S
    if not conn.send(request, deadline):
        return None
    return read_response(conn, deadline)


def announces_close(response: wire.Response) -> bool:
    return any("close" in v.lower() for v in response.values("connection"))


def served_on_new_connection(target) -> wire.Response | None:
    """A 302 on a new connection (closed afterwards), or None if refused/closed/unanswered."""
    try:
        conn = wire.Connection.open(target.host, target.port)
    except OSError:
        return None
    try:
        return ask(conn)
    finally:
        conn.close()


# --- SPEC §7.5: connection cap ------------------------------------------------------------

def test_connection_beyond_max_connections_is_closed_unanswered_and_descriptors_return_to_baseline(base_argv):
    with started(base_argv, {"--max-connections": "5", "--threads": "1"}) as server:
        target, pid = server.target, server.process.pid
        # Warm up first (a runtime may open descriptors lazily on its first connection),
        # then take the baseline once the count is steady.
        warm = served_on_new_connection(target)
        assert warm is not None and warm.status == 302, "no 302 on the first connection"
        baseline = settled_fd_count(pid, time.monotonic() + SETTLE_S)

        held: list[wire.Connection] = []
        extra = None
        try:
            for index in range(5):
                conn = wire.Connection.open(target.host, target.port)
                held.append(conn)
                response = ask(conn)
                assert response is not None and response.status == 302, \
                    f"connection {index + 1} of 5 (under the cap) was not answered: " \
                    f"{wire.escape(bytes(conn.received))!r}, closed={conn.closed}"
            busy = fd_count(pid)
            assert busy >= baseline + 5, \
                f"{busy} descriptors with 5 connections open, baseline {baseline}: cannot see them"

            # The 6th: accepted by the kernel, then closed by the server without an answer.
            extra = wire.Connection.open(target.host, target.port)
            extra.send(ROOT, time.monotonic() + CLOSE_WAIT_S)   # may fail: the server closed
            extra.wait_eof(time.monotonic() + CLOSE_WAIT_S)
            assert extra.closed, f"the 6th connection (cap 5) is still open after {CLOSE_WAIT_S} s"
            assert not extra.received, \
                f"the 6th connection (cap 5) got an answer: {wire.escape(bytes(extra.received))}"

            for index, conn in enumerate(held):   # the 5 are undisturbed
                response = ask(conn)
                assert response is not None and response.status == 302, \
                    f"connection {index + 1} of 5 stopped being served after the 6th was refused"
        finally:
            for conn in held + ([extra] if extra else []):
                conn.close()

        # Once they are gone, a new connection is served again (the server may need a moment
        # to notice the closes: retry, bounded).
        deadline, attempts, response = time.monotonic() + SETTLE_S, 0, None
        while response is None and attempts < 50 and time.monotonic() < deadline:
            attempts += 1
            response = served_on_new_connection(target)
            if response is None:
                time.sleep(0.2)
        assert response is not None and response.status == 302, \
            f"no new connection served within {SETTLE_S:.0f} s ({attempts} attempts) after the 5 closed"

        deadline, count = time.monotonic() + SETTLE_S, fd_count(pid)
        while count != baseline and time.monotonic() < deadline:
            time.sleep(0.2)
            count = fd_count(pid)
        assert count == baseline, \
            f"{count} descriptors {SETTLE_S:.0f} s after the load ended, baseline {baseline}"


# --- SPEC §7.5: output bound --------------------------------------------------------------

SEEDED = b"GET /?seed=%08d HTTP/1.1\r\nHost: a\r\n\r\n"     # fixed length: boundaries are easy
SEEDED_LEN = len(SEEDED % 0)
STALL_S = 2.0                  # no send progress for this long: the server stopped reading
PIPELINE_BYTES = 20 * 1024 * 1024
RSS_BOUND_KIB = 64 * 1024


def test_client_that_pipelines_and_never_reads_is_stopped_served_in_order_and_costs_bounded_memory(base_argv):
    # Long timeouts: the idle timeout disconnects a client that does not read its responses
    # (SPEC §7.5), and the head the server read last may be partial; this test is about the
    # output bound, not those.
    with started(base_argv, {"--idle-timeout": "120", "--header-timeout": "120"}) as server:
        target, pid = server.target, server.process.pid
        count = PIPELINE_BYTES // SEEDED_LEN
        payload = memoryview(b"".join(SEEDED % i for i in range(count)))

        sock = socket.socket(socket.AF_INET6 if ":" in target.host else socket.AF_INET)
        try:
            # Small buffers on our side, set before connect (window scaling is agreed then).
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
            sock.settimeout(5.0)
            sock.connect((target.host, target.port))
            sock.setblocking(False)

            # Send, never read, until no progress for STALL_S.
            offset, start = 0, time.monotonic()
            last_progress, blocked = start, False
            while offset < len(payload) and time.monotonic() < start + 60:
                _, writable, _ = select.select([], [sock], [], 0.25)
                if writable:
                    with contextlib.suppress(BlockingIOError):
                        sent = sock.send(payload[offset:offset + 65536])
                        if sent:
                            offset += sent
                            last_progress = time.monotonic()
                if time.monotonic() - last_progress >= STALL_S:
                    blocked = True
                    break
            assert blocked, (f"sent {offset} of {len(payload)} octets of pipelined requests without "
                             "the server ever stopping reading (its responses are never read)")

            # While stuck: a loose bound (64 MiB) that only an implementation buffering without
            # limit (about 5 octets of response per octet of request sent) would exceed.
            rss = rss_kib(pid)
            assert rss < RSS_BOUND_KIB, f"VmRSS {rss} KiB while a client is stuck (bound {RSS_BOUND_KIB})"
            other = served_on_new_connection(target)
            assert other is not None and other.status == 302, \
                "another connection was not served while one client was stuck"

            # Finish the request cut by the stall, end with one that asks to close, and read
            # everything while sending.
            boundary = -(-offset // SEEDED_LEN) * SEEDED_LEN
            sent_requests = boundary // SEEDED_LEN
            last = b"GET /?seed=%08d HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n" % sent_requests
            rest = memoryview(bytes(payload[offset:boundary]) + last)
            del payload
            wanted = sent_requests + 1
            received, eof, deadline = bytearray(), False, time.monotonic() + 60
            while not eof and time.monotonic() < deadline:
                readable, writable, _ = select.select([sock], [sock] if rest else [], [], 0.5)
                if writable:
                    with contextlib.suppress(BlockingIOError):
                        rest = rest[sock.send(rest[:65536]):]
                if readable:
                    for _ in range(64):
                        try:
                            data = sock.recv(1 << 20)
                        except BlockingIOError:
                            break
                        if not data:
                            eof = True
                            break
                        received += data
            assert not rest, f"{len(rest)} octets still unsent after the drain"
            assert eof, f"no EOF 60 s into the drain ({len(received)} octets received)"
        finally:
            sock.close()

        # Every response, in order: the seeded Location of request i, all 302.
        position, index = 0, 0
        while position < len(received) and index < wanted:
            window = bytes(received[position:position + 4096])
            parsed = wire.parse_response(window, False, position + 4096 >= len(received))
            assert parsed is not wire.NEED_MORE, f"truncated response {index} at octet {position}"
            response, used = parsed
            expected = reference.render_location(
                target.location, reference.pick(b"%08d" % index, target.count))
            assert response.status == 302 and response.values("location") == [expected], \
                (f"response {index} of {wanted}: {response.status} {response.values('location')}, "
                 f"expected 302 to {expected} (out of order or wrong)")
            position += used
            index += 1
        assert index == wanted, f"{index} responses to {wanted} pipelined requests"
        assert position == len(received), f"{len(received) - position} octets after the last response"
        assert announces_close(response), "the last response (Connection: close asked) lacks it"


# --- SPEC §7.6: shutdown ------------------------------------------------------------------

HALF_HEAD = b"GET /?seed=half HTTP/1.1\r\nHost: renard.test\r\n"   # the empty line is missing


def idle_and_half(target) -> tuple[wire.Connection, wire.Connection]:
    """An idle keep-alive connection (one request answered) and one with half a head sent."""
    idle = wire.Connection.open(target.host, target.port)
    response = ask(idle)
    assert response is not None and response.status == 302, "the idle connection's request failed"
    half = wire.Connection.open(target.host, target.port)
    assert half.send(HALF_HEAD, time.monotonic() + ANSWER_WAIT_S), half.send_failed
    time.sleep(1.0)   # nothing to observe: give the server time to read the half head
    return idle, half


def wait_exit(server, signalled_at: float) -> int | None:
    try:
        return server.process.wait(max(0.1, signalled_at + SHUTDOWN_LIMIT_S - time.monotonic()))
    except subprocess.TimeoutExpired:
        return None


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_closes_idle_connection_finishes_half_request_with_close_and_exits_0(base_argv, signum):
    # Long timeouts: the half request must not meet its header deadline during the test.
    with started(base_argv, {"--header-timeout": "60", "--idle-timeout": "60"}) as server:
        idle, half = idle_and_half(server.target)
        try:
            signalled_at = time.monotonic()
            server.process.send_signal(signum)

            idle.wait_eof(signalled_at + CLOSE_WAIT_S)
            assert idle.closed, f"the idle connection is still open {CLOSE_WAIT_S} s after the signal"
            assert not idle.received, f"the idle connection got {wire.escape(bytes(idle.received))}"

            # The server has acted on the signal: now complete the request in progress.
            deadline = signalled_at + SHUTDOWN_LIMIT_S
            assert half.send(b"\r\n", deadline), f"completing the half request: {half.send_failed}"
            response = read_response(half, deadline)
            assert response is not None, \
                (f"the request in progress was not answered: {wire.escape(bytes(half.received))!r} "
                 f"(server exit status so far: {server.process.poll()})")
            assert response.status == 302 and announces_close(response), \
                f"expected 302 with Connection: close, got {wire.escape(response.raw)}"
            half.wait_eof(deadline)
            assert half.closed, "no EOF after the response to the request in progress"
            assert not half.received, f"octets after the response: {wire.escape(bytes(half.received))}"

            status = wait_exit(server, signalled_at)
            assert status == 0, (f"{signal.Signals(signum).name}: exit status {status} "
                                 f"(None: still running {SHUTDOWN_LIMIT_S:.0f} s after the signal)")
        finally:
            idle.close()
            half.close()


def test_after_sigterm_new_connections_are_refused_or_closed_unanswered(base_argv):
    with started(base_argv, {"--header-timeout": "60", "--idle-timeout": "60"}) as server:
        target = server.target
        idle, half = idle_and_half(server.target)   # `half` keeps the server shutting down
        late = None
        try:
            signalled_at = time.monotonic()
            server.process.send_signal(signal.SIGTERM)
            idle.wait_eof(signalled_at + CLOSE_WAIT_S)   # proof the signal has been acted on
            assert idle.closed, f"the idle connection is still open {CLOSE_WAIT_S} s after SIGTERM"

            try:
                late = wire.Connection.open(target.host, target.port, timeout=CLOSE_WAIT_S)
            except OSError:
                late = None   # refused: the listening socket is closed
            if late is not None:
                late.send(ROOT, time.monotonic() + CLOSE_WAIT_S)   # may fail: closed

            deadline = signalled_at + SHUTDOWN_LIMIT_S
            if half.send(b"\r\n", deadline):   # let the server finish and exit
                read_response(half, deadline)
            status = wait_exit(server, signalled_at)
            if late is not None:   # a connection left in the backlog is reset at the exit
                late.wait_eof(time.monotonic() + CLOSE_WAIT_S)
                assert not late.received, \
                    f"a connection made after SIGTERM was answered: {wire.escape(bytes(late.received))}"
                assert late.closed, "a connection made after SIGTERM is still open"
            assert status == 0, f"SIGTERM: exit status {status} (None: still running after 5 s)"
        finally:
            for conn in (idle, half, late):
                if conn is not None:
                    conn.close()


# --- SPEC §7.5: the header deadline is absolute (slowloris) --------------------------------

SLOW_HEAD = b"GET /?slow HTTP/1.1\r\nHost: renard.test\r\nX-Slow: " + b"a" * 200   # never ends
DRIP_S = 0.5
ATTACKERS = 20
HEADER_TIMEOUT_S = 2.0


def test_header_deadline_is_absolute_for_20_dripping_connections_and_others_are_still_served(base_argv):
    with started(base_argv, {"--header-timeout": "2", "--idle-timeout": "60"}) as server:
        target = server.target
        attackers: list[tuple[wire.Connection, float]] = []   # (connection, connected at)
        sent = [0] * ATTACKERS
        next_drip = [0.0] * ATTACKERS
        normal = None
        normal_answer = None
        try:
            for index in range(ATTACKERS):
                conn = wire.Connection.open(target.host, target.port)
                attackers.append((conn, time.monotonic()))
                next_drip[index] = time.monotonic()
            started_at = attackers[0][1]
            end = attackers[-1][1] + HEADER_TIMEOUT_S + LATE_S + 0.5
            while time.monotonic() < end:
                now = time.monotonic()
                for index, (conn, _) in enumerate(attackers):
                    if not conn.closed and now >= next_drip[index] and sent[index] < len(SLOW_HEAD):
                        try:
                            sent[index] += conn.sock.send(SLOW_HEAD[sent[index]:sent[index] + 1])
                        except BlockingIOError:
                            pass
                        except OSError:   # reset: the server closed it
                            conn.pump(0)
                            if not conn.closed:
                                conn.eof_at = time.monotonic()
                        next_drip[index] = now + DRIP_S
                if normal is None and now >= started_at + 1.0:
                    assert not any(c.closed for c, _ in attackers), \
                        "an attacker was closed before its header deadline (2 s)"
                    normal = wire.Connection.open(target.host, target.port)
                    normal.send(ROOT, now + ANSWER_WAIT_S)
                if normal is not None and normal_answer is None:
                    parsed = wire.parse_response(bytes(normal.received), False, normal.closed)
                    if parsed is not wire.NEED_MORE:
                        normal_answer = parsed[0]
                socks = [c.sock for c, _ in attackers if not c.closed]
                if normal is not None and normal_answer is None and not normal.closed:
                    socks.append(normal.sock)
                if not socks and normal_answer is not None:
                    break
                wait = max(0.0, min([0.05] + [next_drip[i] - time.monotonic()
                                              for i, (c, _) in enumerate(attackers) if not c.closed]))
                readable = select.select(socks, [], [], wait)[0] if socks else time.sleep(wait) or []
                for conn, _ in attackers:
                    if conn.sock in readable:
                        conn.pump(0)
                if normal is not None and normal.sock in readable:
                    normal.pump(0)

            assert normal_answer is not None and normal_answer.status == 302, \
                (f"a normal connection opened during the attack was not answered: "
                 f"{wire.escape(bytes(normal.received)) if normal else 'not opened'}")
            for index, (conn, connected_at) in enumerate(attackers):
                assert conn.closed, (f"dripping connection {index} still open "
                                     f"{time.monotonic() - connected_at:.1f} s after its connect "
                                     f"(header deadline 2 s, not extended by further octets)")
                elapsed = conn.eof_at - connected_at
                assert elapsed >= HEADER_TIMEOUT_S - 0.05, \
                    f"dripping connection {index} closed {elapsed:.2f} s after its connect: early"
                assert elapsed <= HEADER_TIMEOUT_S + LATE_S, \
                    f"dripping connection {index} closed {elapsed:.2f} s after its connect (deadline 2 s)"
                if conn.received:
                    parsed = wire.parse_response(bytes(conn.received), False, True)
                    assert parsed[0].status == 408 and parsed[1] == len(conn.received), \
                        f"dripping connection {index} got {wire.escape(bytes(conn.received))}, not one 408"
        finally:
            for conn, _ in attackers:
                conn.close()
            if normal is not None:
                normal.close()
