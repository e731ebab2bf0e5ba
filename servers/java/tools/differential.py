"""Differential check: the same octets to this server and to the flagship, the answers compared.

Usage: python3 tools/differential.py JAVA_PORT RUST_PORT [ROUNDS] [SEED] [SPLIT]
Both servers must run with the same --count and --location. Each input is a valid head
mutated 1-3 times (an octet replaced, removed or inserted; fixed seed, bounded count), or a
case of spec/vectors/http; it is sent in one write (with SPLIT = 1: in two to four writes 20 ms apart, cut at
the same places for both servers), then the write side is shut, and
everything up to the close is read. Date lines and the k of unseeded redirects are masked
(they differ by design). Prints the inputs whose answers differ; exits 1 if any.
"""
import json, pathlib, random, re, socket, sys, time

BASE = [
    b"GET /?seed=a%41+b HTTP/1.1\r\nHost: a:80\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
    b"\r\nHEAD http://h/healthz HTTP/1.0\nTransfer-Encoding: gzip, chunked\n\n",
    b"GET / HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: keep-alive, Close\r\nExpect: 100-continue\r\n\r\n",
    b"POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nGET / HTTP/1.1\r\nHost: y\r\n\r\n",
    b"GET https://a?seed=%zz HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /x HTTP/1.1\r\nHost: b\r\n\r\n",
]
NOISE = b"\r\n :,%\x00\x7f\t/?=&#[]HT1.0"


def exchange(port: int, data: bytes, cuts: list[int]) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        at = 0
        try:  # the server may close early (a refusal): what it sent is still read below
            for cut in cuts:
                s.sendall(data[at:cut])
                at = cut
                time.sleep(0.02)
            s.sendall(data[at:])
            s.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        out = b""
        try:
            while chunk := s.recv(65536):
                out += chunk
        except (socket.timeout, ConnectionResetError):
            out += b"<reset or timeout>"
    return out


def masked(answer: bytes) -> bytes:
    answer = re.sub(rb"Date: [^\r]*\r\n", b"Date: *\r\n", answer)
    # The k of a random draw differs between servers; a seeded one must not.
    return re.sub(rb"Location: ([^\r]*)\r\nCache-Control: no-store",
                  lambda m: b"Location: " + re.sub(rb"\d+", b"K", m.group(1)) + b"\r\nCache-Control: no-store", answer)


def inputs(rounds: int, seed: int):
    for path in sorted(pathlib.Path(__file__).resolve().parents[3].glob("spec/vectors/http/*.json")):
        for case in json.loads(path.read_text())["cases"]:
            parts = [s.encode("latin-1") if isinstance(s, str) else bytes.fromhex(s["hex"]) if "hex" in s
                     else (s["repeat"] * s["times"]).encode("latin-1") if "repeat" in s else b"" for s in case["send"]]
            yield b"".join(parts)
    rng = random.Random(seed)
    for n in range(rounds):
        data = bytearray(BASE[n % len(BASE)])
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(data))
            op = rng.randrange(3)
            if op == 0:
                data[at] = rng.randrange(256)
            elif op == 1:
                del data[at]
            else:
                data.insert(at, NOISE[rng.randrange(len(NOISE))])
        yield bytes(data)


def main() -> int:
    java, rust = int(sys.argv[1]), int(sys.argv[2])
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 7
    split = len(sys.argv) > 5 and sys.argv[5] == "1"
    rng = random.Random(seed + 1)
    differ = total = 0
    for data in inputs(rounds, seed):
        total += 1
        cuts = sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 3)))) if split and len(data) > 1 else []
        a, b = masked(exchange(java, data, cuts)), masked(exchange(rust, data, cuts))
        if a != b:
            differ += 1
            print(f"DIFFER on {data!r}\n  java: {a[:300]!r}\n  rust: {b[:300]!r}")
    print(f"{total} inputs, {differ} differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
