"""peers/floor: one answer per head terminator, wherever the reads split it; the close
variant for `Connection: close`. Built with cc into a temporary directory."""

import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "peers" / "floor" / "floor.c"
LOCATION = "https://avatar.example.org/Renard-{n}.png"
ANSWER = b"HTTP/1.1 302 Found\r\nLocation: https://avatar.example.org/Renard-1.png\r\nContent-Length: 0\r\n"


@pytest.fixture(scope="module")
def binary(tmp_path_factory) -> Path:
    if not shutil.which("cc"):
        pytest.skip("cc is not on PATH")
    out = tmp_path_factory.mktemp("floor") / "floor"
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", "-o", str(out), str(SOURCE)], check=True)
    return out


@pytest.fixture(scope="module")
def floor(binary):
    """The port of a running floor."""
    proc = subprocess.Popen([str(binary), "127.0.0.1", "0", LOCATION], stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    assert line.startswith("listening on http://127.0.0.1:"), line
    yield int(line.rsplit(":", 1)[1])
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


def test_pipelined_heads_split_anywhere_each_get_one_answer(floor):
    heads = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" * 40
    with socket.create_connection(("127.0.0.1", floor)) as conn:
        for cut in range(0, len(heads), 7):  # every terminator split across writes somewhere
            conn.sendall(heads[cut : cut + 7])
            time.sleep(0.001)
        got = read_answers(conn, 40)
    assert got == (ANSWER + b"\r\n") * 40


def test_connection_close_gets_the_close_variant_and_the_connection_ends(floor):
    with socket.create_connection(("127.0.0.1", floor)) as conn:
        conn.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        got = read_answers(conn, 2)  # the server closes after one
    assert got == ANSWER + b"Connection: close\r\n\r\n"


def test_a_location_without_n_is_refused_with_status_2(binary):
    p = subprocess.run([str(binary), "127.0.0.1", "0", "https://x/"], capture_output=True, text=True, timeout=10)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "LOCATION" in p.stderr
