"""Peak RSS (VmHWM) of renard with 1000 open idle connections, each after one request.

Run from servers/rust with the project's virtualenv (it has the runner's launcher):
    ../../.venv/bin/python bench/rss_idle.py [PROGRAM FLAGS...]
Default: taskset -c 0 bin/renard --listen 127.0.0.1:0 --threads 1.
"""

import socket
import sys
import time
from pathlib import Path

from renard_conformance.launcher import ServerProcess, proc_kib

CONNECTIONS = 1000
RENARD = Path(__file__).resolve().parents[1] / "bin" / "renard"


def status(server: ServerProcess) -> str:
    return f"VmRSS {proc_kib(server.pid, 'status', 'VmRSS')} kB, VmHWM {proc_kib(server.pid, 'status', 'VmHWM')} kB"


def main() -> None:
    command = sys.argv[1:] or [str(RENARD), "--listen", "127.0.0.1:0", "--threads", "1"]
    server = ServerProcess(["taskset", "-c", "0", *command]).start().wait_ready()
    try:
        print("at start:", status(server))
        socks = []
        for _ in range(CONNECTIONS):
            s = socket.create_connection((server.host, server.port), timeout=5)
            s.sendall(b"GET / HTTP/1.1\r\nHost: renard.test\r\n\r\n")
            socks.append(s)
        answered = sum(s.recv(4096).startswith(b"HTTP/1.1 302") for s in socks)
        time.sleep(0.5)
        print(f"answered {answered} with {CONNECTIONS} open:", status(server))
        for s in socks:
            s.close()
        time.sleep(0.5)
        print("after close:", status(server))
    finally:
        print("exit", server.stop())


if __name__ == "__main__":
    main()
