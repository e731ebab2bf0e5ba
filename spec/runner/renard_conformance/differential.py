"""The differential check: the same octets to two servers, their answers compared octet by
octet. Two `ours` entries that answer some input differently hold a bug in one of them, or a
gap in the spec; the suite runs this against the flagship (scenario "same bytes as the
flagship").

Inputs (`inputs(count, seed)`): first every base input as it is (hand-written heads near
the spec's limits, and every vector of spec/vectors that waits for no timeout, its pauses
left out), then, from a fixed seed, bases mutated 1 to 4 times (mostly once: an octet
replaced, removed or inserted, a run of octets removed, a piece of HTTP inserted) or, for
15 % of the inputs, 1 to 12 pieces of HTTP strung together (`PIECES`). Each input is sent in one write
or, one time in four, in two to four writes 10 ms apart, cut at the same places for both
servers; then the client shuts its side (SHUT_WR) and reads until the server closes. The
transcript is the octets received followed by how the connection ended: `<EOF>`, `<RST>`,
or `<open>` (no close within the bound).

Normalised, and nothing else (`normalise`): the value of each `Date:` line that is an
IMF-fixdate (SPEC §4 lets two servers render different seconds), and the k of an unseeded
draw, i.e. the `{n}` of the `Location` template in a `Location` followed by
`Cache-Control: no-store` (SPEC §3: drawn from each process's own entropy).

Command line (`renard-conformance-diff`): starts both servers with the same flags and
prints every input whose answers differ (hex) with both answers; exit status 1 if any.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import random
import re
import shlex
import socket
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace

from .conformance import DEFAULT_LOCATION
from .launcher import ServerProcess, StartError, argv_with, flag_value
from .vectors import compile_send, load_cases

REPO = Path(__file__).resolve().parents[3]  # spec/runner/renard_conformance -> the repository
FLAGSHIP = REPO / "servers" / "rust" / "bin" / "renard"
FLAGSHIP_BUILD = REPO / "servers" / "rust" / "build"
SEED = 20261123  # the inputs are the same on every run: a difference can be replayed
SPLIT_PAUSE_S = 0.010  # between the pieces of a split input (TCP_NODELAY: separate reads)
CONNECT_TIMEOUT_S = 3.0
CLOSE_SLACK_S = 2.0  # after the longer of the server's timeouts, an unclosed connection is `<open>`
BASE_LIMIT = 32 * 1024  # a vector larger than this is no base (the robustness suite sends those)
WORKERS = 6  # inputs in flight at once (each on its own pair of connections)
MAX_REPORTED = 5  # differences kept with their answers
MUTATIONS = (1, 1, 1, 2, 2, 3, 4)  # how many changes a mutant gets: mostly one, so that it parses further
FRAGMENTS = 0.15  # the share of inputs that are PIECES strung together at random instead of a mutant

# Heads near the spec's rules and limits (SPEC §5-§7): the four per-entry testers' bases.
HAND_BASES = [
    b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET /?seed=a%41+b HTTP/1.1\r\nHost: a:80\r\nContent-Length: 3\r\nConnection: close\r\n\r\nabc",
    b"\r\nHEAD http://h/healthz HTTP/1.0\nTransfer-Encoding: gzip, chunked\n\n",
    b"GET / HTTP/1.1\r\nHost: [::1]:8080\r\nConnection: keep-alive, Close\r\nExpect: 100-continue\r\n\r\n",
    b"GET / HTTP/1.1\r\nHost: [::1]:8080\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\nxy",
    b"POST /x HTTP/1.1\r\nHost: a\r\nContent-Length: 4\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    b"POST /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nGET / HTTP/1.1\r\nHost: y\r\n\r\n",
    b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /healthz HTTP/1.1\r\nHost: b\r\n\r\n",
    b"GET https://a?seed=%zz HTTP/1.0\r\nConnection: keep-alive\r\n\r\nGET /x HTTP/1.1\r\nHost: b\r\n\r\n",
    b"GET http://a?seed=x&seed=y HTTP/1.1\r\nhost: a\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"\r\nGET /x HTTP/1.1\nHost: a\nExpect: 100-continue\nContent-Length: 1\n\nz",
    b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
    b"GET /" + b"a" * 8178 + b" HTTP/1.1\r\nHost: a\r\n\r\n",  # a request line of 8192 octets
    b"GET / HTTP/1.1\r\nHost: a\r\nX: " + b"a" * 16368 + b"\r\n\r\n",  # a field section of 16 KiB
    b"GET / HTTP/1.1\r\nHost: a\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(1, 100)) + b"\r\n",
]
NOISE = b"\r\n \t:,;/?=&#%+[]\x00\x01\x7f\x80\xffaAHT019."
PIECES = [
    b"GET", b"HEAD", b"POST", b"get", b"PRI", b"*", b"/healthz", b"/?seed=fox", b"http://h",
    b"HTTP/1.1", b"HTTP/1.0", b"HTTP/2.0", b"HTTP/1.2", b"\r\n", b"\n", b"\r", b"\r\n\r\n",
    b"Host: a\r\n", b"Host : a\r\n", b" folded\r\n", b"Content-Length: 3\r\n", b"Content-Length: 5, 5\r\n",
    b"Content-Length: +1\r\n", b"Transfer-Encoding: chunked\r\n", b"Connection: close\r\n",
    b"Connection: keep-alive\r\n", b"Expect: 100-continue\r\n", b"%41", b"%zz", b"\xc3\xa9",
]  # fmt: skip
DATE_RE = re.compile(rb"\r\nDate: [A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT\r\n")


@dataclass(frozen=True)
class Input:
    """What is sent: `data`, cut before each offset of `cuts` (empty: one write)."""

    index: int
    data: bytes
    cuts: tuple[int, ...] = ()

    def pieces(self) -> list[bytes]:
        bounds = [0, *self.cuts, len(self.data)]
        return [self.data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]

    def describe(self) -> str:
        how = f"in {len(self.cuts) + 1} writes cut at {list(self.cuts)}" if self.cuts else "in one write"
        return f"input #{self.index} ({len(self.data)} octets {how}, then SHUT_WR): {self.data.hex()}"


@dataclass
class Difference:
    input: Input
    expected: bytes  # the reference's transcript (normalised)
    got: bytes  # the other server's
    repeated: bool  # a second exchange of the same input differed as well

    def report(self, names: tuple[str, str] = ("flagship", "entry"), limit: int = 1500) -> str:
        return (
            f"{self.input.describe()}\n"
            f"  {names[0]}: {shown(self.expected, limit)}\n"
            f"  {names[1]}: {shown(self.got, limit)}"
        )

    def figures(self) -> dict:
        return {
            "index": self.input.index,
            "input_hex": self.input.data.hex(),
            "cuts": list(self.input.cuts),
            "reference": shown(self.expected, 4000),
            "entry": shown(self.got, 4000),
            "repeated": self.repeated,
        }


@dataclass
class Result:
    inputs: int = 0
    seconds: float = 0.0
    differences: list[Difference] = field(default_factory=list)  # those that repeated, first inputs first
    unstable: list[Difference] = field(default_factory=list)  # differed once, then agreed

    def figures(self) -> dict:
        return {
            "inputs": self.inputs,
            "seconds": round(self.seconds, 1),
            "differ": len(self.differences),
            "unstable": len(self.unstable),
            "first_differences": [d.figures() for d in self.differences[:MAX_REPORTED]],
            "first_unstable": [d.figures() for d in self.unstable[:2]],
        }


def shown(transcript: bytes, limit: int) -> str:
    text = repr(transcript[:limit])
    return text if len(transcript) <= limit else f"{text}... ({len(transcript)} octets)"


# --- the inputs ---------------------------------------------------------------------------


def base_inputs() -> list[bytes]:
    """The hand-written bases, then each non-slow vector's octets (pauses left out), deduplicated."""
    bases = list(HAND_BASES)
    dummy = SimpleNamespace(header_timeout=2.0, idle_timeout=3.0)
    for case in load_cases():
        if case.slow:
            continue
        data = b"".join(step for step in compile_send(case.send, dummy) if isinstance(step, bytes))
        if data and len(data) <= BASE_LIMIT and data not in bases:
            bases.append(data)
    return bases


