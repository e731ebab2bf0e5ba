"""peers/floor: floor.c (epoll) and floor-uring.c (io_uring) give one answer per head
terminator, wherever the reads split it, and the close variant for `Connection: close`; and
each pays the fewest system calls its mechanism allows, counted with strace over a fixed
number of requests (a count, not a time: it holds on a busy machine). Built with cc into a
temporary directory."""

import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

FOLDER = Path(__file__).resolve().parents[2] / "peers" / "floor"
LOCATION = "https://avatar.example.org/Renard-{n}.png"
ANSWER = b"HTTP/1.1 302 Found\r\nLocation: https://avatar.example.org/Renard-1.png\r\nContent-Length: 0\r\n"
REQUEST = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
FLOORS = {  # name: (source, libraries)
    "floor": ("floor.c", []),
    "floor-uring": ("floor-uring.c", ["-luring"]),
}
REQUESTS = 2000  # sequential keep-alive requests counted under strace


@pytest.fixture(scope="module", params=sorted(FLOORS))
def binary(request, tmp_path_factory) -> Path:
    name = request.param
    source, libraries = FLOORS[name]
    if not shutil.which("cc"):
        pytest.skip("cc is not on PATH")
    if libraries and not Path("/usr/include/liburing.h").exists():
        pytest.skip("liburing-dev is not installed (scripts/deps installs it from peers/floor/entry.toml)")
    out = tmp_path_factory.mktemp(name) / name
    cmd = ["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(out), str(FOLDER / source), *libraries]
    subprocess.run(cmd, check=True)
    return out


@pytest.fixture(scope="module")
def server(binary):
    """(pid, port) of a running floor."""
    proc = subprocess.Popen([str(binary), "127.0.0.1", "0", LOCATION], stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    if line.startswith("floor-uring: io_uring:"):  # e.g. kernel.io_uring_disabled, or a seccomp filter
        proc.wait(5)
        pytest.skip(f"io_uring is not available here: {line.strip()}")
    assert line.startswith("listening on http://127.0.0.1:"), line
    yield proc.pid, int(line.rsplit(":", 1)[1])
    proc.terminate()
    proc.wait(5)


def read_answers(conn: socket.socket, count: int, timeout_s: float = 5.0) -> bytes:
    conn.settimeout(timeout_s)
    got = b""
    while got.count(b"HTTP/1.1 302") < count:
        chunk = conn.recv(65536)
        if not chunk:
            break
        got += chunk
    return got


def ask(conn: socket.socket) -> None:
    """One request, and its whole answer read (it ends with the empty line: no body)."""
    conn.sendall(REQUEST)
    got = b""
    while not got.endswith(b"\r\n\r\n"):
        chunk = conn.recv(4096)
        assert chunk, "the floor closed a keep-alive connection"
        got += chunk
    assert got == ANSWER + b"\r\n"


class Strace:
    """`strace -f -c -p PID` from when it has attached until stop(): calls by name."""

    def __init__(self, pid: int, out: Path):
        if not shutil.which("strace"):
            pytest.skip("strace is not on PATH (scripts/deps installs it from peers/floor/entry.toml)")
        self.out = out
        self.proc = subprocess.Popen(
            ["strace", "-f", "-c", "-p", str(pid), "-o", str(out)], stderr=subprocess.PIPE, text=True
        )
        line = self.proc.stderr.readline()  # "strace: Process PID attached": counting from here
        assert "attached" in line, line

    def stop(self) -> dict[str, int]:
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(10)
        calls = {}
        for line in self.out.read_text().splitlines():
            # % time  seconds  usecs/call  calls  [errors]  syscall
            m = re.match(r"\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?([a-z_0-9]+)$", line)
            if m and m.group(2) != "total":
                calls[m.group(2)] = int(m.group(1))
        return calls


def test_pipelined_heads_split_anywhere_each_get_one_answer(server):
    heads = REQUEST * 40
    with socket.create_connection(("127.0.0.1", server[1])) as conn:
        for cut in range(0, len(heads), 7):  # every terminator split across writes somewhere
            conn.sendall(heads[cut : cut + 7])
            time.sleep(0.001)
        got = read_answers(conn, 40)
    assert got == (ANSWER + b"\r\n") * 40


def test_sixteen_pipelined_requests_in_one_write_get_sixteen_answers(server):
    with socket.create_connection(("127.0.0.1", server[1])) as conn:
        for _ in range(50):
            conn.sendall(REQUEST * 16)
            assert read_answers(conn, 16) == (ANSWER + b"\r\n") * 16


def test_connection_close_gets_the_close_variant_and_the_connection_ends(server):
    with socket.create_connection(("127.0.0.1", server[1])) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        got = read_answers(conn, 2)  # the server closes after one
    assert got == ANSWER + b"Connection: close\r\n\r\n"


def test_a_client_that_leaves_does_not_stop_the_floor(server):
    for _ in range(20):
        with socket.create_connection(("127.0.0.1", server[1])) as conn:
            conn.sendall(REQUEST * 3)  # leaves before reading its answers
    with socket.create_connection(("127.0.0.1", server[1])) as conn:
        ask(conn)


def test_a_keepalive_request_costs_one_receive_one_send_and_no_rearm(server, tmp_path):
    """epoll: N reads, N writes, N epoll_waits (a wait or the last write may straddle attach or detach) and no
    epoll_ctl; io_uring: one io_uring_enter per request, receive and send inside the ring."""
    pid, port = server
    with socket.create_connection(("127.0.0.1", port)) as conn:
        ask(conn)  # accepted and registered before counting starts
        strace = Strace(pid, tmp_path / "strace.txt")
        for _ in range(REQUESTS):
            ask(conn)
        calls = strace.stop()
    if "io_uring_enter" in calls:  # a client slower than the wait's bound (10 ms) costs one more
        assert REQUESTS - 2 <= calls["io_uring_enter"] <= REQUESTS + REQUESTS // 100, calls
        assert set(calls) == {"io_uring_enter"}, calls
    else:
        # The last answer can reach the client before strace sees its write return: detached
        # then, strace has not counted it (seen once: 1 999 writes of 2 000 on a busy machine).
        assert calls.get("read") == REQUESTS and REQUESTS - 1 <= calls.get("write", 0) <= REQUESTS, calls
        assert REQUESTS - 1 <= calls.get("epoll_wait", 0) <= REQUESTS + 1, calls
        assert set(calls) == {"read", "write", "epoll_wait"}, calls


def test_a_connection_per_request_is_never_registered_with_epoll(server, tmp_path):
    """epoll: accept4, read, write, close and the listener's epoll_wait (+ accept4's EAGAIN)
    per connection; TCP_DEFER_ACCEPT hands over connections whose request is there, so none
    is registered (one accepted before its bytes arrive, after the kernel's 1 s wait, would
    be: a busy machine may cause a few). io_uring: two io_uring_enter per connection (one
    arms its receive, one sends the answer, chained to shutdown and close, and waits)."""
    pid, port = server
    connections = 200
    strace = Strace(pid, tmp_path / "strace.txt")
    for _ in range(connections):
        with socket.create_connection(("127.0.0.1", port)) as conn:
            conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            assert read_answers(conn, 2) == ANSWER + b"Connection: close\r\n\r\n"
    calls = strace.stop()
    if "io_uring_enter" in calls:
        assert calls["io_uring_enter"] <= 2 * connections + connections // 20 and set(calls) == {"io_uring_enter"}, (
            calls
        )
    else:
        assert calls.get("epoll_ctl", 0) <= connections // 20, calls
        assert sum(calls.values()) <= 6 * connections + 2 + 2 * calls.get("epoll_ctl", 0), calls


def test_a_location_without_n_is_refused_with_status_2(binary):
    p = subprocess.run([str(binary), "127.0.0.1", "0", "https://x/"], capture_output=True, text=True, timeout=10)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "LOCATION" in p.stderr
