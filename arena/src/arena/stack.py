"""`arena stack`: the path users deploy, nginx with TLS in front (issue 27).

A stack is what answers `https://127.0.0.1:PORT/`:
- `nginx-302` and `nginx-png`: nginx alone (split_clients on $request_id + return 302; a
  static 4 kB PNG), the baselines every other stack is divided by;
- `ENTRY`: nginx in front of a server entry over TCP (upstream keep-alive 32), or
  `ENTRY+unix` over a Unix socket (the entry started with `--listen unix:PATH`);
- an entry that is nginx itself (its `requires` names nginx and its config template has
  `listen {{listen}};`: php-fpm, nginx-lua, …): TLS is put into that nginx's own server block,
  so that there is one nginx, as its users run it.

nginx has one worker; the certificate is made for the run (ECDSA P-256, by openssl); TLS
1.2/1.3, HTTP/1.1 and HTTP/2 (ALPN) on one port. Each sample starts the stack afresh, pinned
with every process on the server's CPUs, checks one answer over HTTPS (a 302 to the
template with k in 1..count; the PNG: 200 and its bytes), warms it up, measures, reads
/proc, stops it. Samples are interleaved: for rep, for mode, for stack.

CPU of the stack = utime + stime (+ those of reaped children) of every process of its trees
(nginx, and the entry's), split by process name (comm) and by user/kernel time, so that the
entry's share and where the kernel's work goes can be read. Peak RSS = Σ VmHWM over them.
"""

from __future__ import annotations

import http.client
import os
import re
import resource
import shutil
import socket
import ssl
import struct
import subprocess
import tempfile
import time
import zlib
from dataclasses import asdict, dataclass, field, replace
from importlib import resources
from pathlib import Path

from renard_conformance.launcher import CLK_TCK, ServerProcess, proc_kib, process_tree

from .bench import WrkError, run_wrk, wrk_argv, wrk_script
from .entries import Entry
from .model import Config, Mode
from .process import Launch, Server, StartError, free_port, launch_ready, start

COUNT = 21  # the spec's defaults, as every bench starts an entry
LOCATION = "https://avatar.example.org/Renard-{n}.png"
PNG_BYTES = 4096  # the static baseline's file
UPSTREAM_KEEPALIVE = 32  # idle connections nginx keeps to the entry
H2_STREAMS = 1  # h2load -m: streams in flight per connection (with -c 50: 50 in flight, as wrk)
BASELINE = "nginx-302"  # what every stack's CPU per request is divided by
DEFAULT = ("rust", "php-fpm")  # the stacks measured when none is named (beside the baselines)


@dataclass(frozen=True)
class Target:
    """Issue 27's targets, checked in the same run: the best of `stacks` (keep-alive CPU per
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

    def to_json(self) -> dict:
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


# --- files made for the run --------------------------------------------------------------


def make_certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed ECDSA P-256 certificate for 127.0.0.1 (openssl); (cert, key)."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    argv = ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    argv += ["-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"]
    argv += ["-keyout", str(key), "-out", str(cert)]
    p = subprocess.run(argv, capture_output=True, timeout=30, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise StackError("openssl could not make the certificate: " + p.stderr.decode(errors="replace").strip())
    return cert, key


def png(size: int = PNG_BYTES) -> bytes:
    """A valid PNG of exactly `size` bytes: a 1×1 image, padded by an ancillary chunk."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    head = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    tail = chunk(b"IDAT", zlib.compress(b"\x00\xe0\x7b\x39")) + chunk(b"IEND", b"")
    pad = size - len(head) - len(tail) - 12
    if pad < 0:
        raise ValueError(f"a PNG cannot be smaller than {len(head) + len(tail) + 12} bytes")
    return head + chunk(b"paDd", b"\x00" * pad) + tail


