"""The robustness suite: slowloris, a slowloris attack at the connection cap, a
connection flood, a slow reader, idle and half-closed connections, the drain under load, a
soak, and hostile bytes. The spec's status or a close, never a crash, a hang, a leak or
unbounded memory.

Each test starts its own server from --renard-cmd with the short timeouts of the spec's
tests (`--header-timeout 2`; others as each test says). All traffic goes to loopback; every
loop is bounded in count and time; many-socket loops use poll/epoll (not select).
Lengths: --renard-attack-seconds (slowloris at the cap, default 10; `make soak`: 20) and
--renard-soak-seconds (wrk, default 10; `make soak`: 600).
"""

from __future__ import annotations

import contextlib
import errno
import random
import re
import selectors
import shutil
import signal
import socket
import statistics
import subprocess
import threading
import time

import pytest

from .. import wire
from .support import (
    ACCEPT_WAIT_S,
    ANSWER_WAIT_S,
    CLOSE_WAIT_S,
    LATE_S,
    ROOT,
    SETTLE_S,
    Growth,
    announces_close,
    ask,
    client_that_does_not_read,
    fds_back_late,
    raise_fd_limit,
    read_response,
    refused_outright,
    reset,
    send_until_stalled,
    served_again,
    settled_rss_kib,
    started,
    wait_accepted,
)

HEADER_S = 2.0
SHORT = {"--header-timeout": "2", "--idle-timeout": "60"}


def baseline_fds(server) -> int:
    """Descriptors once the server has served one request and settled (lazy opens done)."""
    response = served_again(server.target)
    assert response is not None and response.status == 302, "the server does not answer GET /"
    return server.settled_fd_count(SETTLE_S)


def assert_fds_back(server, baseline: int, what: str) -> float:
    """Once the server has accepted every connection of the load (its accept queue empty: what it
    leaks per connection it leaks only then), its descriptors back to the baseline; the seconds
    the queue took to empty."""
    left, waited_s = wait_accepted(server.target.port)
    assert left == 0, (
        f"{left} connections still queued on the listener, never accepted, {ACCEPT_WAIT_S:g} s after {what}: "
        "the server stopped accepting"
    )
    count = server.wait_fd_count(baseline, SETTLE_S)
    assert count <= baseline, (
        f"{count} descriptors {SETTLE_S:g} s after {what}, baseline {baseline}: {fds_back_late(server, baseline)}"
    )
    return waited_s


def one_response(received: bytes) -> wire.Response | None:
    """The single complete response in received (nothing after it), else None."""
    try:
        parsed = wire.parse_response(received, False, True)
    except wire.MalformedResponse:
        return None
    if parsed is wire.NEED_MORE or parsed[1] != len(received):
        return None
    return parsed[0]


# --- many connections, each sending its pieces on a schedule ------------------------------


# How much earlier than its timeout a server's close may come, counted from before the client
# began what starts the server's clock (its connect, its request): the server's clock and
# timer granularity (milliseconds; a coarse clock's tick is 4 ms).
EARLY_S = 0.05


class Drip:
    """A connection that sends `pieces` one every `interval_s` seconds from its connect;
    opened_at is read before the connect (no server's clock for it can start earlier),
    connected_at once it is done."""

    def __init__(self, target, pieces: list[bytes], interval_s: float):
        self.opened_at = time.monotonic()
        self.conn = wire.Connection.open(target.host, target.port)
        self.connected_at = time.monotonic()
        self.pieces, self.interval_s = pieces, interval_s
        self.next_at, self.index = self.connected_at, 0

    def step(self, now: float) -> None:
        if self.conn.closed or now < self.next_at or self.index >= len(self.pieces):
            return
        try:
            self.index += bool(self.conn.sock.send(self.pieces[self.index]))
        except BlockingIOError:
            pass
        except OSError:  # reset: the server closed it
            self.conn.pump(0)
            if not self.conn.closed:
                self.conn.eof_at = time.monotonic()
        self.next_at = now + self.interval_s


def drive(drips: list[Drip], until: float, tick=None) -> None:
    """Sends every drip's pieces on schedule and reads what arrives, until all are closed or
    the deadline; tick(now) is called every loop (at most every 50 ms)."""
    selector = selectors.DefaultSelector()
    for drip in drips:
        selector.register(drip.conn.sock, selectors.EVENT_READ, drip)
    try:
        while time.monotonic() < until:
            now = time.monotonic()
            for drip in drips:
                drip.step(now)
            if tick is not None and tick(now):
                break
            if all(d.conn.closed for d in drips) and tick is None:
                break
            for key, _ in selector.select(0.05):
                drip = key.data
                drip.conn.pump(0)
                if drip.conn.closed:
                    selector.unregister(drip.conn.sock)
    finally:
        selector.close()


# --- slowloris: the header deadline is absolute (SPEC §7.5) ----------------------------------

SLOW_HEAD = b"GET /?slow HTTP/1.1\r\nHost: renard.test\r\nX-Slow: " + b"a" * 200  # never ends
SLOW_LINES = [b"GET /?slow HTTP/1.1\r\n", b"Host: renard.test\r\n"] + [b"X-Line-%d: x\r\n" % i for i in range(40)]
STYLES = {
    "byte-at-a-time": ([SLOW_HEAD[i : i + 1] for i in range(len(SLOW_HEAD))], 0.25),
    "header-line-at-a-time": (SLOW_LINES, 0.5),
}
ATTACKERS = 20