def mutate(rng: random.Random, base: bytes) -> bytes:
    data = bytearray(base)
    for _ in range(rng.choice(MUTATIONS)):
        at = rng.randrange(len(data) + 1)
        operation = rng.randrange(5)
        if operation == 0 and at < len(data):
            data[at] = rng.randrange(256)
        elif operation == 1 and at < len(data):
            data[at] = rng.choice(NOISE)
        elif operation == 2:
            del data[at : at + rng.randint(1, 3)]
        elif operation == 3:
            data[at:at] = bytes([rng.choice(NOISE)])
        else:
            data[at:at] = rng.choice(PIECES)
    return bytes(data)


def inputs(count: int, seed: int = SEED) -> list[Input]:
    """`count` inputs: the bases as they are, then mutants; the same for the same seed."""
    rng = random.Random(seed)
    bases = base_inputs()
    made: list[Input] = []
    for index in range(count):
        if index < len(bases):
            data = bases[index]
        elif rng.random() < FRAGMENTS:
            data = b"".join(rng.choice(PIECES) for _ in range(rng.randint(1, 12)))
        else:
            data = mutate(rng, rng.choice(bases))
        cuts: tuple[int, ...] = ()
        if len(data) > 1 and rng.random() < 0.25:
            cuts = tuple(sorted(rng.sample(range(1, len(data)), min(len(data) - 1, rng.randint(1, 3)))))
        made.append(Input(index, data, cuts))
    return made


