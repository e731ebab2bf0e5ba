#!/usr/bin/env python3
"""Differential check: the same random request heads to the flagship and to renard-go,
answers compared octet for octet (Date values and unseeded Location k masked).

usage: tools/differential.py FLAGSHIP_ADDR GO_ADDR [CASES] [SEED]
Both servers must run with the same --count and --location. Bounded: CASES (default
3000) connections to each server, one after another, 2 s per answer at most. Half the
cases shut the client's side after sending; the others wait for a close or 150 ms of
quiet, so "<open>" and "<closed>" are compared too.
"""
import random
import re
import socket
import sys

PIECES = [b"GET", b"HEAD", b"POST", b"get", b"G\x01T", b"PRI", b" ", b"  ", b"/", b"/healthz",
          b"/?seed=fox", b"/?seed=%41+b", b"http://h", b"HTTPS://h/?seed=x", b"*", b"h:80",
          b"/\xc3\xa9", b"/#x", b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2.0", b"HTTP/1.2", b"HTTP/1",
          b"http/1.1", b"\r\n", b"\n", b"\r", b"\rX", b"Host: a", b"Host: [::1]:80", b"Host: a b",
          b"Host:", b"Host : a", b" folded", b"\tfold", b"Content-Length: 0", b"Content-Length: 3",
          b"Content-Length: 5, 5", b"Content-Length: +1", b"Transfer-Encoding: chunked",
          b"Transfer-Encoding: gzip, chunked", b"Transfer-Encoding: chunked, gzip", b"Connection: close",
          b"Connection: keep-alive", b"Expect: 100-continue", b"X: \x00", b"X: \x7f", b"X: \xff", b":",
          b"abc", b"\x16\x03\x01", b"A" * 50, b"/" + b"a" * 8180, b"X: " + b"b" * 16380,
          b"X: 1\r\n" * 99]
REQUEST = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"


def head(rng: random.Random) -> bytes:
    if rng.random() < 0.5:  # a valid request, mutated
        parts = [rng.choice([b"GET", b"HEAD", b"POST"]), b" ", rng.choice(PIECES[8:18]), b" ",
                 rng.choice([b"HTTP/1.1", b"HTTP/1.0"]), b"\r\n"]
        for _ in range(rng.randrange(4)):
            parts += [rng.choice(PIECES[28:49]), rng.choice([b"\r\n", b"\n"])]
        parts.append(b"\r\n")
        data = bytearray(b"".join(parts))
        for _ in range(rng.randrange(3)):
            at = rng.randrange(len(data) + 1)
            op = rng.randrange(3)
            if op == 0 and data:
                del data[min(at, len(data) - 1)]
            elif op == 1:
                data[at:at] = rng.choice(PIECES)
            else:
                data[at:at] = bytes([rng.randrange(256)])
        body = b"abc" if rng.random() < 0.2 else b""
        tail = REQUEST if rng.random() < 0.3 else b""
        return bytes(data) + body + tail
    return b"".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 12)))


def exchange(addr: tuple[str, int], data: bytes, half_close: bool) -> bytes:
    """The answer to data; with half_close the client shuts its side after sending,
    else it waits until the server closes or is quiet for 150 ms."""
    with socket.create_connection(addr, timeout=2) as s:
        s.sendall(data)
        if half_close:
            s.shutdown(socket.SHUT_WR)
        else:
            s.settimeout(0.15)
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
            out += b"<closed>"
        except socket.timeout:
            out += b"<open>"
        except ConnectionResetError:
            out += b"<reset>"
        return out


def masked(answer: bytes) -> bytes:
    answer = re.sub(rb"Date: [^\r]*", b"Date: *", answer)
    return re.sub(rb"(Location: [^\r]*?)\d+([^\r]*\r\nCache-Control: no-store)", rb"\1K\2", answer)


def main() -> int:
    a, b = (tuple((h, int(p))) for h, p in (x.rsplit(":", 1) for x in sys.argv[1:3]))
    cases = int(sys.argv[3]) if len(sys.argv) > 3 else 3000
    rng = random.Random(int(sys.argv[4]) if len(sys.argv) > 4 else 1)
    differ = 0
    for _ in range(cases):
        data = head(rng)
        half_close = rng.random() < 0.5
        x, y = masked(exchange(a, data, half_close)), masked(exchange(b, data, half_close))
        if x != y:
            differ += 1
            if differ <= 10:
                print(f"DIFF {data[:200]!r}\n  flagship {x[:160]!r}\n  go       {y[:160]!r}")
    print(f"{cases} cases, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