@pytest.mark.scenario("slowloris")
@pytest.mark.parametrize("style", list(STYLES))
def test_slowloris_is_closed_at_the_header_deadline_with_408_and_leaves_nothing_open(base_argv, request, style):
    pieces, interval = STYLES[style]
    with started(request, base_argv, SHORT) as server:
        baseline = baseline_fds(server)
        drips = [Drip(server.target, pieces, interval) for _ in range(ATTACKERS)]
        normal: dict = {}

        def tick(now):
            if "response" not in normal and now >= drips[0].connected_at + 1.0:
                assert not any(d.conn.closed for d in drips), "a slowloris was closed before its header deadline"
                normal["response"] = served_again(server.target, within_s=ANSWER_WAIT_S)
            return "response" in normal and all(d.conn.closed for d in drips)

        try:
            drive(drips, drips[-1].connected_at + HEADER_S + LATE_S + 0.5, tick)
            answer = normal.get("response")
            assert answer is not None and answer.status == 302, "a normal client was not served during the slowloris"
            for index, drip in enumerate(drips):
                assert drip.conn.closed, (
                    f"slowloris {index} ({style}) still open "
                    f"{time.monotonic() - drip.connected_at:.1f} s after its connect"
                )
                since_open, elapsed = drip.conn.eof_at - drip.opened_at, drip.conn.eof_at - drip.connected_at
                assert since_open >= HEADER_S - EARLY_S and elapsed <= HEADER_S + LATE_S, (
                    f"slowloris {index} closed {since_open:.3f} s after its connect began, {elapsed:.3f} s after "
                    f"it was done (header deadline {HEADER_S:g} s)"
                )
                response = one_response(bytes(drip.conn.received))
                assert response is not None and response.status == 408 and announces_close(response), (
                    f"slowloris {index} got {wire.escape(bytes(drip.conn.received))}, not one 408 with close"
                )
        finally:
            for drip in drips:
                drip.conn.close()
        assert_fds_back(server, baseline, f"{ATTACKERS} slowloris connections ended")


# --- SPEC §7.5, §7.5.1: a slowloris attack at the connection cap --------------------------------

CAP = 50
# What each bound catches, and its margin over what every renard measured (docs/reliability.md,
# "Every resource bound": 5 suites each, two at a time, a busy loop on each core, load 3-19):
# - p99: a server that does not evict an attacker for a fresh client leaves it waiting for a
#   header deadline (2 s); every renard read 7-55 ms, go once 184 (the busiest pass), so 750
#   ms is over 3x that spread (165 ms) above the highest.
# - at least FRESH_MIN fresh requests in the attack's 10 s (one every 40 ms, each after the
#   last answer), for the p99 to rest on: 196-248 were read, so 40 leaves 3x their spread.
#   Late answers lower it too.
# - retried: an eviction of a client whose request is in flight, which a wrong order does to
#   most of them; 0 to 2 of about 230 were read (js-bun's 2), 10 % allows 20.
FRESH_P99_S = 0.750
FRESH_MIN = 40
FRESH_RETRIED_MAX = 0.10  # of fresh requests: closed unanswered once, then served on a retry


def fresh_clients(target, until: float, interval_s: float, out: dict) -> None:
    """New connections one after another until `until`: each sends GET / and waits for its
    302; records the time from connect to the complete answer, and what went wrong.

    A connection closed without an octet of answer is retried once on a new one, as HTTP
    clients retry an idempotent request (RFC 9112 §9.3.1): §7.5 lets the server evict a
    connection whose request has not been read yet, which a burst of reconnecting attackers
    can make the longest silent. The retry is counted, and bounded by the test."""
    latencies, problems = out["latencies"], out["problems"]
    while time.monotonic() < until and len(latencies) + len(problems) < 100_000:
        began = time.monotonic()
        for attempt in (1, 2):
            try:
                conn = wire.Connection.open(target.host, target.port, timeout=ANSWER_WAIT_S)
            except OSError as error:
                problems.append(f"connect: {error}")
                break
            try:
                sent = conn.send(ROOT, began + ANSWER_WAIT_S)
                response = read_response(conn, began + ANSWER_WAIT_S)
            finally:
                conn.close()
            if response is not None and response.status == 302:
                latencies.append(time.monotonic() - began)
            elif sent and response is None and conn.closed and not conn.received and attempt == 1:
                out["retried"] += 1
                continue
            elif sent and response is None:
                problems.append(
                    "a complete request went unanswered: "
                    + ("closed" if conn.closed else "no answer")
                    + f" after {time.monotonic() - began:.2f} s"
                    + (" (on its retry)" if attempt == 2 else "")
                )
            else:
                problems.append(f"answered {wire.escape(response.raw) if response else 'nothing'} (sent: {sent})")
            break
        time.sleep(max(0.0, began + interval_s - time.monotonic()))