# --- one exchange -------------------------------------------------------------------------


def exchange(address: tuple[str, int], sent: Input, close_within_s: float) -> bytes:
    """The transcript of sending `sent` to address: what arrived, then `<EOF>`, `<RST>` or
    `<open>` (not closed within close_within_s of the last write)."""
    received = bytearray()
    with socket.create_connection(address, timeout=CONNECT_TIMEOUT_S) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:  # the server may close early (an error answer): what it sent is still read below
            for number, piece in enumerate(sent.pieces()):
                if number:
                    time.sleep(SPLIT_PAUSE_S)
                sock.sendall(piece)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            pass
        deadline = time.monotonic() + close_within_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return bytes(received) + b"<open>"
            sock.settimeout(remaining)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                return bytes(received) + b"<open>"
            except OSError:  # ECONNRESET and the like
                return bytes(received) + b"<RST>"
            if not chunk:
                return bytes(received) + b"<EOF>"
            received += chunk


def location_k_re(location: str) -> re.Pattern:
    """A `Location` line of an unseeded draw for this template: the k in each `{n}` captured."""
    value = rb"(\d+)".join(re.escape(part.encode()) for part in location.split("{n}"))
    return re.compile(rb"\r\nLocation: " + value + rb"\r\nCache-Control: no-store\r\n")


def normalise(transcript: bytes, location: str) -> bytes:
    """Date values and the k of unseeded draws replaced; every other octet kept (module doc)."""
    transcript = DATE_RE.sub(b"\r\nDate: <date>\r\n", transcript)
    k_line = location_k_re(location)
    marker = location.replace("{n}", "<k>").encode()
    return k_line.sub(b"\r\nLocation: " + marker + b"\r\nCache-Control: no-store\r\n", transcript)


# --- two servers ---------------------------------------------------------------------------


@dataclass
class Pair:
    reference: tuple[str, int]
    other: tuple[str, int]
    location: str = DEFAULT_LOCATION
    close_within_s: float = 3.0 + CLOSE_SLACK_S

    def transcripts(self, sent: Input) -> tuple[bytes, bytes]:
        return (
            normalise(exchange(self.reference, sent, self.close_within_s), self.location),
            normalise(exchange(self.other, sent, self.close_within_s), self.location),
        )

    def judge(self, sent: Input) -> Difference | None:
        expected, got = self.transcripts(sent)
        if expected == got:
            return None
        again = self.transcripts(sent)  # a difference is reported only with a second look
        return Difference(sent, expected, got, repeated=again[0] != again[1])


def compare(pair: Pair, sent: list[Input], budget_s: float | None = None) -> Result:
    """Every input of `sent` to both servers (WORKERS at once); the differences, first inputs
    first. budget_s bounds the run: inputs not started by then are not sent (result.inputs)."""
    result, started = Result(), time.monotonic()

    def one(item: Input) -> tuple[bool, Difference | None]:
        if budget_s is not None and time.monotonic() - started > budget_s:
            return False, None
        return True, pair.judge(item)

    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        outcomes = list(pool.map(one, sent))
    result.seconds = time.monotonic() - started
    result.inputs = sum(ran for ran, _ in outcomes)
    found = [d for _, d in outcomes if d is not None]
    result.differences = [d for d in found if d.repeated]
    result.unstable = [d for d in found if not d.repeated]
    return result


