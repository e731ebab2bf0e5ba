"""System calls per request under strace: strace's summary read by name, the
count as the difference of two windows, the gate's decision on counts, the section in a
run's report, the command's bad input; and on real servers, that the count repeats (two
servers, two counts, within syscalls.TOLERANCE) and is what the design says: the flagship
one receive, one send and one epoll wait per keep-alive request, the floor no more. A
count, not a time: it holds on a slow, busy machine."""

import json
from pathlib import Path

import pytest

from arena.cli import main
from arena.counts import strace as syscallstrace
from arena.counts import syscalls
from arena.entries.build import build, needs_build
from arena.entries.manifest import discover, select
from arena.report import syscalls as report
from arena.report.loads import parts

REPO = Path(__file__).resolve().parents[2]
REQUESTS = 160  # N: windows of 160 and 1 760 requests, a second or two under strace

SUMMARY = """\
     calls syscall
---------- ----------------
      2000 sendto
      2001 recvfrom
      2001 epoll_pwait
---------- ----------------
      6002 total
"""


def test_the_strace_summary_is_read_by_name_without_the_total():
    assert syscallstrace.parse_summary(SUMMARY) == {"sendto": 2000, "recvfrom": 2001, "epoll_pwait": 2001}


def test_calls_per_request_are_the_difference_of_the_windows_over_ten_n():
    small = {"recvfrom": 101, "sendto": 100, "epoll_pwait": 102, "accept4": 1}
    large = {"recvfrom": 1101, "sendto": 1100, "epoll_pwait": 1102, "accept4": 1, "futex": 5}
    got = syscallstrace.per_request(small, large, 100)
    assert got == {"epoll_pwait": 1.0, "recvfrom": 1.0, "sendto": 1.0, "futex": 0.005}  # accept4: cancelled


def count(mode: str, total: float, background: float = 0.0) -> syscalls.Count:
    background_calls = {"epoll_wait": background} if background else {}
    return syscalls.Count(mode, 160, total, {"read": total}, {}, {}, 1.0, background_calls)


def counts(*totals: float, background: float = 0.0) -> list[syscalls.Count]:
    return [count("keepalive", t, background) for t in totals]


def test_a_count_that_moves_beyond_the_tolerance_is_a_regression_and_within_it_is_no_change():
    assert syscalls.decide(counts(3.0, 3.0), counts(3.04, 3.04)).outcome == "no change"
    worse = syscalls.decide(counts(3.0, 3.0), counts(4.0, 4.0))
    assert worse.outcome == "significant" and worse.regression(0.05) and worse.p is None
    better = syscalls.decide(counts(4.0, 4.0), counts(3.0, 3.0))
    assert better.outcome == "significant" and not better.regression(0.05)


def test_a_runtime_background_widens_the_tolerance_by_what_it_makes_by_the_clock():
    quiet = syscalls.decide(counts(3.0), counts(3.2))
    busy = syscalls.decide(counts(3.0, background=0.3), counts(3.2))
    assert quiet.outcome == "significant" and busy.outcome == "no change"


def test_the_runtime_calls_are_shown_apart_and_left_out_of_the_gate():
    calls = {"read": 1.01, "write": 1.0, "nanosleep": 0.7, "futex": 0.07}
    go = syscalls.Count("keepalive", 160, 2.78, calls, {}, {}, 1.0)
    assert go.runtime == 0.77 and go.request_calls == 2.01
    other = syscalls.Count("keepalive", 160, 2.31, {"read": 1.01, "write": 1.0, "nanosleep": 0.3}, {}, {}, 1.0)
    assert syscalls.decide([go], [other]).outcome == "no change"


def test_a_side_whose_own_counts_vary_widens_the_tolerance_by_that_spread():
    go_like = syscalls.decide(counts(2.78, 2.63), counts(2.70, 2.75))  # Go's nanosleep varies
    assert go_like.outcome == "no change"
    assert syscalls.decide(counts(2.78, 2.63), counts(3.00, 3.02)).outcome == "significant"


def written_run(tmp_path: Path) -> Path:
    rust = syscalls.EntryCounts("rust", "ours", [count("keepalive", 3.0)], threads=2, processes=1)
    go = syscalls.EntryCounts("go", "ours", [count("keepalive", 2.46, background=0.01)], threads=7, processes=1)
    broken = syscalls.EntryCounts("spring-boot", "peer", error="does not start: no java")
    syscalls.write(tmp_path / "syscalls" / "syscalls.json", [rust, go, broken], {"requests": 160})
    return tmp_path


def test_a_run_report_includes_the_counts_the_difference_to_the_flagship_and_the_entries_not_counted(tmp_path):
    (part,) = [p for p in parts(written_run(tmp_path)) if p.heading == report.HEADING]
    totals, names, missing = (s.table for s in part.sections)
    assert totals.rows == [
        ["rust", "ours", "3.00", "+0.00", "0.00", "2 (1)"],
        ["go", "ours", "2.46", "-0.54", "0.00", "7 (1)"],
    ]
    assert ["go", "keepalive", "read 2.46", "epoll_wait 0.01"] in names.rows
    assert missing.rows == [["spring-boot", "peer", "does not start: no java"]]
    assert "N = 160" in part.method


