"""System calls per request of any entry, counted by strace.

Time drifts on a shared machine; the number of system calls a server makes per request does
not, and unlike callgrind's instruction count it sees the kernel's side and works for every
entry, JIT and interpreted ones included. An entry is started (one thread, not pinned: a
count does not depend on speed), warmed up by the client below at full speed, then
`strace -f -c` is attached to every process of its tree (-f: to every thread of each, and to
any started later) for a window of N requests, detached, attached again for 11 N:

    calls per request (by name) = (calls in the 11 N window - calls in the N window) / 10 N

Attaching, detaching and the window's edges (an epoll_wait that straddles them) cancel out.
What does not cancel is what a runtime does by the clock rather than per request (a JVM's
GC and JIT threads, Go's sysmon, libuv's timers): it grows with the window's duration, and
strace makes every window slow. So each entry also gets an idle window (attached, no request,
IDLE_S seconds): those calls per second, times the extra window's seconds per request, are
its `background` (by name), reported beside the count, never subtracted from it.

Loads, as the arena's modes name them: `keepalive` (one connection, one request per round
trip), `pipeline16` (one connection, 16 requests per write, all 16 answers read before the
next write), `close` (a new connection per request with `Connection: close`, read until the
server closes), sent by the arena's raw client (load/raw.py). Every wait is bounded in
time; every loop in count.

Here the counting, the warm-up, the results file and the gate's decision; strace attached and
its summary read: counts/strace.py.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from ..analysis import compare
from ..core.schema import Declared
from ..entries.handle import Handle
from ..entries.manifest import Entry
from ..entries.process import Launch, free_port, start
from ..load.driver import LoadError
from ..load.raw import Client
from .strace import CountError, Strace, per_request, tasks

MODES = {"keepalive": 1, "pipeline16": 16, "close": 1}  # mode -> requests per write
WARMUP_REQUESTS = 2000  # sequential keep-alive requests before counting (and warmup_s seconds)

SCHEMA = 1
DEFAULT_REQUESTS = 400  # N: windows of N and 11 N requests
QUICK_REQUESTS = 80
IDLE_S = 2.0  # the idle window that measures the background
WARMUP_CAP_S = 30.0  # an entry's warmup_s is honoured up to this
WINDOW_TIMEOUT_S = 300.0  # one window under strace, attach to detach
READY_TIMEOUT_S = 60.0
# a count of a native entry (one thread, no runtime) repeats within this many calls per
# request; the gate's tolerance for a change (plus the entry's measured background)
TOLERANCE = 0.05
# Calls a runtime makes for itself rather than for a request: threads waking and sleeping
# (a JVM's or Go's scheduler, GC and JIT helpers), memory mapped and returned, and its own
# monitoring. They are counted, and shown apart: their number changes from one server to
# the next (Go's spinning threads' nanosleep, a JIT's compilations), where the request's own
# calls (receive, send, wait for events, accept, close …) repeat. The gate compares the latter.
RUNTIME_CALLS = frozenset(
    {
        "futex",
        "nanosleep",
        "clock_nanosleep",
        "sched_yield",
        "restart_syscall",
        "madvise",
        "mprotect",
        "mmap",
        "munmap",
        "brk",
        "gettid",
        "getrusage",
        "sysinfo",
        "sched_getaffinity",
    }
)


def available() -> str | None:
    """Why system calls cannot be counted here; None when they can."""
    if shutil.which("strace") is None:
        return "strace is not installed (Debian: strace)"
    return None


@dataclass
class Count:
    """System calls per request of one entry in one mode."""

    mode: str
    requests: int  # N
    per_request: float  # Σ calls: (large - small) / 10 N
    calls: dict[str, float]  # by name, per request, largest first
    small: dict[str, int]  # strace's counts over the N window
    large: dict[str, int]  # and over the 11 N window
    extra_s: float  # wall seconds of the 11 N window minus those of the N window
    background: dict[str, float] = field(default_factory=dict)  # by name, per request: the idle rate × extra_s / 10 N
    reconnects: int = 0  # keep-alive connections the server closed during the two windows

    @property
    def runtime(self) -> float:
        """The RUNTIME_CALLS per request."""
        return round(sum(v for name, v in self.calls.items() if name in RUNTIME_CALLS), 4)

    @property
    def request_calls(self) -> float:
        """The calls per request but the runtime's: what the gate compares."""
        return round(self.per_request - self.runtime, 4)