def tls_directives(cert: Path, key: Path, resumption: bool) -> str:
    """nginx's TLS lines for a server block, joined by "; " (the caller ends the last)."""
    lines = [f"ssl_certificate {cert}", f"ssl_certificate_key {key}", "ssl_protocols TLSv1.2 TLSv1.3"]
    if resumption:
        lines.append("ssl_session_cache shared:arena_tls:1m")  # as deploy/nginx-site.conf
    else:
        lines += ["ssl_session_cache off", "ssl_session_tickets off"]
    return "; ".join(lines)


def split_clients(count: int, location: str) -> tuple[str, str]:
    """(http block lines, the location) of nginx answering a uniform k in 1..count alone."""
    share = f"{100 / count:.2f}"  # the last bucket (*) takes what the rounding leaves
    buckets = "".join(f"        {share}% {k};\n" for k in range(1, count)) + f"        * {count};\n"
    http = f'    split_clients "${{request_id}}" $renard_k {{\n{buckets}    }}'
    target = location.replace("{n}", "$renard_k")
    return http, f'        location = / {{\n            return 302 "{target}";\n        }}'


def front_config(stack: Stack, tmp: Path, port: int, tls: str, upstream: str | None) -> str:
    """nginx.conf for a stack of nginx alone or nginx in front (upstream: "unix:PATH" or
    "127.0.0.1:PORT")."""
    http, answer = "", ""
    if stack.name == "nginx-302":
        http, answer = split_clients(COUNT, LOCATION)
    elif stack.name == "nginx-png":
        answer = f"        location = {stack.path} {{\n            root {tmp};\n        }}"
    else:
        http = (
            f"    upstream entry {{\n        server {upstream};\n        keepalive {UPSTREAM_KEEPALIVE};\n"
            "        keepalive_requests 1000000;\n    }"
        )
        answer = (
            "        location = / {\n            proxy_pass http://entry;\n            proxy_http_version 1.1;\n"
            '            proxy_set_header Connection "";\n            proxy_set_header Host $host;\n        }'
        )
    template = resources.files("arena.nginx").joinpath("front.conf.in").read_text()
    values = {"tmp": str(tmp), "port": str(port), "tls": tls, "http": http, "answer": answer}
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], template)


# --- a running stack -------------------------------------------------------------------


class Running:
    """The processes of one started stack: the front nginx (if any) and the entry (if any)."""

    def __init__(self, port: int, cpus: str):
        self.port, self.cpus = port, cpus
        self.front: ServerProcess | None = None
        self.entry: Server | None = None
        self.tmp = Path(tempfile.mkdtemp(prefix="arena-stack-"))
        os.chmod(self.tmp, 0o755)  # nginx's workers (not root) read files and sockets here

    def pids(self) -> list[int]:
        roots = [p for p in (self.front and self.front.process, self.entry and self.entry.proc) if p]
        return [pid for p in roots if p.poll() is None for pid in process_tree(p.pid)]

    def exited(self) -> str | None:
        for name, p in (("nginx", self.front and self.front.process), ("the entry", self.entry and self.entry.proc)):
            if p is not None and p.poll() is not None:
                return f"{name} exited with status {p.returncode}"
        return None

    def start_front(self, config: str) -> None:
        path = self.tmp / "nginx.conf"
        path.write_text(config)
        log = self.tmp / "error.log"
        argv = ["taskset", "-c", self.cpus, "nginx", "-p", str(self.tmp), "-c", str(path), "-e", str(log)]
        self.front = ServerProcess(argv, ready="port", port=self.port, name="nginx (front)")
        self.front.start()
        try:
            self.front.wait_ready(30)
        except StartError as err:
            log = self.tmp / "error.log"
            tail = log.read_text(errors="replace").strip().splitlines()[-5:] if log.is_file() else []
            raise StartError("\n".join([str(err), *tail])) from None

    def stop(self) -> None:
        if self.front is not None:
            self.front.stop(group=True)
        if self.entry is not None:
            self.entry.stop()
        shutil.rmtree(self.tmp, ignore_errors=True)


