"""Start-up and memory (dev tool): exec to first 302 (median of 10), and peak RSS (VmHWM)
of one worker holding 1000 connections that each had one answer.

    ../../.venv/bin/python dev/footprint.py
"""

from __future__ import annotations

import socket
import statistics
import subprocess
import time
from pathlib import Path

ENTRY = Path(__file__).resolve().parents[1]
REQUEST = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"


def first_answer_ms(port: int) -> float:
    start = time.perf_counter()
    server = subprocess.Popen([str(ENTRY / "renard"), "--listen", f"127.0.0.1:{port}",
                               "--threads", "1"], stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1) as sock:
                    sock.sendall(REQUEST)
                    if sock.recv(4096).startswith(b"HTTP/1.1 302"):
                        return (time.perf_counter() - start) * 1000
            except OSError:
                time.sleep(0.0005)
    finally:
        server.terminate()
        server.wait(5)


def vm_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def main() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    times = sorted(first_answer_ms(port) for _ in range(10))
    print(f"exec to first 302: median {statistics.median(times):.0f} ms "
          f"({times[0]:.0f}-{times[-1]:.0f})")
    server = subprocess.Popen([str(ENTRY / "renard"), "--listen", "127.0.0.1:0", "--threads", "1"],
                              stderr=subprocess.PIPE)
    port = int(server.stderr.readline().decode().rsplit(":", 1)[1])
    try:
        time.sleep(0.3)
        before = vm_kib(server.pid, "VmRSS")
        conns = []
        for _ in range(1000):
            sock = socket.create_connection(("127.0.0.1", port))
            sock.sendall(REQUEST)
            conns.append(sock)
        for sock in conns:
            sock.recv(4096)
        print(f"RSS {before} kB before connecting; VmHWM {vm_kib(server.pid, 'VmHWM')} kB "
              f"with 1000 open connections after one answer each")
        for sock in conns:
            sock.close()
    finally:
        server.terminate()
        server.wait(5)


if __name__ == "__main__":
    main()