@dataclass
class EntryCounts:
    """An entry's counts in each mode, its idle window, or why it was not counted."""

    entry: str
    kind: str
    counts: list[Count] = field(default_factory=list)
    idle: dict[str, int] = field(default_factory=dict)  # calls by name over idle_s with no request
    idle_s: float = 0.0
    processes: int = 0  # of the tree when attached
    threads: int = 0  # of the tree when attached
    error: str | None = None

    def count(self, mode: str) -> Count | None:
        return next((c for c in self.counts if c.mode == mode), None)


METHOD = (
    "System calls per request counted by strace (`strace -f -c`, attached to every process and "
    "thread of the entry's tree after start-up and a warm-up): windows of N and 11 N requests "
    "from the arena's own client, calls per request = (calls(11 N) − calls(N)) ÷ 10 N by name, "
    "so attaching and the windows' edges cancel. The entry runs one thread. keepalive: one "
    "connection, one request per round trip; pipeline16: 16 requests per write, every answer "
    "read before the next write; close: a new connection per request (Connection: close). "
    "Every call any thread makes during the windows is counted, what a runtime does for itself "
    "too; 'of which runtime' are the calls a runtime makes for itself (" + ", ".join(sorted(RUNTIME_CALLS)) + "), "
    "whose number changes from one server to the next (Go's spinning threads, a JIT's "
    "compilations); 'background' is what the same tree made with no request during an idle "
    "window, scaled to the extra window's duration per request. The other calls (receive, send, "
    "wait for events, accept, close …) are the request's own and repeat: a native entry's within "
    f"±{TOLERANCE} per request; the gate compares those, and a larger change is a change."
)


# ---- counting ----------------------------------------------------------------------------


def _window(server: Handle, client: Client | None, requests: int, out: Path) -> tuple[dict[str, int], float]:
    """Calls by name while `requests` requests are answered (client None: IDLE_S with none),
    and the window's wall seconds."""
    pids = server.tree_pids()
    strace = Strace(pids, out)
    began = time.monotonic()
    try:
        if client is None:
            time.sleep(IDLE_S)
        else:
            client.send(requests, began + WINDOW_TIMEOUT_S)
    except (OSError, LoadError):
        strace.stop()
        raise
    seconds = time.monotonic() - began
    return strace.stop(), seconds


def _threads(pids: list[int]) -> int:
    return len(tasks(pids))


