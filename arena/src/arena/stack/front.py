"""A stack's processes, started for one sample of `arena stack` (stack.py): the files made for
the run (the certificate, the static PNG, nginx's TLS lines and nginx.conf from
nginx/front.conf.in), the running nginx and entry pinned to the server's CPUs, and the check
of one answer over HTTPS before any load."""

from __future__ import annotations

import http.client
import os
import re
import shutil
import socket
import ssl
import struct
import subprocess
import tempfile
import time
import zlib
from importlib import resources
from pathlib import Path

from renard_conformance.launcher import CLK_TCK, ServerProcess, proc_cpu_ticks, proc_kib, process_tree

from ..entries.process import Launch, Server, StartError, free_port, launch_ready, start
from .define import COUNT, DEFAULT_POLICY, LOCATION, POLICIES, UPSTREAM_KEEPALIVE, Stack, StackError, StackMode

PNG_BYTES = 4096  # the static baseline's file


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
    template = resources.files("arena.stack.nginx").joinpath("front.conf.in").read_text()
    values = {"tmp": str(tmp), "port": str(port), "tls": tls, "http": http, "answer": answer}
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], template)


# --- a running stack -------------------------------------------------------------------


class Running:
    """The processes of one started stack: the front nginx (if any) and the entry (if any),
    answering on port with stack's answer over HTTPS (cert). A Handle (entries/handle.py)."""

    def __init__(self, port: int, cpus: str, stack: Stack, cert: Path):
        self.port, self.cpus, self.stack, self.cert = port, cpus, stack, cert
        self.front: ServerProcess | None = None
        self.entry: Server | None = None
        self.tmp = Path(tempfile.mkdtemp(prefix="arena-stack-"))
        os.chmod(self.tmp, 0o755)  # nginx's workers (not root) read files and sockets here

    def tree_pids(self) -> list[int]:
        roots = [p for p in (self.front and self.front.process, self.entry and self.entry.proc) if p]
        return [pid for p in roots if p.poll() is None for pid in process_tree(p.pid)]

    def cpu_seconds(self) -> float:
        return sum(proc_cpu_ticks(pid) for pid in self.tree_pids()) / CLK_TCK

    def peak_rss_bytes(self) -> int:
        return sum(proc_kib(pid, "status", "VmHWM") for pid in self.tree_pids()) * 1024

    def answer_problem(self) -> str:
        return answer_problem(self.stack, self.port, self.cert)

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


def start_stack(
    stack: Stack, mode: StackMode, cpus: str, cert: Path, key: Path, policy: str = DEFAULT_POLICY
) -> Running:
    """Starts the stack pinned to cpus, ready to answer, a daemon behind nginx scheduled by
    policy (POLICIES); raises StartError (nothing left running)."""
    running = Running(free_port(), cpus, stack, cert)
    wrapper = POLICIES[policy]
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
            running.entry = start(stack.entry, Launch(threads=1, cpus=cpus, wrapper=wrapper, listen=f"unix:{sock}"))
            _wait_unix(running.entry, sock)
            os.chmod(sock, 0o666)  # as deploy/renard.socket gives nginx's group access
            upstream = f"unix:{sock}"
        elif stack.kind == "proxy":
            running.entry = launch_ready(stack.entry, Launch(port=free_port(), threads=1, cpus=cpus, wrapper=wrapper))
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