@pytest.mark.scenario("slowloris at the cap")
def test_fresh_clients_are_served_fast_under_slowloris_attack_at_the_cap(base_argv, request, record_property):
    """2 × cap slowloris connections (one octet every 0.25 s, reconnecting when closed) for the
    attack's length; a fresh client every ~40 ms gets its 302 within 750 ms (p99)."""
    seconds = request.config.getoption("--renard-attack-seconds")
    # One thread: SPEC §7.5 lets each thread choose among its own connections, and a thread
    # whose attackers all sit in the other thread may rightly evict a client whose request is
    # still in flight. The order of §7.5 guarantees fresh clients only within one thread.
    flags = {**SHORT, "--max-connections": str(CAP), "--threads": "1"}
    with started(request, base_argv, flags) as server:
        target = server.target
        baseline = baseline_fds(server)
        head = [SLOW_HEAD[i : i + 1] for i in range(len(SLOW_HEAD))]
        drips = [Drip(target, head, 0.25) for _ in range(2 * CAP)]
        time.sleep(0.5)  # the cap is full of attackers before the first fresh client
        start = time.monotonic()
        end = start + seconds
        fresh: dict = {"latencies": [], "problems": [], "retried": 0}
        interval = min(0.04, seconds / (FRESH_MIN * 1.25))
        client = threading.Thread(target=fresh_clients, args=(target, end, interval, fresh), daemon=True)
        reconnects = [0]

        def tick(now):  # an attacker closed (evicted or 408) comes back after its drip interval
            for index, drip in enumerate(drips):
                if drip.conn.closed and now >= drip.next_at and reconnects[0] < 100_000:
                    drip.conn.close()
                    with contextlib.suppress(OSError):
                        drips[index] = Drip(target, head, 0.25)
                        reconnects[0] += 1
            return False

        client.start()
        try:
            while time.monotonic() < end:  # `drive` on the current set, re-registered each round
                drive(list(drips), min(end, time.monotonic() + 0.5), tick)
        finally:
            client.join(ANSWER_WAIT_S + 1)
            open_attackers = sum(not d.conn.closed for d in drips)
            for drip in drips:
                drip.conn.close()
        latencies, problems = fresh["latencies"], fresh["problems"]
        record_property("attack_seconds", seconds)
        record_property("attackers", 2 * CAP)
        record_property("max_connections", CAP)
        record_property("reconnections", reconnects[0])
        record_property("fresh_requests", len(latencies) + len(problems))
        record_property("fresh_unanswered", len(problems))
        record_property("fresh_retried", fresh["retried"])
        if len(latencies) >= 2:
            record_property("fresh_median_ms", round(statistics.median(latencies) * 1000, 2))
            record_property("fresh_p99_ms", round(statistics.quantiles(latencies, n=100)[98] * 1000, 2))
        assert not problems, f"{len(problems)} fresh clients not served under attack, e.g. {problems[:3]}"
        assert len(latencies) >= FRESH_MIN, f"only {len(latencies)} fresh requests in {seconds:g} s"
        assert fresh["retried"] <= FRESH_RETRIED_MAX * len(latencies), (
            f"{fresh['retried']} of {len(latencies)} fresh clients were closed unanswered before a retry "
            f"served them (at most {FRESH_RETRIED_MAX:.0%} allowed)"
        )
        p99 = statistics.quantiles(latencies, n=100)[98]
        assert p99 <= FRESH_P99_S, (
            f"fresh clients under attack: p99 {p99 * 1000:.0f} ms over {len(latencies)} requests (bound "
            f"{FRESH_P99_S * 1000:.0f} ms); median {statistics.median(latencies) * 1000:.1f} ms; "
            f"{2 * CAP} attackers, {reconnects[0]} reconnections, {open_attackers} open at the end"
        )
        assert_fds_back(server, baseline, "the attack ended")


# --- connection flood ---------------------------------------------------------------------------

FLOOD_CAP = 1000
# Descriptors a server may hold over its baseline and the cap: while it reads them once the
# connects are done, and at any moment of the flood (the few connections each thread has
# accepted and not yet evicted for, SPEC §7.5, and closes not yet done). Every renard read 0
# to 3 over once the connects were done, and its peak 0 to 8 over (java's 4 to 8); a burst
# accept crosses the cap by hundreds (cpp's multishot: 773 to 814 over), so each margin is 3x
# the highest reading.
FLOOD_HELD_OVER = 12
FLOOD_PEAK_OVER = 32


def flood(target, count: int, within_s: float = 20.0) -> tuple[list[socket.socket], dict]:
    """`count` non-blocking connects at once; returns the sockets and how their connects ended."""
    family = socket.AF_INET6 if ":" in target.host else socket.AF_INET
    socks, outcome = [], {"connected": 0, "refused": 0, "other": 0, "pending": 0}
    selector = selectors.DefaultSelector()
    try:
        for _ in range(count):
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setblocking(False)
            socks.append(sock)
            code = sock.connect_ex((target.host, target.port))
            if code in (0, errno.EINPROGRESS):
                selector.register(sock, selectors.EVENT_WRITE)
            else:
                outcome["refused" if code == errno.ECONNREFUSED else "other"] += 1
        deadline = time.monotonic() + within_s
        while selector.get_map() and time.monotonic() < deadline:
            for key, _ in selector.select(0.2):
                selector.unregister(key.fileobj)
                code = key.fileobj.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                outcome["connected" if code == 0 else "refused" if code == errno.ECONNREFUSED else "other"] += 1
        outcome["pending"] = len(selector.get_map())
    finally:
        selector.close()
    return socks, outcome


# Memory: rounds until one after the first grows by at most FLOOD_GROWTH_KIB (a leak of 1 KiB
# a connection grows 10 000 KiB every round), FLOOD_ROUNDS at most. Measured (docs/
# reliability.md, "Every resource bound"): js-node's collector took up to four rounds.
FLOOD_ROUNDS = 8
FLOOD_GROWTH_KIB = 4096