def count_entry(
    entry: Entry,
    modes: tuple[str, ...] = tuple(MODES),
    requests: int = DEFAULT_REQUESTS,
    warmup_s: float | None = None,
    say=lambda _line: None,
) -> EntryCounts:
    """Counts of entry in each mode, on one server started once; an entry that cannot be
    counted gets its error (the others go on). warmup_s: None takes the entry's own. An entry
    that declares `pipelining = false` (its library drops pipelined requests) is counted in
    the modes that write one request at a time, and has no count in the others."""
    result = EntryCounts(entry.name, entry.kind)
    modes = tuple(m for m in modes if entry.pipelining or MODES[m] == 1)
    warm = min(WARMUP_CAP_S, entry.warmup_s if warmup_s is None else warmup_s)
    try:
        server = start(entry, Launch(port=free_port(), threads=1))  # a peer's config needs its port
    except Exception as err:  # StartError, OSError
        result.error = f"does not start: {str(err).splitlines()[0] if str(err) else type(err).__name__}"
        return result
    try:
        server.wait_ready(READY_TIMEOUT_S)
        say(f"{entry.name}: warming up ({warm:g} s, at least {WARMUP_REQUESTS} requests)")
        warm_up(server.port, warm, pipelined=entry.pipelining)
        pids = server.tree_pids()
        result.processes, result.threads = len(pids), _threads(pids)
        with tempfile.TemporaryDirectory(prefix="arena-strace-") as tmp:
            result.idle, result.idle_s = _window(server, None, 0, Path(tmp) / "idle.txt")
            for mode in modes:
                per_write = MODES[mode]
                n = max(per_write, requests - requests % per_write)
                if mode == "close":
                    n = max(1, n // 4)  # a connection costs a few times a request's calls
                deadline = time.monotonic() + 3 * WINDOW_TIMEOUT_S
                client = Client(server.port, per_write, mode == "close", deadline)
                try:
                    if mode != "close":
                        client.send(per_write, deadline)  # the kept connection answers before any window
                    before = client.reconnects
                    small, small_s = _window(server, client, n, Path(tmp) / f"{mode}-small.txt")
                    large, large_s = _window(server, client, 11 * n, Path(tmp) / f"{mode}-large.txt")
                    reconnects = client.reconnects - before
                finally:
                    client.close()
                calls = per_request(small, large, n)
                extra_s = max(0.0, large_s - small_s)
                background = {name: round(c / result.idle_s * extra_s / (10 * n), 4) for name, c in result.idle.items()}
                c = Count(mode, n, round(sum(calls.values()), 3), calls, small, large, round(extra_s, 3))
                c.reconnects = reconnects
                c.background = {k: v for k, v in sorted(background.items(), key=lambda kv: -kv[1]) if v > 0}
                result.counts.append(c)
                say(f"{entry.name} {mode}: {c.per_request:.2f} calls per request ({top_words(c)})")
    except (CountError, OSError, Exception) as err:  # noqa: BLE001 - any failure is this entry's, said in one line
        first = str(err).splitlines()[0] if str(err) else type(err).__name__
        result.error = f"{first}"
    finally:
        server.stop()
    return result


def warm_up(port: int, seconds: float, requests: int = WARMUP_REQUESTS, pipelined: bool = True) -> None:
    """At least `requests` sequential keep-alive requests, and on for `seconds` (a JIT's
    warmup_s), with a few of each other mode's shape (pipelined ones only when `pipelined`);
    bounded by seconds + 60 s."""
    end = time.monotonic() + seconds
    deadline = end + 60.0
    client = Client(port, 1, False, deadline)
    try:
        done = 0
        while done < requests or time.monotonic() < end:
            client.send(100, deadline)
            done += 100
    finally:
        client.close()
    for per_write, close, sent in ((16, False, 16), (1, True, 20)):
        if per_write > 1 and not pipelined:
            continue
        client = Client(port, per_write, close, deadline)
        try:
            client.send(sent, deadline)
        finally:
            client.close()


def top_words(c: Count, top: int = 4) -> str:
    """e.g. "recvfrom 1.00, sendto 1.00, epoll_pwait 1.00"."""
    return ", ".join(f"{name} {v:.2f}" for name, v in list(c.calls.items())[:top]) or "none"


# ---- the results file --------------------------------------------------------------------


@dataclass
class Document(Declared):
    """syscalls/syscalls.json, the format declared here (core/schema.py)."""

    schema: Literal[1]
    method: str
    config: dict
    entries: list[EntryCounts]


def document(counted: list[EntryCounts], config: dict) -> dict:
    return Document(SCHEMA, METHOD, config, counted).to_json()


def write(path: Path, counted: list[EntryCounts], config: dict) -> None:
    """The JSON, written atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(document(counted, config), indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)


def load(path: Path) -> tuple[list[EntryCounts], dict]:
    """(entries, the whole document) of a syscalls.json; ValueError (SchemaError: the key's
    path and the reason) when malformed."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    return Document.load(doc).entries, doc


# ---- the gate ------------------------------------------------------------------------------


def tolerance(a: list[Count], b: list[Count]) -> float:
    """How far A's and B's counts may differ and be the same: TOLERANCE, plus the largest
    background (what a runtime does by the clock varies with the windows' duration), plus the
    widest spread between one side's own repeated counts (a scheduler's or a JIT's calls: Go's
    nanosleep, a JVM's futex, vary from one server to the next; a native entry repeats)."""
    spread = max(max(c.request_calls for c in side) - min(c.request_calls for c in side) for side in (a, b))
    background = max(sum(v for k, v in c.background.items() if k not in RUNTIME_CALLS) for c in a + b)
    return TOLERANCE + background + spread


def _mean(counts: list[Count]) -> float:
    return sum(c.request_calls for c in counts) / len(counts)


def decide(a: list[Count], b: list[Count]) -> compare.Verdict:
    """B against A (each counted once or more, on fresh servers) by their calls but the
    runtime's (Count.request_calls): "significant" when the means differ by more than
    tolerance(a, b), else "no change"; no statistics (fewer is better; p None marks a count)."""
    ma, mb = _mean(a), _mean(b)
    ratio = mb / ma if ma > 0 else (1.0 if mb == ma else 2.0)
    outcome = "significant" if abs(mb - ma) > tolerance(a, b) else "no change"
    seen = " / ".join(f"{c.request_calls:.3f}" for c in a), " / ".join(f"{c.request_calls:.3f}" for c in b)
    metric = (
        f"system calls per request but the runtime's ({a[0].mode}: A {seen[0]}, B {seen[1]}; "
        f"same within ±{tolerance(a, b):.2f})"
    )
    pairs = min(len(a), len(b))
    return compare.Verdict(
        metric,
        ratio,
        ratio,
        ratio,
        None,
        outcome,
        higher_is_better=False,
        pairs=pairs,
        criterion=f"system calls per request ({a[0].mode})",
        a=tuple(c.request_calls for c in a),
        b=tuple(c.request_calls for c in b),
    )
