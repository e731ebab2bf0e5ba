"""Differential check against the flagship (dev tool, not part of `make test`): the same
inputs, mutated at random from a fixed seed, to servers/rust/bin/renard and to this entry;
the answers must be the same octets (Date and the random k masked) and the connection must
end the same way. Each input is sent whole, then the client half-closes, so no case waits
for a timeout.

    ../../.venv/bin/python dev/differential.py [CASES] [SEED]
"""

from __future__ import annotations

import random
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

ENTRY = Path(__file__).resolve().parents[1]
FLAGSHIP = ENTRY.parents[1] / "servers" / "rust" / "bin" / "renard"
BASES = [
    b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET /?seed=renard&x=1 HTTP/1.1\r\nHost: a:80\r\nConnection: close\r\n\r\n",
    b"HEAD /healthz HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\nHost: b\r\n\r\n",
    b"GET http://a/?seed=x HTTP/1.1\r\nHost: [::1]\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
    b"\r\nGET /x HTTP/1.1\nHost: a\nExpect: 100-continue\nContent-Length: 1\n\nz",
    b"GET /" + b"a" * 8178 + b" HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a\r\nX: " + b"b" * 16370 + b"\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: a\r\n" + b"X: 1\r\n" * 99 + b"\r\n",
]
ALPHABET = b"\r\n \t:,/?=&%+\x00\x7f\x80\xffaAH0129"
MASKS = [(re.compile(rb"Date: [^\r]*"), b"Date: -"),
         (re.compile(rb"(Renard-)\d+(\.png\r\nCache-Control: no-store)"), rb"\1N\2")]


def mutate(rng: random.Random, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(data) + 1)
        choice = rng.random()
        if choice < 0.4 and at < len(data):
            data[at] = rng.choice(ALPHABET)
        elif choice < 0.7:
            data[at:at] = bytes([rng.choice(ALPHABET)])
        elif at < len(data):
            del data[at:at + rng.randint(1, 3)]
    return bytes(data)


def start(argv: list[str]) -> tuple[subprocess.Popen, int]:
    process = subprocess.Popen([*argv, "--listen", "127.0.0.1:0", "--threads", "1"],
                               stderr=subprocess.PIPE)
    line = process.stderr.readline().decode()
    return process, int(line.rsplit(":", 1)[1])


def exchange(port: int, data: bytes, split: int | None) -> bytes:
    """Send data (in two writes 20 ms apart when split), half-close, read to the end."""
    with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        received = b""
        try:
            if split is not None:
                sock.sendall(data[:split])
                time.sleep(0.02)
                data = data[split:]
            sock.sendall(data)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            received = b"<send failed>"
        try:
            while chunk := sock.recv(65536):
                received += chunk
            received += b"<EOF>"
        except TimeoutError:
            received += b"<open>"
        except ConnectionResetError:
            received += b"<RST>"
    for pattern, replacement in MASKS:
        received = pattern.sub(replacement, received)
    return received


def main() -> int:
    cases = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rng = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
    flagship, flagship_port = start([str(FLAGSHIP)])
    ours, our_port = start([str(ENTRY / "renard")])
    differ = 0
    try:
        for index in range(cases):
            data = mutate(rng, rng.choice(BASES)) if index >= len(BASES) else BASES[index]
            split = rng.randrange(len(data)) if data and rng.random() < 0.1 else None
            expected, got = exchange(flagship_port, data, split), exchange(our_port, data, split)
            if expected != got:
                differ += 1
                print(f"DIFFER {data!r}\n  flagship {expected[:160]!r}\n  python   {got[:160]!r}")
    finally:
        for process in (flagship, ours):
            process.terminate()
            process.wait(5)
    print(f"{cases - differ} same, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
