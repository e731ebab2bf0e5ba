"""Differential check against the flagship: the same inputs, sent in one write followed by
a half-close, must get the same octets from bin/renard-c and servers/rust/bin/renard
(Date lines and the Location of unseeded draws aside). Bounded: COUNT inputs, fixed seed.

    python3 tests/differential.py [COUNT]     # from servers/c, both binaries built
"""
import random
import re
import socket
import subprocess
import sys

HERE = __file__.rsplit("/", 2)[0] or "."
SERVERS = {"c": f"{HERE}/bin/renard-c", "rust": f"{HERE}/../rust/bin/renard"}
BASES = [
    b"GET /?seed=a%41+b HTTP/1.1\r\nHost: a:80\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
    b"\r\nHEAD http://h/healthz HTTP/1.0\nTransfer-Encoding: gzip, chunked\n\n",
    b"GET / HTTP/1.1\r\nHost: [::1]:8080\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nxy",
    b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /healthz HTTP/1.1\r\nHost: b\r\n\r\n",
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    b"GET http://a?seed=x&seed=y HTTP/1.1\r\nhost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"GET /" + b"a" * 8178 + b" HTTP/1.1\r\nHost: a\r\n\r\n",  # request line of 8192 octets
    b"GET / HTTP/1.1\r\nHost: a\r\nX: " + b"a" * 16368 + b"\r\n\r\n",  # field section of 16384
    b"GET / HTTP/1.1\r\nHost: a\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(1, 100)) + b"\r\n",
]
ALPHABET = b"\r\n :,%?=&/\x00\x7f\x80\tHTTP/1.0GETa"


def start(path):
    p = subprocess.Popen([path, "--listen", "127.0.0.1:0", "--threads", "1", "--header-timeout", "2"],
                         stderr=subprocess.PIPE)
    port = int(re.search(rb":(\d+)\s*$", p.stderr.readline()).group(1))
    return p, port


def exchange(port, data):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except ConnectionResetError:
            out += b"<reset>"
        return out


def normalise(response):
    response = re.sub(rb"Date: [^\r]*\r\n", b"Date: *\r\n", response)
    return re.sub(rb"Location: [^\r]*(\r\nCache-Control: no-store)", rb"Location: *\1", response)


def mutate(rng):
    data = bytearray(rng.choice(BASES))
    for _ in range(rng.randint(1, 4)):
        at = rng.randrange(len(data))
        op = rng.randrange(3)
        if op == 0:
            data[at] = rng.randrange(256)
        elif op == 1:
            del data[at]
        else:
            data[at:at] = bytes([rng.choice(ALPHABET)])
    return bytes(data)


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rng = random.Random(9)
    servers = {name: start(path) for name, path in SERVERS.items()}
    differ = 0
    try:
        for i in range(count):
            data = mutate(rng)
            answers = {name: normalise(exchange(port, data)) for name, (_, port) in servers.items()}
            if answers["c"] != answers["rust"]:
                differ += 1
                if differ <= 5:
                    print(f"differs on {data!r}:\n  c:    {answers['c']!r}\n  rust: {answers['rust']!r}")
    finally:
        for p, _ in servers.values():
            p.terminate()
            p.wait(5)
    print(f"differential: {count - differ} same, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