def _wait_unix(server: Server, path: Path, timeout_s: float = 30.0) -> None:
    """Returns once the entry accepts connections on the Unix socket; raises StartError."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise StartError(
                f"{server.entry.name} exited with status {server.proc.returncode} when asked to listen on "
                f"unix:{path}\n{server.output_tail(5)}"
            )
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.connect(str(path))
            return
        except OSError:
            time.sleep(0.005)
    raise StartError(f"{server.entry.name}: no connection accepted on unix:{path} within {timeout_s:g} s")


def start_stack(stack: Stack, mode: StackMode, cpus: str, cert: Path, key: Path) -> Running:
    """Starts the stack pinned to cpus, ready to answer; raises StartError (nothing left running)."""
    running = Running(free_port(), cpus)
    tls = tls_directives(cert, key, mode.resumption)
    try:
        if stack.kind == "inside":
            listen = f"127.0.0.1:{running.port} ssl http2; {tls}; keepalive_requests 1000000"
            launch = Launch(port=running.port, threads=1, cpus=cpus, listen=listen)
            running.entry = launch_ready(stack.entry, launch)
            return running
        upstream = None
        if stack.kind == "proxy" and stack.transport == "unix":
            sock = running.tmp / "entry.sock"
            running.entry = start(stack.entry, Launch(threads=1, cpus=cpus, listen=f"unix:{sock}"))
            _wait_unix(running.entry, sock)
            os.chmod(sock, 0o666)  # as deploy/renard.socket gives nginx's group access
            upstream = f"unix:{sock}"
        elif stack.kind == "proxy":
            running.entry = launch_ready(stack.entry, Launch(port=free_port(), threads=1, cpus=cpus))
            upstream = f"127.0.0.1:{running.entry.port}"
        elif stack.name == "nginx-png":
            (running.tmp / stack.path.lstrip("/")).write_bytes(png())
        running.start_front(front_config(stack, running.tmp, running.port, tls, upstream))
    except BaseException:
        running.stop()
        raise
    return running


def answer_problem(stack: Stack, port: int, cert: Path) -> str:
    """Empty when `GET path` over HTTPS (certificate verified) answers as the stack should: a 302
    to the template with k in 1..COUNT, or the PNG's 200 and bytes; else what came back."""
    context = ssl.create_default_context(cafile=str(cert))
    conn = http.client.HTTPSConnection("127.0.0.1", port, timeout=10, context=context)
    try:
        conn.request("GET", stack.path)
        r = conn.getresponse()
        body = r.read()
    except (OSError, http.client.HTTPException) as err:
        return f"no answer over HTTPS: {err}"
    finally:
        conn.close()
    if r.status != stack.expect:
        return f"answered {r.status} {r.reason}, not {stack.expect}"
    if stack.expect == 200:
        return "" if body == png() else f"answered {len(body)} bytes, not the {PNG_BYTES}-byte PNG"
    prefix, _, suffix = LOCATION.partition("{n}")
    m = re.fullmatch(re.escape(prefix) + r"([0-9]+)" + re.escape(suffix), r.getheader("Location") or "")
    if not m or not 1 <= int(m.group(1)) <= COUNT:
        return f"Location {r.getheader('Location')!r} is not the template with k in 1..{COUNT}"
    return ""


# --- readings ----------------------------------------------------------------------------


def cpu_ticks(pids: list[int]) -> dict[int, tuple[str, int, int]]:
    """pid -> (comm, user ticks, kernel ticks), children reaped counted in their parent."""
    out = {}
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        out[pid] = parse_stat(stat)
    return out


def parse_stat(stat: str) -> tuple[str, int, int]:
    """(comm, utime + cutime, stime + cstime) of a /proc/PID/stat line (ticks)."""
    comm = stat[stat.index("(") + 1 : stat.rindex(")")]
    fields = stat[stat.rindex(")") + 2 :].split()  # fields[0] is field 3 (state)
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return comm, utime + cutime, stime + cstime


