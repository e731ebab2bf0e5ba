"""What a stack of `arena stack` is (stack.py measures them): its modes, the baselines, issue
27's targets, and how the names given on the command line become stacks."""

from __future__ import annotations

from dataclasses import dataclass

from typing_extensions import TypedDict  # pydantic reads typing's only from Python 3.12

from ..entries.manifest import Entry

COUNT = 21  # the spec's defaults, as every bench starts an entry
LOCATION = "https://avatar.example.org/Renard-{n}.png"
UPSTREAM_KEEPALIVE = 64  # idle connections nginx keeps to the entry: as deploy/nginx-site.conf, at least
# the load's 50 connections; with 32, nginx opened and closed a connection to the entry for 0.32 of
# its requests (3.51 system calls per request in renard instead of 2.33)
# How the daemon behind nginx is scheduled (a program its command runs under). batch, as
# deploy/renard.service runs renard (CPUSchedulingPolicy=batch): on the one core of the stack, a
# normal task's wake-up preempts nginx once per forwarded request; under SCHED_BATCH nginx ends its
# turn first and the daemon answers every queued request in one wake-up (servers/rust/README.md).
# Only a daemon behind the front nginx (ENTRY, ENTRY+unix); nginx, and an entry that is nginx
# (php-fpm with its own nginx, started as one command), keep the normal policy.
POLICIES = {"batch": ("chrt", "--batch", "0"), "normal": ()}
DEFAULT_POLICY = "batch"
H2_STREAMS = 1  # h2load -m: streams in flight per connection (with -c 50: 50 in flight, as wrk)
BASELINE = "nginx-302"  # what every stack's CPU per request is divided by
DEFAULT = ("rust", "php-fpm")  # the stacks measured when none is named (beside the baselines)


@dataclass(frozen=True)
class Target:
    """The deployed path's targets (docs/arena/stack.md), in the same run: the best of `stacks` (keep-alive CPU per
    request) at most `limit` times that of `reference`."""

    words: str
    stacks: tuple[str, ...]
    reference: str
    limit: float
    mode: str = "keepalive"


TARGETS = (
    Target("renard behind nginx, the better of TCP and a Unix socket", ("rust", "rust+unix"), BASELINE, 2.5),
    Target("renard inside nginx against nginx-split", ("nginx-lua-renard",), "nginx-split", 1.2),
)


class StackError(Exception):
    """A stack that cannot be measured (wrong answer, a tool that failed): str() says why."""


@dataclass(frozen=True)
class StackMode:
    name: str
    words: str
    tool: str  # "wrk" or "h2load"
    close: bool = False  # Connection: close on every request: a new connection per request
    resumption: bool = True  # False: nginx offers no session resumption (no cache, no tickets)


MODES: dict[str, StackMode] = {
    m.name: m
    for m in (
        StackMode("keepalive", "TLS keep-alive, HTTP/1.1 (wrk)", "wrk"),
        StackMode(
            "resumed", "a new TLS connection per request, session resumed (wrk reuses its session)", "wrk", close=True
        ),
        StackMode(
            "handshake",
            "a new TLS connection per request, full handshake (nginx offers no resumption)",
            "wrk",
            close=True,
            resumption=False,
        ),
        StackMode("h2", f"HTTP/2 over TLS, {H2_STREAMS} stream in flight per connection (h2load)", "h2load"),
    )
}


class Described(TypedDict):
    """A stack as stack.json's `stacks` keeps it (Stack.to_json)."""

    name: str
    kind: str
    words: str
    entry: str | None
    transport: str | None
    path: str
    expect: int


@dataclass
class Stack:
    """What answers: nginx alone, nginx in front of an entry, or an entry that is nginx."""

    name: str
    kind: str  # "alone", "proxy" or "inside"
    words: str
    entry: Entry | None = None
    transport: str | None = None  # "tcp" or "unix" for a proxy
    path: str = "/"
    expect: int = 302

    def to_json(self) -> Described:
        return {
            "name": self.name,
            "kind": self.kind,
            "words": self.words,
            "entry": self.entry.name if self.entry else None,
            "transport": self.transport,
            "path": self.path,
            "expect": self.expect,
        }


BASELINES = {
    "nginx-302": Stack("nginx-302", "alone", "nginx alone: split_clients on $request_id, return 302 (no daemon)"),
    "nginx-png": Stack("nginx-png", "alone", "nginx alone serving a static 4 kB PNG", path="/Renard-1.png", expect=200),
}


def is_nginx(entry: Entry) -> bool:
    """An entry that is nginx itself (its config is nginx's, with `listen {{listen}};`)."""
    if "nginx" not in entry.requires or not entry.config:
        return False
    try:
        return "listen {{listen}};" in (entry.folder / entry.config).read_text()
    except OSError:
        return False  # its start will say what is missing


def resolve(names: list[str], entries: dict[str, Entry]) -> list[Stack]:
    """The baselines, then each name as a stack; raises ValueError naming a wrong one."""
    out = list(BASELINES.values())
    for name in names:
        if name in BASELINES:
            continue
        base, _, transport = name.partition("+")
        if transport not in ("", "unix"):
            raise ValueError(f"{name}: the only transport suffix is +unix")
        entry = entries.get(base)
        if entry is None:
            raise ValueError(f"{name}: no entry named {base}")
        if is_nginx(entry):
            if transport:
                raise ValueError(f"{name}: {base} is nginx itself, there is no upstream to reach over a Unix socket")
            out.append(Stack(name, "inside", f"{base}: TLS in its own nginx", entry))
        else:
            words = f"nginx → {base} over {'a Unix socket' if transport else 'TCP'}"
            out.append(Stack(name, "proxy", words, entry, transport or "tcp"))
    return list({s.name: s for s in out}.values())
