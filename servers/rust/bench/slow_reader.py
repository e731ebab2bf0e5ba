"""A client that pipelines for 3 s and never reads: renard's memory stays bounded (SPEC §7.5),
then it drops the connection after --idle-timeout (the send deadline).

Run from servers/rust with the project's virtualenv (it has the runner's launcher):
    ../../.venv/bin/python bench/slow_reader.py
"""

import socket
import time
from pathlib import Path

from renard_conformance.launcher import ServerProcess, proc_kib

RENARD = Path(__file__).resolve().parents[1] / "bin" / "renard"


def main() -> None:
    command = [
        str(RENARD),
        "--listen",
        "127.0.0.1:0",
        "--threads",
        "1",
        "--idle-timeout",
        "3",
    ]
    server = ServerProcess(command).start().wait_ready()
    try:
        s = socket.create_connection((server.host, server.port), timeout=5)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.setblocking(False)
        batch = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n" * 1000
        sent, began = 0, time.monotonic()
        while time.monotonic() - began < 3:
            try:
                sent += s.send(batch)
            except BlockingIOError:
                time.sleep(0.01)
        print(
            f"sent before blocking (server stopped reading): {sent} octets; "
            f"VmRSS {proc_kib(server.pid, 'status', 'VmRSS')} kB, VmHWM {proc_kib(server.pid, 'status', 'VmHWM')} kB"
        )
        time.sleep(4)
        s.setblocking(True)
        s.settimeout(2)
        total = 0
        try:
            while True:
                data = s.recv(1 << 20)
                if not data:
                    print(
                        f"EOF after draining {total} queued octets: the server had closed"
                    )
                    break
                total += len(data)
        except OSError as error:
            print(f"recv after {total} octets: {error}")
    finally:
        print("exit", server.stop())


if __name__ == "__main__":
    main()