def pair_flags(argv: list[str]) -> dict[str, str]:
    """The configuration of argv as flags for a second server: --count, --location, the
    timeouts, and --threads 1 (what the comparison depends on; --listen on port 0)."""
    flags = {"--listen": "127.0.0.1:0", "--threads": "1"}
    for flag in ("--count", "--location", "--header-timeout", "--idle-timeout"):
        value = flag_value(argv, flag)
        if value is not None:
            flags[flag] = value
    return flags


def close_bound(flags: dict[str, str]) -> float:
    """How long a half-closed exchange may stay open: the longer of the timeouts + slack."""
    return max(float(flags.get("--header-timeout", 10)), float(flags.get("--idle-timeout", 60))) + CLOSE_SLACK_S


def ensure_flagship(build_timeout_s: float = 900.0) -> str | None:
    """None when servers/rust/bin/renard exists (built now with servers/rust/build if it
    was missing), else why it cannot be had."""
    if FLAGSHIP.is_file():
        return None
    import subprocess

    if not FLAGSHIP_BUILD.is_file():
        return f"the flagship {FLAGSHIP} is missing and so is {FLAGSHIP_BUILD}"
    try:
        done = subprocess.run(
            [str(FLAGSHIP_BUILD)], cwd=FLAGSHIP_BUILD.parent, capture_output=True, text=True, timeout=build_timeout_s
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"the flagship {FLAGSHIP} is missing and servers/rust/build failed: {error}"
    if done.returncode != 0 or not FLAGSHIP.is_file():
        tail = (done.stdout + done.stderr).strip().splitlines()[-5:]
        return f"the flagship {FLAGSHIP} is missing and servers/rust/build failed (status {done.returncode}): " + (
            " | ".join(tail)
        )
    return None


# --- command line --------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="renard-conformance-diff",
        description="The same inputs to two renard servers; prints every input whose answers differ.",
    )
    parser.add_argument("command", help="the server to compare, e.g. 'servers/c/bin/renard-c --count 21'")
    parser.add_argument("--reference", default=str(FLAGSHIP), help="the reference server [the flagship]")
    parser.add_argument("--cwd", default=None, help="working directory for COMMAND")
    parser.add_argument("--inputs", type=int, default=1500, help="how many inputs [1500]")
    parser.add_argument("--seed", type=int, default=SEED, help=f"the inputs' seed [{SEED}]")
    parser.add_argument("--show", type=int, default=MAX_REPORTED, help="differences printed in full [5]")
    options = parser.parse_args(argv)
    if options.reference == str(FLAGSHIP) and (problem := ensure_flagship()):
        print(f"renard-conformance-diff: {problem}", file=sys.stderr)
        return 2
    other_argv = shlex.split(options.command)
    flags = pair_flags(other_argv)
    flags.setdefault("--header-timeout", "2")
    flags.setdefault("--idle-timeout", "3")
    servers = [
        ServerProcess(argv_with(shlex.split(options.reference), flags), name="reference"),
        ServerProcess(argv_with(other_argv, flags), cwd=options.cwd, name="other"),
    ]
    with contextlib.ExitStack() as stack:
        for server in servers:
            try:
                server.start().wait_ready()
            except StartError as error:
                print(f"renard-conformance-diff: {error}", file=sys.stderr)
                return 2
            stack.callback(server.stop)
        pair = Pair(
            (servers[0].host, servers[0].port),
            (servers[1].host, servers[1].port),
            flags.get("--location", DEFAULT_LOCATION),
            close_bound(flags),
        )
        result = compare(pair, inputs(options.inputs, options.seed))
    for difference in result.differences[: options.show]:
        print("DIFFER " + difference.report(("reference", "other")))
    for difference in result.unstable[:2]:
        print("UNSTABLE (differed once, then agreed) " + difference.report(("reference", "other")))
    print(
        f"{result.inputs} inputs in {result.seconds:.1f} s: {len(result.differences)} differ, "
        f"{len(result.unstable)} unstable"
    )
    return 1 if result.differences else 0


if __name__ == "__main__":
    sys.exit(main())