def cpu_by_process(before: dict, after: dict) -> dict[str, list[float]]:
    """comm -> [user s, kernel s] used between two cpu_ticks() readings."""
    out: dict[str, list[float]] = {}
    for pid, (comm, user, kernel) in after.items():
        _, user0, kernel0 = before.get(pid, (comm, 0, 0))
        used = out.setdefault(comm, [0.0, 0.0])
        used[0] += (user - user0) / CLK_TCK
        used[1] += (kernel - kernel0) / CLK_TCK
    return {comm: [round(u, 3), round(k, 3)] for comm, (u, k) in sorted(out.items())}


# --- h2load -----------------------------------------------------------------------------

H2_COUNTS = re.compile(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx")
H2_REQUESTS = re.compile(r"requests: \d+ total, \d+ started, \d+ done, \d+ succeeded, (\d+) failed, (\d+) errored")


def parse_h2load(out: str, log: str, expect: int) -> dict:
    """h2load's summary and its --log-file (start µs, status, duration µs per request) as
    wrk's JSON line: requests answered, latency p50/p99 (µs), errors; the answers not of
    the expected class in errors.status."""
    counts, failed = H2_COUNTS.search(out), H2_REQUESTS.search(out)
    if not counts or not failed:
        raise StackError("h2load printed no summary: " + " | ".join(out.strip().splitlines()[-3:]))
    if "Application protocol: h2\n" not in out:
        raise StackError("h2load did not negotiate HTTP/2 (ALPN h2)")
    by_class = [int(x) for x in counts.groups()]
    answered = sum(by_class)
    durations = sorted(int(line.split("\t")[2]) for line in log.splitlines() if line.count("\t") == 2)
    return {
        "requests": answered,
        "latency_us": {"p50": percentile(durations, 50), "p99": percentile(durations, 99)},
        "errors": {
            "socket": int(failed.group(1)) + int(failed.group(2)),
            "status": answered - by_class[expect // 100 - 2],
        },
    }


def percentile(sorted_values: list[int], p: float) -> int | None:
    """Nearest-rank percentile of sorted values; None when there are none."""
    if not sorted_values:
        return None
    rank = max(1, -(-len(sorted_values) * p // 100))
    return sorted_values[int(rank) - 1]


def run_h2load(url: str, seconds: int, cfg: Config, expect: int, tmp: Path) -> tuple[dict, float, float]:
    """h2load pinned to the client's CPUs for `seconds`; (figures as parse_h2load, its CPU
    seconds, wall seconds). Bounded by seconds + 30 s."""
    log = tmp / "h2load.log"
    argv = ["taskset", "-c", cfg.client_cpus, "h2load", "-t1", f"-c{cfg.connections}", f"-m{H2_STREAMS}"]
    argv += [f"-D{seconds}", f"--log-file={log}", url]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    began = time.perf_counter()
    try:
        p = subprocess.run(argv, capture_output=True, timeout=seconds + 30, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise StackError(f"h2load did not finish within {seconds + 30} s") from None
    wall = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    out = p.stdout.decode(errors="replace")
    if p.returncode != 0:
        raise StackError(f"h2load exited {p.returncode}: " + " | ".join((out + p.stderr.decode()).splitlines()[-3:]))
    text = log.read_text() if log.is_file() else ""
    log.unlink(missing_ok=True)
    figures = parse_h2load(out, text, expect)
    figures["duration_us"] = seconds * 1_000_000  # h2load's -D: the measured period
    return figures, cpu, wall


# --- one sample --------------------------------------------------------------------------


@dataclass
class StackSample:
    stack: str
    mode: str
    rep: int
    requests: int  # answered during the measured period
    duration_s: float
    rps: float
    p50_us: float | None
    p99_us: float | None
    unexpected: int  # answers the load generator saw that were not of the expected status class
    socket_errors: int
    cpu: dict[str, list[float]]  # process name -> [user s, kernel s], every process of the stack
    client_cpu_s: float
    wall_s: float
    peak_rss_bytes: int  # Σ VmHWM over the stack's processes

    @property
    def cpu_s(self) -> float:
        return sum(u + k for u, k in self.cpu.values())

    @property
    def cpu_us_per_req(self) -> float | None:
        return self.cpu_s * 1e6 / self.requests if self.requests else None

    @property
    def entry_share(self) -> float | None:
        """The share of the stack's CPU spent outside nginx (the entry's processes)."""
        total = self.cpu_s
        return sum(u + k for name, (u, k) in self.cpu.items() if name != "nginx") / total if total else None

    def us_per_req(self, nginx: bool, kernel: bool) -> float | None:
        """CPU µs per request of nginx (or of the rest), in user (or kernel) time."""
        if not self.requests:
            return None
        used = sum(v[1 if kernel else 0] for name, v in self.cpu.items() if (name == "nginx") == nginx)
        return used * 1e6 / self.requests

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def load(cls, d: dict) -> StackSample:
        return cls(**{k: d[k] for k in cls.__dataclass_fields__})


def measure(stack: Stack, mode: StackMode, rep: int, cfg: Config, cert: Path, key: Path, work: Path) -> StackSample:
    """One fresh stack: started, its answer checked, warmed up, measured, stopped. Raises
    StartError, StackError or WrkError."""
    running = start_stack(stack, mode, cfg.server_cpus, cert, key)
    try:
        problem = answer_problem(stack, running.port, cert)
        if problem:
            raise StackError(f"{stack.name}: {problem}")
        url = f"https://127.0.0.1:{running.port}{stack.path}"

        def load(seconds: int) -> tuple[dict, float, float]:
            if mode.tool == "h2load":
                return run_h2load(url, seconds, cfg, stack.expect, work)
            wrk_mode = Mode(mode.name, mode.words, ("-H", "Connection: close") if mode.close else ())
            wrk, cpu, wall = run_wrk(wrk_argv(url, wrk_mode, seconds, cfg, work / "report.lua"), seconds)
            e = wrk["errors"]
            wrk["errors"] = {"socket": e["connect"] + e["read"] + e["write"] + e["timeout"], "status": e["status"]}
            return wrk, cpu, wall

        if cfg.warmup_s > 0:
            load(cfg.warmup_s)
        pids = running.pids()
        before = cpu_ticks(pids)
        figures, client_cpu, wall = load(cfg.duration_s)
        after = cpu_ticks(running.pids())
        peak = sum(proc_kib(pid, "status", "VmHWM") for pid in after) * 1024
        gone = running.exited()
        if gone:
            raise StackError(f"{stack.name}: {gone} during the run")
    finally:
        running.stop()
    duration = figures["duration_us"] / 1e6
    lat = figures["latency_us"]
    return StackSample(
        stack.name,
        mode.name,
        rep,
        figures["requests"],
        round(duration, 3),
        round(figures["requests"] / duration, 1),
        lat.get("p50"),
        lat.get("p99"),
        figures["errors"]["status"],
        figures["errors"]["socket"],
        cpu_by_process(before, after),
        round(client_cpu, 3),
        round(wall, 3),
        peak,
    )


# --- the whole measurement ----------------------------------------------------------------


@dataclass
class StackRun:
    """Every sample of one `arena stack`, and what could not be measured."""

    config: dict
    stacks: list[dict]
    samples: list[StackSample] = field(default_factory=list)
    failures: list[dict] = field(default_factory=list)  # {stack, mode, rep, reason}
    method: str = ""

    def to_json(self) -> dict:
        return {
            "method": self.method,
            "config": self.config,
            "stacks": self.stacks,
            "samples": [s.to_json() for s in self.samples],
            "failures": self.failures,
        }

    @classmethod
    def load(cls, d: dict) -> StackRun:
        return cls(d["config"], d["stacks"], [StackSample.load(s) for s in d["samples"]], d["failures"], d["method"])


def order(stacks: list[Stack], modes: list[str], reps: int) -> list[tuple[int, str, Stack]]:
    """The interleaved order of samples: for rep, for mode, for stack (A B C A B C …)."""
    return [(rep, m, s) for rep in range(reps) for m in modes for s in stacks]


def run(
    stacks: list[Stack], modes: list[str], cfg: Config, progress=None, skipped: dict[str, str] | None = None
) -> StackRun:
    """Measures every stack in every mode cfg.repetitions times, interleaved. A stack that
    cannot start is tried no more, and said in `failures` with the reason; the others go on.
    skipped: stack name -> why it is not measured at all (an entry unavailable or unbuilt),
    kept in the record as a failure. progress(done, total, words) before each sample."""
    record = StackRun(
        {
            "server_cpus": cfg.server_cpus,
            "client_cpus": cfg.client_cpus,
            "connections": cfg.connections,
            "duration_s": cfg.duration_s,
            "warmup_s": cfg.warmup_s,
            "repetitions": cfg.repetitions,
            "modes": list(modes),
            "count": COUNT,
            "upstream_keepalive": UPSTREAM_KEEPALIVE,
            "h2_streams": H2_STREAMS,
        },
        [s.to_json() for s in stacks],
    )
    load_before = os.getloadavg()[0]
    skipped = skipped or {}
    record.failures += [{"stack": name, "mode": "all", "rep": 0, "reason": why} for name, why in skipped.items()]
    work = Path(tempfile.mkdtemp(prefix="arena-stack-run-"))
    dead: set[str] = set(skipped)
    try:
        os.chmod(work, 0o755)
        cert, key = make_certificate(work)
        wrk_script(Mode("report", ""), work)  # work/report.lua: wrk's done() printing JSON
        steps = order(stacks, modes, cfg.repetitions)
        for i, (rep, mode_name, stack) in enumerate(steps):
            if stack.name in dead:
                continue
            if progress:
                progress(i, len(steps), f"{stack.name}, {mode_name}, repetition {rep + 1}")
            try:
                record.samples.append(measure(stack, MODES[mode_name], rep, cfg, cert, key, work))
            except (StartError, StackError, WrkError) as err:
                reason = str(err).strip()
                record.failures.append({"stack": stack.name, "mode": mode_name, "rep": rep, "reason": reason})
                if isinstance(err, StartError):
                    dead.add(stack.name)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    record.config["load_average"] = [round(load_before, 2), round(os.getloadavg()[0], 2)]  # 1 min, start and end
    return record


def config_for(cfg: Config, duration_s: int, warmup_s: int, reps: int) -> Config:
    return replace(cfg, duration_s=duration_s, warmup_s=warmup_s, repetitions=reps)


def method_words(cfg: Config, record: StackRun | None = None) -> str:
    """How the stacks were measured, in words, for the report (with the machine's load average)."""
    load = record.config.get("load_average") if record else None
    busy = f" Load average (1 min): {load[0]:g} at the start, {load[1]:g} at the end." if load else ""
    return (
        f"nginx 1.22 in front (one worker; TLS 1.2/1.3 with an ECDSA P-256 certificate made for the run; "
        f"HTTP/1.1 and HTTP/2 on one port; upstream keep-alive {UPSTREAM_KEEPALIVE} to the entry, which has "
        f"one thread), every process of the stack pinned to CPU {cfg.server_cpus}, the load generator to CPU "
        f"{cfg.client_cpus} with {cfg.connections} connections (wrk -t1; h2load -t1 -m{H2_STREAMS} for HTTP/2). "
        f"{cfg.repetitions} repetitions of {cfg.duration_s} s after {cfg.warmup_s} s of warm-up, a fresh stack per "
        "sample, stacks and modes interleaved; medians with min–max. Each stack answered one HTTPS GET correctly "
        "(a 302 to the template, or the PNG) before each sample. CPU µs/req: utime + stime of every process of "
        "the stack (nginx, the entry, their children) ÷ requests answered. wrk and h2load both resume the TLS "
        "session when they reconnect; the handshake mode turns resumption off in nginx (no session cache, no "
        "tickets), so that each connection pays a full handshake." + busy
    )