@pytest.mark.scenario("connection flood")
def test_connection_flood_beyond_the_cap_is_evicted_and_memory_and_descriptors_return(
    base_argv, request, record_property
):
    """min(10 000, our descriptor limit) connections at once against --max-connections 1000,
    in rounds (two at least): the server never holds more than the cap (read once the
    connects are done, and its peak sampled every millisecond through the flood: a burst
    accepted at once shows only there), serves a fresh client meanwhile, and returns to its
    descriptors after each.

    Descriptors are a level: the cap plus the few connections each thread has accepted and not
    yet evicted for (SPEC §7.5) and closes not yet done; every renard's peak is 1 to 8 over
    (the cap's overshoot by a multishot accept read 1 773 to 1 814). Memory is growth that
    repeats (support.Growth): a leak per connection lifts every round after the first (1 KiB
    a connection: 10 000 KiB a round); a high-water mark and a collector's garbage leave one
    round within the bound in the rounds the test gives them."""
    count = min(10_000, raise_fd_limit() - 512)
    assert count > FLOOD_CAP, f"the descriptor limit allows only {count} connections"
    with started(request, base_argv, {**SHORT, "--max-connections": str(FLOOD_CAP)}) as server:
        target = server.target
        baseline = baseline_fds(server)
        growth = Growth([settled_rss_kib(server)])
        for number in range(1, FLOOD_ROUNDS + 1):
            if growth.no_leak_seen(FLOOD_GROWTH_KIB):
                break
            socks: list[socket.socket] = []
            try:
                with server.peak_fd_count() as peak:
                    socks, outcome = flood(target, count)
                    held = server.fd_count()
                    response = served_again(target, within_s=ANSWER_WAIT_S)
                figures = {"connections": count, **outcome, "server_fds": held, "server_fds_peak": peak[0]}
                record_property(f"flood_round_{number}", figures)
                assert held <= baseline + FLOOD_CAP + FLOOD_HELD_OVER, (
                    f"{held} descriptors during round {number} of a flood of {count} (cap {FLOOD_CAP}, "
                    f"baseline {baseline})"
                )
                assert peak[0] <= baseline + FLOOD_CAP + FLOOD_PEAK_OVER, (
                    f"{peak[0]} descriptors at the peak of round {number} of a flood of {count} (cap {FLOOD_CAP}, "
                    f"baseline {baseline}, {FLOOD_PEAK_OVER} over allowed)"
                )
                assert response is not None and response.status == 302, (
                    f"a fresh client was not served during round {number} of the flood ({outcome})"
                )
                assert outcome["pending"] == 0, f"connects still pending 20 s into the flood: {outcome}"
            finally:
                for sock in socks:
                    sock.close()
            released = f"round {number}: the flood of {count} connections was released"
            accepted_s = assert_fds_back(server, baseline, released)
            record_property(f"flood_round_{number}_accepted_s", accepted_s)
            growth.readings.append(settled_rss_kib(server))
        record_property("fds_baseline", baseline)
        record_property("rss_kib", growth.readings)
        assert growth.no_leak_seen(FLOOD_GROWTH_KIB), (
            f"{growth.describe(f'flood of {count}')}: every one more than {FLOOD_GROWTH_KIB} KiB, a leak"
        )


SMALL_CAP = 50
SMALL_CAP_FLOOD = 5000  # connections a round
# Rounds until one after the first grows by at most SMALL_CAP_GROWTH_KIB (a leak of 1 KiB a
# connection grows 5 000 KiB every round), SMALL_CAP_ROUNDS at most: js-bun's collector lets
# up to 8 rounds grow by 2 to 3.6 MB each before it takes them back (docs/reliability.md,
# "Every resource bound"), three times that is the most.
SMALL_CAP_ROUNDS = 24
SMALL_CAP_GROWTH_KIB = 1536


def connections_one_after_another(target, count: int, limit_s: float = 30.0) -> tuple[list[socket.socket], dict]:
    """Up to `count` blocking connects, each kept open, for at most limit_s; the sockets and figures."""
    socks, failed, slowest, began = [], 0, 0.0, time.monotonic()
    for _ in range(count):
        sock = socket.socket(socket.AF_INET6 if ":" in target.host else socket.AF_INET)
        sock.settimeout(ANSWER_WAIT_S)
        connecting = time.monotonic()
        try:
            sock.connect((target.host, target.port))
            socks.append(sock)
        except OSError:
            sock.close()
            failed += 1
        slowest = max(slowest, time.monotonic() - connecting)
        if time.monotonic() - began > limit_s:
            break
    figures = {"connected": len(socks), "failed": failed, "seconds": round(time.monotonic() - began, 2)}
    return socks, figures | {"slowest_connect_s": round(slowest, 3)}


@pytest.mark.scenario("connection flood")
def test_connections_faster_than_a_small_cap_leak_no_memory_round_after_round(base_argv, request, record_property):
    """Rounds of 5000 connections opened one after another as fast as they complete, each
    kept open, then all closed (two rounds at least, until one after the first is within the
    bound, 24 at most), against --max-connections 50 --threads 1 (one process: the cap
    is not split): every one beyond the cap evicts another; the descriptors stay at the cap and
    come back after each round.

    The defect it catches: memory kept per connection accepted (js-deno once kept 64 KiB
    of C heap per connection), which grows by the same amount every round: 1 KiB per
    connection is 5 000 KiB a round, 1 536 allowed. What it does not mistake for one
    (support.Growth): the first round's high-water mark (Go's freed stacks and heap, kept until
    its scavenger returns them: +1 000 to +2 000 KiB, then rounds that wander by -340 to +560
    KiB with no trend) and a collector's garbage (js-bun's +3 MB a round until its collection),
    each read as the lowest of a second of readings."""
    flags = {**SHORT, "--max-connections": str(SMALL_CAP), "--threads": "1"}
    with started(request, base_argv, flags) as server:
        target = server.target
        warm = wire.Connection.open(target.host, target.port)
        try:
            for _ in range(300):  # a runtime's own warm-up is not the flood's
                response = ask(warm)
                assert response is not None and response.status == 302, "a warm-up request was not answered"
        finally:
            warm.close()
        baseline = baseline_fds(server)
        growth = Growth([settled_rss_kib(server)])
        rounds = []
        for number in range(1, SMALL_CAP_ROUNDS + 1):
            if growth.no_leak_seen(SMALL_CAP_GROWTH_KIB):
                break
            socks: list[socket.socket] = []
            try:
                socks, figures = connections_one_after_another(target, SMALL_CAP_FLOOD)
                held = server.fd_count()
            finally:
                for sock in socks:
                    sock.close()
            assert held <= baseline + SMALL_CAP + 8, (
                f"{held} descriptors during round {number} of the flood (cap {SMALL_CAP}, baseline {baseline})"
            )
            released = f"round {number}: a flood of {len(socks)} connections was released"
            accepted_s = assert_fds_back(server, baseline, released)
            rounds.append(figures | {"server_fds": held, "accepted_s": accepted_s})
            growth.readings.append(settled_rss_kib(server))
        record_property("small_cap_flood", {"rounds": rounds, "rss_kib": growth.readings})
        assert growth.no_leak_seen(SMALL_CAP_GROWTH_KIB), (
            f"{growth.describe(f'round of {SMALL_CAP_FLOOD} connections at --max-connections {SMALL_CAP}')}: every "
            f"one more than {SMALL_CAP_GROWTH_KIB} KiB, a leak"
        )
        assert server.running(), "the server exited"


