"""Exec to first answer, in ms: posix_spawn of the program (no taskset or shell in
between), connect polled every 0.2 ms, GET /, the 302 read. 20 runs; min and median.

    python3 bench/startup.py [PROGRAM]          # from servers/c; default bin/renard-c
"""
import os
import socket
import statistics
import sys
import time

PROGRAM = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "bin", "renard-c")
RUNS = 20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def first_answer_ms() -> float:
    port = free_port()
    devnull = os.open(os.devnull, os.O_WRONLY)
    actions = [(os.POSIX_SPAWN_DUP2, devnull, 2)]
    start = time.perf_counter()
    pid = os.posix_spawn(PROGRAM, [PROGRAM, "--listen", f"127.0.0.1:{port}", "--threads", "1"], os.environ,
                         file_actions=actions)
    try:
        deadline = start + 5
        while True:
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=1)
                break
            except ConnectionRefusedError:
                if time.perf_counter() > deadline:
                    raise RuntimeError("never listened") from None
                time.sleep(0.0002)
        with s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n")
            answer = s.recv(4096)
        elapsed = (time.perf_counter() - start) * 1000
        assert answer.startswith(b"HTTP/1.1 302 "), answer
        return elapsed
    finally:
        os.kill(pid, 15)
        os.waitpid(pid, 0)
        os.close(devnull)


times = [first_answer_ms() for _ in range(RUNS)]
print(f"{PROGRAM}: min {min(times):.2f} ms, median {statistics.median(times):.2f} ms over {RUNS} runs")