def test_a_counts_file_that_cannot_be_read_is_said_in_the_report(tmp_path):
    (tmp_path / "syscalls").mkdir()
    (tmp_path / "syscalls" / "syscalls.json").write_text('{"schema": 1, "entries": [{"entry": "x"}]}')
    (part,) = [p for p in parts(tmp_path) if p.heading == report.HEADING]
    assert "could not be read (SchemaError: method: missing key)" in part.method and part.sections == []


def test_an_unknown_mode_is_refused_in_one_line_with_status_2(capsys):
    assert main(["--repo", str(REPO), "syscalls", "floor", "--modes", "keepalive,slowloris"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--modes" in err and "slowloris" in err


def built(name: str):
    entry = select(discover(REPO), [name])[0]
    if not entry.available:
        pytest.skip(f"{name}: {entry.reason}")
    if needs_build(entry) and not build(entry, None).ok:
        pytest.fail(f"{name} does not build")
    return entry


@pytest.fixture(scope="module")
def counted():
    """Each of the flagship and the floor counted twice, each time a fresh server."""
    if syscalls.available():
        pytest.skip(syscalls.available())
    out = {}
    for name in ("rust", "floor"):
        entry = built(name)
        out[name] = [syscalls.count_entry(entry, ("keepalive", "pipeline16"), REQUESTS, 0) for _ in range(2)]
        for c in out[name]:
            assert c.error is None, c.error
    return out


@pytest.mark.parametrize("name", ["rust", "floor"])
@pytest.mark.parametrize("mode", ["keepalive", "pipeline16"])
def test_two_counts_of_a_native_entry_agree_within_the_tolerance(counted, name, mode):
    first, second = (c.count(mode).per_request for c in counted[name])
    assert abs(first - second) <= syscalls.TOLERANCE, (first, second)


def test_the_flagship_makes_one_receive_one_send_and_one_epoll_wait_per_keepalive_request(counted):
    for c in counted["rust"]:
        calls = c.count("keepalive").calls
        assert set(calls) == {"recvfrom", "sendto", "epoll_pwait"}, calls
        assert all(abs(v - 1) <= syscalls.TOLERANCE for v in calls.values()), calls
        assert abs(c.count("pipeline16").per_request - 3 / 16) <= syscalls.TOLERANCE  # one of each per write


def test_the_floor_makes_no_more_calls_than_the_flagship(counted):
    floor = max(c.count("keepalive").per_request for c in counted["floor"])
    rust = min(c.count("keepalive").per_request for c in counted["rust"])
    assert floor <= rust + syscalls.TOLERANCE
    assert set(counted["floor"][0].count("keepalive").calls) == {"read", "write", "epoll_wait"}


def test_the_command_writes_the_counts_into_a_run_and_its_report(tmp_path):
    if syscalls.available():
        pytest.skip(syscalls.available())
    built("floor")
    status = main(
        ["--repo", str(REPO), "syscalls", "floor", "--modes", "keepalive", "--requests", "32", "--run", str(tmp_path)]
    )
    assert status == 0
    doc = json.loads((tmp_path / "syscalls" / "syscalls.json").read_text())
    (floor,) = doc["entries"]
    assert floor["entry"] == "floor" and abs(floor["counts"][0]["per_request"] - 3) <= syscalls.TOLERANCE
    assert "System calls per request" in (tmp_path / "syscalls" / "report.md").read_text()


class OneAtATime:
    """A keep-alive server on loopback that answers a write holding one request, and closes
    a connection whose write holds more than one unanswered (as cpp-httplib drops pipelined
    requests); `pipelined` counts the writes it closed on. Bounded: it stops with the test."""

    ANSWER = b"HTTP/1.1 302 Found\r\nLocation: /1.png\r\nContent-Length: 0\r\n\r\n"

    def __init__(self):
        import socket
        import threading

        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.pipelined, self.stopped = 0, threading.Event()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        import threading

        while not self.stopped.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            threading.Thread(target=self.answer, args=(conn,), daemon=True).start()

    def answer(self, conn):
        conn.settimeout(5)
        with conn:
            while not self.stopped.is_set():
                try:
                    data = conn.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                heads = data.count(b"\r\n\r\n")
                if heads > 1:
                    self.pipelined += 1
                    return
                conn.sendall(self.ANSWER)
                if b"connection: close" in data.lower():
                    return

    def stop(self):
        self.stopped.set()
        self.thread.join(timeout=5)
        self.listener.close()


def test_the_warm_up_of_an_entry_that_drops_pipelined_requests_writes_one_request_at_a_time():
    server = OneAtATime()
    try:
        syscalls.warm_up(server.port, 0, requests=200, pipelined=False)
        assert server.pipelined == 0
        with pytest.raises(Exception, match="without answering"):  # the planted case: pipelined, it is dropped
            syscalls.warm_up(server.port, 0, requests=200)
        assert server.pipelined >= 1  # the client retries a dropped write once, anew
    finally:
        server.stop()


def test_an_entry_that_declares_no_pipelining_is_counted_one_request_per_write_only():
    import copy

    if syscalls.available():
        pytest.skip(syscalls.available())
    floor = copy.copy(built("floor"))
    floor.pipelining = False
    counted = syscalls.count_entry(floor, tuple(syscalls.MODES), 32, 0)
    assert counted.error is None, counted.error
    assert [c.mode for c in counted.counts] == ["keepalive", "close"]