# --- slow reader: the output bound and the send deadline (SPEC §7.5) ---------------------------

IDLE_S = 3.0
SLOW_READER_BYTES = 20 * 1024 * 1024
# Over the baseline while a reader is stalled: unbounded buffering is about 100 MiB; every
# renard read 0.1 to 17.7 MB (js-bun 16.6 to 17.7, js-deno 10.9 to 15.7): 3x the widest spread.
SLOW_READER_RSS_KIB = 32 * 1024


@pytest.mark.scenario("slow reader")
def test_slow_reader_is_stopped_bounded_closed_at_the_send_deadline_and_others_are_served(
    base_argv, request, record_property
):
    flags = {"--header-timeout": "2", "--idle-timeout": str(IDLE_S)}
    with started(request, base_argv, flags) as server:
        target = server.target
        baseline = baseline_fds(server)
        rss_before = server.rss_kib()
        one = b"GET /?seed=slow HTTP/1.1\r\nHost: a\r\n\r\n"
        payload = memoryview(one * (SLOW_READER_BYTES // len(one)))
        sock = client_that_does_not_read(target)
        try:
            stalled = send_until_stalled(sock, payload, stall_s=1.0, limit_s=30.0)
            assert stalled is not None, "the server kept reading (20 MiB or 30 s) from a client that never reads"
            offset, stalled_at = stalled
            rss = server.rss_kib()
            record_property("octets_sent_before_the_server_stopped_reading", offset)
            record_property("rss_kib_before", rss_before)
            record_property("rss_kib_while_stalled", rss)
            assert rss <= rss_before + SLOW_READER_RSS_KIB, (
                f"VmRSS {rss} KiB with a stalled reader ({offset} octets of requests sent), {rss_before} KiB before"
            )
            other = served_again(target, within_s=ANSWER_WAIT_S)
            assert other is not None and other.status == 302, "another client was not served beside a stalled reader"
            count = server.wait_fd_count(baseline, stalled_at + IDLE_S + LATE_S + 1.0 - time.monotonic())
            record_property("closed_after_last_progress_s", round(time.monotonic() - stalled_at, 2))
            assert count <= baseline, (
                f"the stalled reader was not closed {IDLE_S + LATE_S + 1.0:g} s after its "
                f"last progress (--idle-timeout {IDLE_S:g}: the send deadline)"
            )
        finally:
            sock.close()
        assert server.running(), "the server exited"


# --- idle, half-closed and reset connections --------------------------------------------------


@pytest.mark.scenario("idle keep-alive")
def test_idle_keep_alive_connections_are_closed_at_the_idle_timeout(base_argv, request):
    """Each idle connection is closed between the idle timeout after its request was sent
    (the server's idle clock cannot start before it has the request) and the timeout plus
    LATE_S after its answer was read (it started before the answer was sent): bounds that a
    client or a server scheduled late cannot cross. From the answer instead, a client that
    read its answer 60 ms late saw a close 2.94 s after it."""
    with started(request, base_argv, {"--header-timeout": "2", "--idle-timeout": str(IDLE_S)}) as server:
        baseline = baseline_fds(server)
        conns, asked_at, answered_at = [], [], []
        try:
            for _ in range(50):
                conn = wire.Connection.open(server.target.host, server.target.port)
                conns.append(conn)
                asked_at.append(time.monotonic())
                response = ask(conn)
                assert response is not None and response.status == 302, "a request was not answered"
                answered_at.append(time.monotonic())
            end = answered_at[-1] + IDLE_S + LATE_S
            for conn in conns:
                conn.wait_eof(end)
            for index, (conn, asked, answered) in enumerate(zip(conns, asked_at, answered_at, strict=True)):
                assert conn.closed, f"idle connection {index} still open {IDLE_S + LATE_S:g} s after its answer"
                assert not conn.received, f"idle connection {index} got {wire.escape(bytes(conn.received))}"
                assert conn.eof_at - asked >= IDLE_S - EARLY_S, (
                    f"idle connection {index} closed {conn.eof_at - asked:.3f} s after its request was sent "
                    f"(answered after {answered - asked:.3f} s): before the idle timeout, {IDLE_S:g} s"
                )
        finally:
            for conn in conns:
                conn.close()
        assert_fds_back(server, baseline, "50 idle connections timed out")


HALF_HEAD = b"GET /?half HTTP/1.1\r\nHost: renard.test\r\nX-Half: "


@pytest.mark.scenario("half-closed, reset")
def test_half_closed_and_reset_connections_leave_nothing_behind(base_argv, request):
    with started(request, base_argv, SHORT) as server:
        target = server.target
        baseline = baseline_fds(server)
        shut = []
        for request_bytes, answered in ((ROOT, True), (HALF_HEAD, False)):
            for _ in range(30):  # the client shuts its side after a request (or half a head)
                conn = wire.Connection.open(target.host, target.port)
                conn.send(request_bytes, time.monotonic() + ANSWER_WAIT_S)
                conn.sock.shutdown(socket.SHUT_WR)
                shut.append((conn, answered))
        for conn, answered in shut:
            conn.wait_eof(time.monotonic() + HEADER_S + LATE_S + CLOSE_WAIT_S)
            conn.close()
            assert conn.closed, "a half-closed connection was never closed"
            if answered:
                response = one_response(bytes(conn.received))
                assert response is not None and response.status == 302, (
                    f"a request followed by a half-close got {wire.escape(bytes(conn.received))}"
                )
        for request_bytes in (HALF_HEAD, ROOT * 2000):  # reset mid-request, and mid-answer
            for _ in range(30):
                sock = socket.create_connection((target.host, target.port), timeout=CLOSE_WAIT_S)
                with contextlib.suppress(OSError):
                    sock.sendall(request_bytes)
                reset(sock)
        assert server.running(), f"the server exited (status {server.process.poll()}) after reset connections"
        response = served_again(target)
        assert response is not None and response.status == 302, "not served after half-closed and reset connections"
        assert_fds_back(server, baseline, "half-closed and reset connections")


# --- the drain under load (SPEC §7.6) -----------------------------------------------------------

DRAIN_CLIENTS = 8


def keep_asking(target, stop_at: float, tally: dict, lock: threading.Lock) -> None:
    """Requests back to back on one keep-alive connection, honouring `Connection: close`: stops
    at the answer that carries it, checks at once that a new connection is refused, then
    that the told connection is closed."""

    def count(key, detail=None):
        with lock:
            tally[key] += 1
            if detail:
                tally["details"].append(detail)

    conn = wire.Connection.open(target.host, target.port)
    try:
        while time.monotonic() < stop_at:
            if not conn.send(ROOT, time.monotonic() + ANSWER_WAIT_S):
                count("bare_close" if conn.closed and not conn.received else "send_failed", conn.send_failed)
                return
            response = read_response(conn, time.monotonic() + ANSWER_WAIT_S)
            if response is None:
                if not conn.closed:
                    count("hung")
                elif conn.received:
                    count("truncated", wire.escape(bytes(conn.received)))
                else:
                    count("bare_close")
                return
            count("answered")
            if announces_close(response):
                count("told")
                # At once, not after this connection's close: every listener was closed
                # before this answer was sent, so no gap of a wrong order is waited out.
                problem = refused_outright(target, CLOSE_WAIT_S)
                if problem.startswith("a new connection was answered"):
                    count("late_served", problem)
                else:
                    count("not_refused" if problem else "refused", problem)
                conn.wait_eof(time.monotonic() + CLOSE_WAIT_S)
                if not conn.closed:
                    count("hung")
                return
    finally:
        conn.close()


@pytest.mark.scenario("drain under load")
def test_sigterm_under_load_loses_no_request_and_exits_0_within_the_drain_window(base_argv, request, record_property):
    window = 1.0
    flags = {**SHORT, "--drain-timeout": str(window)}
    with started(request, base_argv, flags) as server:
        tally = {
            key: 0
            for key in (
                "answered",
                "told",
                "refused",
                "late_served",
                "not_refused",
                "truncated",
                "bare_close",
                "send_failed",
                "hung",
            )
        }
        tally["details"] = []
        lock = threading.Lock()
        stop_at = time.monotonic() + 15
        clients = [
            threading.Thread(target=keep_asking, args=(server.target, stop_at, tally, lock), daemon=True)
            for _ in range(DRAIN_CLIENTS)
        ]
        for client in clients:
            client.start()
        time.sleep(1.0)
        with lock:
            before = tally["answered"]
        signalled_at = time.monotonic()
        server.signal(signal.SIGTERM)
        status = server.wait(window + 1.0 + 0.5)
        exited_after = time.monotonic() - signalled_at
        for client in clients:
            client.join(max(0.1, stop_at - time.monotonic()))
        assert before >= DRAIN_CLIENTS, f"only {before} requests answered before the signal: no load"
        summary = {k: v for k, v in tally.items() if k != "details"}
        record_property("clients", DRAIN_CLIENTS)
        record_property("outcomes", summary)
        record_property("exit_status", status)
        record_property("exited_after_s", round(exited_after, 2))
        assert tally["truncated"] == 0 and tally["bare_close"] == 0 and tally["send_failed"] == 0, (
            f"requests lost through SIGTERM: {summary}; e.g. {tally['details'][:3]}"
        )
        assert tally["hung"] == 0, f"connections left hanging through SIGTERM: {summary}"
        assert tally["told"] == DRAIN_CLIENTS, f"not every client was told `Connection: close`: {summary}"
        assert tally["late_served"] == 0, (
            f"a new connection was served after the signal: {summary}; e.g. {tally['details'][:3]}"
        )
        assert tally["not_refused"] == 0, (
            f"a listener was still open after a client was told to close: {summary}; e.g. {tally['details'][:3]}"
        )
        assert status == 0, (
            f"exit status {status} {exited_after:.2f} s after SIGTERM (None: still running; window {window:g} s + 1 s)"
        )


# --- soak ----------------------------------------------------------------------------------------

WRK_ERRORS_RE = re.compile(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)")
WRK_NON_3XX_RE = re.compile(r"Non-2xx or 3xx responses: (\d+)")
WRK_REQUESTS_RE = re.compile(r"(\d+) requests in")


def wrk(url: str, seconds: float, connections: int = 50) -> tuple[int, str]:
    """Runs wrk (one thread) for `seconds`; (requests, problems found in its report or "")."""
    argv = ["wrk", "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--timeout", "2s", url]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 60, stdin=subprocess.DEVNULL)
    output = done.stdout + done.stderr
    requests = WRK_REQUESTS_RE.search(output)
    problems = []
    if done.returncode != 0 or not requests:
        problems.append(f"wrk exit {done.returncode}: {output[-300:]}")
    errors = WRK_ERRORS_RE.search(output)
    if errors and any(int(n) for n in errors.groups()):
        problems.append(errors.group(0))
    non_3xx = WRK_NON_3XX_RE.search(output)
    if non_3xx and int(non_3xx.group(1)):
        problems.append(non_3xx.group(0))
    return (int(requests.group(1)) if requests else 0), "; ".join(problems)


@pytest.mark.scenario("soak")
def test_soak_under_wrk_without_errors_memory_growth_or_leaked_descriptors(base_argv, request, record_property):
    """wrk for --renard-soak-seconds after a 3 s warm-up: no error, no non-3xx answer, and
    descriptors back to the baseline after.

    The memory defect it catches: a leak per request, which lifts the resident set at the
    rate of the requests, so the highest reading of each third of the run is above the one
    before, by about the same. A collected runtime's resident set rises and falls with its
    collections (js-bun: 90-102 MB from one 10 s of wrk to the next, no trend), so one reading
    at each end compared two random points of that cycle; each third's peak is compared with
    the one before, and the verdict rests on the lesser of the two growths: both beyond
    (--renard-rss-slack - 1) / 2 of the first third's peak (5 % at 1.10)."""
    seconds = request.config.getoption("--renard-soak-seconds")
    slack = request.config.getoption("--renard-rss-slack")
    if shutil.which("wrk") is None:
        pytest.skip("wrk is not on PATH (scripts/deps test installs it)")
    with started(request, base_argv, {"--header-timeout": "2", "--idle-timeout": "60"}) as server:
        baseline = baseline_fds(server)
        url = f"http://{server.target.host}:{server.target.port}/"
        readings: list[tuple[float, int]] = []  # (time.monotonic(), VmRSS KiB) every 0.2 s
        sampling = threading.Event()

        def sample() -> None:
            while not sampling.wait(0.2):
                readings.append((time.monotonic(), server.rss_kib()))

        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            requests, problems = wrk(url, 3)
            assert not problems, f"warm-up: {problems}"
            began = time.monotonic()
            requests, problems = wrk(url, seconds)
            ended = time.monotonic()
        finally:
            sampling.set()
            sampler.join()
        third = (ended - began) / 3
        peaks = [max((rss for at, rss in readings if at < began), default=0)]
        for n in range(3):
            within = [rss for at, rss in readings if began + n * third <= at <= began + (n + 1) * third]
            assert within, f"no RSS reading in third {n + 1} of the run ({len(readings)} in all)"
            peaks.append(max(within))
        growth = Growth(peaks)
        bound = int(peaks[1] * (slack - 1) / 2)
        record_property("seconds", seconds)
        record_property("requests", requests)
        record_property("problems", problems)
        record_property("rss_kib_peaks_warm_up_and_thirds", peaks)
        record_property("rss_kib_range", [min(rss for _, rss in readings), max(rss for _, rss in readings)])
        record_property("fds_baseline", baseline)
        assert not problems, f"{seconds:g} s of wrk (50 connections): {problems}"
        assert requests > 0
        assert growth.no_leak_seen(bound), (
            f"{seconds:g} s of wrk ({requests} requests): the highest VmRSS of the warm-up, then of each third: "
            f"{peaks} KiB; each third grew over the one before by more than {bound} KiB: a leak"
        )
        assert_fds_back(server, baseline, f"{seconds:g} s of wrk")


# --- hostile bytes -------------------------------------------------------------------------------

REQUEST = b"GET /?seed=x HTTP/1.1\r\nHost: a\r\n\r\n"
H2_PREFACE_SETTINGS = (
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
    b"\x00\x00\x0c\x04\x00\x00\x00\x00\x00"  # SETTINGS, 12 octets, stream 0
    b"\x00\x03\x00\x00\x00\x64\x00\x04\x00\x00\xff\xff"
)
TLS_CLIENT_HELLO = bytes.fromhex(
    "160301005a010000560303" + "11" * 32 + "00" + "0004130113020100" + "0029"
    "0000000e000c0000096c6f63616c686f7374000a00080006001d00170018000d000400020403002b0003020304"
)
ERROR_STATUSES = {400, 414, 431, 501, 505}
# What the hostile bytes may leave resident once the collector has run: a 100 000-deep
# pipeline makes about 14 MiB of responses, which a garbage-collected runtime frees only at
# its next collection (Bun held 41 MiB more at the last answer once, 17 MiB a second later).
# Every renard read 0.2 to 26.5 MB after waiting (js-bun 21.9 to 26.5, js-deno 14.7 to 22.0):
# 48 MiB is over 3x the widest spread above the highest. It catches memory kept per request
# that the pipeline makes: 1 KiB an answer keeps about 100 MiB (planted: test_planted_defects).
# Below about 500 octets a request it does not, nor the pipeline's 14 MiB of responses kept:
# the soak's bound catches those (64 octets a request).
HOSTILE_RSS_GROWTH_KIB = 48 * 1024


def hostile_cases() -> list:
    rng = random.Random(7)
    cases = [
        ("http2-preface-with-settings", H2_PREFACE_SETTINGS, {505}),
        ("tls-client-hello", TLS_CLIENT_HELLO, {400}),
        ("1-mib-random", rng.randbytes(1 << 20), ERROR_STATUSES),
        ("1-mib-header", b"GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n", {431}),
        ("request-line-of-8-kib-of-slash", b"GET " + b"/" * 8192 + b" HTTP/1.1\r\nHost: a\r\n\r\n", {414}),
    ]
    return [pytest.param(payload, statuses, id=name) for name, payload, statuses in cases]


def sent_and_closed(target, payload: bytes) -> wire.Connection:
    """payload sent (the server may close before it is all sent), then read until EOF."""
    conn = wire.Connection.open(target.host, target.port)
    conn.send(payload, time.monotonic() + ANSWER_WAIT_S)
    conn.wait_eof(time.monotonic() + CLOSE_WAIT_S + 2)
    conn.close()
    return conn


@pytest.fixture(scope="module")
def hostile_server(base_argv, request):
    """One server for the hostile-bytes tests; checked after each for life, memory and leaks."""
    with started(request, base_argv, SHORT) as server:
        server.baseline_fds = baseline_fds(server)
        server.baseline_rss = server.rss_kib()
        yield server


def assert_unharmed(server, record_property=None) -> None:
    assert server.running(), f"the server exited (status {server.process.poll()})"
    response = served_again(server.target, within_s=ANSWER_WAIT_S)
    assert response is not None and response.status == 302, "not served after hostile bytes"
    bound = server.baseline_rss + HOSTILE_RSS_GROWTH_KIB
    at_once = server.rss_kib()
    rss = server.wait_rss_kib(bound, SETTLE_S)
    if record_property is not None:
        record_property("rss_kib_at_start_after_and_waited", [server.baseline_rss, at_once, rss])
    assert rss <= bound, (
        f"VmRSS {rss} KiB {SETTLE_S:g} s after, {server.baseline_rss} KiB at start: more than 48 MiB kept"
    )
    assert_fds_back(server, server.baseline_fds, "hostile bytes")


@pytest.mark.scenario("hostile bytes")
@pytest.mark.parametrize("payload, statuses", hostile_cases())
def test_hostile_bytes_get_the_spec_status_and_a_close(hostile_server, payload, statuses):
    conn = sent_and_closed(hostile_server.target, payload)
    response = one_response(bytes(conn.received))
    assert conn.closed, f"still open {CLOSE_WAIT_S + 2:g} s after the bytes: {wire.escape(bytes(conn.received))}"
    assert response is not None and response.status in statuses and announces_close(response), (
        f"expected one response {sorted(statuses)} with Connection: close, got {wire.escape(bytes(conn.received))}"
    )
    assert_unharmed(hostile_server)


@pytest.mark.scenario("hostile bytes")
def test_hostile_request_line_of_exactly_8192_octets_is_routed(hostile_server):
    line = b"GET /" + b"/" * (8192 - len(b"GET / HTTP/1.1")) + b" HTTP/1.1"
    assert len(line) == 8192
    conn = wire.Connection.open(hostile_server.target.host, hostile_server.target.port)
    try:
        response = ask(conn, line + b"\r\nHost: a\r\n\r\n")
        assert response is not None and response.status == 404, "an 8192-octet request line is served (404)"
    finally:
        conn.close()


@pytest.mark.scenario("hostile bytes")
@pytest.mark.parametrize("octet", [b"\x00", b"\r"], ids=["NUL", "bare-CR"])
@pytest.mark.parametrize("how", ["inserted", "replacing"])
def test_hostile_octet_at_every_position_of_a_request_is_400_and_close(hostile_server, octet, how):
    """NUL or a bare CR at each position of a request head: always 400 and close (SPEC §5)."""
    wrong = []
    for position in range(len(REQUEST)):
        tail = REQUEST[position:] if how == "inserted" else REQUEST[position + 1 :]
        if how == "replacing" and REQUEST[position : position + 1] == octet:
            continue
        variant = REQUEST[:position] + octet + tail
        conn = sent_and_closed(hostile_server.target, variant)
        response = one_response(bytes(conn.received))
        if not (conn.closed and response is not None and response.status == 400 and announces_close(response)):
            wrong.append(f"{wire.escape(variant)} -> {wire.escape(bytes(conn.received))} (closed: {conn.closed})")
    assert not wrong, f"{len(wrong)} positions not answered 400 and closed, e.g. {wrong[:3]}"
    assert_unharmed(hostile_server)


@pytest.mark.scenario("hostile bytes")
def test_hostile_pipeline_100000_deep_sent_at_once_is_answered_in_full(hostile_server, record_property):
    depth = 100_000
    conn = wire.Connection.open(hostile_server.target.host, hostile_server.target.port)
    try:
        began = time.monotonic()
        assert conn.send(ROOT * depth, began + 60), f"sending the pipeline: {conn.send_failed}"
        marker = b"HTTP/1.1 302 Found\r\n"
        counted = 0
        while counted < depth and time.monotonic() < began + 60 and not conn.closed:
            counted += conn.received.count(marker)
            del conn.received[: max(0, len(conn.received) - len(marker) + 1)]  # a kept tail holds no marker
            conn.pump(0.5)
        counted += conn.received.count(marker)
        assert counted == depth, f"{counted} answers to {depth} pipelined requests (closed: {conn.closed})"
        assert not conn.closed, "closed after answering a deep pipeline"
    finally:
        conn.close()
    assert_unharmed(hostile_server, record_property)
