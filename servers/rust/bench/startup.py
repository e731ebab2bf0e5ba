"""Time from exec to the first 302: spawn, poll-connect every 0.5 ms, GET /, read. Median of 10.

Run from servers/rust with the project's virtualenv (it has the runner's launcher):
    ../../.venv/bin/python bench/startup.py [PROGRAM]
"""

import socket
import statistics
import sys
import time
from pathlib import Path

from renard_conformance.launcher import ServerProcess, free_port

RUNS = 10
RENARD = Path(__file__).resolve().parents[1] / "bin" / "renard"


def first_answer_ms(program: str) -> float:
    """Exec to the first 302, in milliseconds (ready = the port accepts, polled every 0.5 ms)."""
    port = free_port()
    server = ServerProcess(
        [
            "taskset",
            "-c",
            "0",
            program,
            "--listen",
            f"127.0.0.1:{port}",
            "--threads",
            "1",
        ],
        ready="port",
        port=port,
    ).start()
    try:
        while True:
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=1)
                break
            except ConnectionRefusedError:
                time.sleep(0.0005)
        with s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
            data = s.recv(4096)
        elapsed = (time.perf_counter() - server.started_at) * 1000
        assert data.startswith(b"HTTP/1.1 302"), data
        return elapsed
    finally:
        server.stop()


def main() -> None:
    program = sys.argv[1] if len(sys.argv) > 1 else str(RENARD)
    times = [first_answer_ms(program) for _ in range(RUNS)]
    print(
        "ms:",
        " ".join(f"{t:.1f}" for t in times),
        f"| median {statistics.median(times):.1f}",
    )


if __name__ == "__main__":
    main()
