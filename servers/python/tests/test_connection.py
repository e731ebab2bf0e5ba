"""SPEC §6, §7: one connection and its worker, driven through a fake transport: one write
per read, bodies skipped, closing and lingering, the output bound, eviction order."""

import re
import time

from renard_py import config
from renard_py.connection import CLOSING, LINGERING, OPEN, Connection
from renard_py.worker import LocalCounter, Worker

GET = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"


class FakeTransport:
    def __init__(self, unsent: int = 0):
        self.writes: list[bytes] = []
        self.unsent = unsent
        self.eof = self.closed = self.aborted = self.reading_paused = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def get_write_buffer_size(self) -> int:
        return self.unsent

    def set_write_buffer_limits(self, high: int) -> None:
        pass

    def get_extra_info(self, name: str):
        return None

    def can_write_eof(self) -> bool:
        return True

    def write_eof(self) -> None:
        self.eof = True

    def close(self) -> None:
        self.closed = True

    def abort(self) -> None:
        self.aborted = True

    def pause_reading(self) -> None:
        self.reading_paused = True

    def resume_reading(self) -> None:
        self.reading_paused = False


def worker(*args: str) -> Worker:
    return Worker(config.parse(list(args), {}, cpus=1), LocalCounter())


def connect(w: Worker) -> tuple[Connection, FakeTransport]:
    conn, transport = Connection(w), FakeTransport()
    conn.connection_made(transport)
    return conn, transport


def statuses(data: bytes) -> list[int]:
    return [int(s) for s in re.findall(rb"HTTP/1\.1 (\d{3}) ", data)]


def test_pipelined_requests_are_answered_with_one_write():
    conn, transport = connect(worker())
    conn.data_received(GET + b"GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n" + GET)
    assert len(transport.writes) == 1
    assert statuses(transport.writes[0]) == [302, 200, 302]
    assert conn.phase == OPEN


def test_a_body_is_skipped_across_reads_and_never_parsed():
    conn, transport = connect(worker())
    conn.data_received(b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 27\r\n\r\n"
                       b"GET / HTTP/1.1\r\n")
    conn.data_received(b"Host: a\r\n\r\n" + GET)
    assert statuses(b"".join(transport.writes)) == [404, 302]


def test_a_head_split_across_reads_is_answered_once_whole():
    conn, transport = connect(worker())
    for octet in GET:
        conn.data_received(bytes([octet]))
    assert statuses(b"".join(transport.writes)) == [302]
    assert conn.held == b""


def test_a_refusal_closes_and_lingers():
    conn, transport = connect(worker())
    conn.data_received(b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" + GET)
    assert transport.writes[0].endswith(b"Connection: close\r\n\r\n")
    assert statuses(b"".join(transport.writes)) == [400]
    assert (transport.eof, conn.phase) == (True, LINGERING)


def test_connection_close_with_nothing_after_closes_at_once():
    conn, transport = connect(worker())
    conn.data_received(b"GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
    assert (transport.closed, transport.eof, conn.phase) == (True, False, CLOSING)


def test_http10_keep_alive_is_announced():
    conn, transport = connect(worker())
    conn.data_received(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    assert b"\r\nConnection: keep-alive\r\n\r\n" in transport.writes[0]


def test_answers_stop_at_the_output_bound_and_wait():
    conn, transport = connect(worker())
    conn.write_paused = True  # the transport holds more than the bound allows
    conn.data_received(GET * 3)
    assert transport.writes == [] and transport.reading_paused and conn.held == GET * 3
    conn.resume_writing()
    assert statuses(b"".join(transport.writes)) == [302, 302, 302]
    assert not transport.reading_paused


def test_shutdown_answers_with_connection_close():
    w = worker()
    conn, transport = connect(w)
    w.shutting_down = True
    conn.data_received(GET)
    assert b"\r\nConnection: close\r\n\r\n" in transport.writes[0]


def test_a_connection_opened_in_the_drain_window_is_served_with_close():
    # One the drain took from the listener's queue (SPEC §7.6): opened a turn after the signal.
    w = worker()
    w.shutting_down, w.drain_ends, w.opening = True, time.monotonic() + 60, 1
    conn, transport = connect(w)
    assert not transport.aborted and w.opening == 0
    conn.data_received(GET)
    assert b"\r\nConnection: close\r\n\r\n" in transport.writes[0]


def test_a_connection_opened_after_the_drain_window_is_dropped():
    w = worker()
    w.shutting_down, w.drain_ends = True, time.monotonic() - 1
    _, transport = connect(w)
    assert transport.aborted and transport.writes == []


def test_eviction_takes_lingering_then_earliest_partial_then_longest_idle():
    w = worker("--max-connections", "4")
    _, idle_transport = connect(w)
    connect(w)  # idle too, accepted later
    partial, partial_transport = connect(w)
    partial.data_received(b"GET / HT")
    lingering, lingering_transport = connect(w)
    lingering.data_received(b"BAD\x01")
    newcomers = [connect(w) for _ in range(3)]
    assert lingering_transport.aborted and partial_transport.aborted and idle_transport.aborted
    assert not any(t.aborted for _, t in newcomers)


def test_a_connection_with_unsent_answers_is_never_evicted():
    w = worker("--max-connections", "1")
    _, busy_transport = connect(w)
    busy_transport.unsent = 100
    _, newcomer_transport = connect(w)
    assert not busy_transport.aborted and newcomer_transport.aborted
