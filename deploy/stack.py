"""The deployment on loopback: nginx with deploy/nginx-site.conf in front of renard instances,
over HTTPS with a self-signed certificate made here (openssl), on 127.0.0.1 and ::1.

Used by `make demo` and by the deploy tests. The site is adapted only where the comments at
the top of nginx-site.conf tell a self-hoster to adapt it (the upstream addresses, the
certificate lines, `root`) and where a test must (the ports of `listen`, loopback only);
`extra` adds locations (the demo's page).

    with Stack(Path("servers/rust/bin/renard"), workdir, instances=3) as stack:
        stack.url("/?seed=alice")      # https://127.0.0.1:PORT/?seed=alice, through nginx
        stack.stop_instance(1); stack.start_instance(1)
"""

from __future__ import annotations

import grp
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SITE = HERE / "nginx-site.conf"
sys.path.insert(0, str(HERE / "demo"))
from foxes import write_foxes  # noqa: E402  (deploy/demo is a folder of scripts, not a package)

START_TIMEOUT_S = 10.0
SHIPPED_UPSTREAM = "    server unix:/run/renard/renard.sock max_fails=1 fail_timeout=2s;\n"
SHIPPED_NAME = "avatar.example.org"
NGINX_USER = "www-data"  # as Debian's nginx.conf runs its workers


def free_port() -> int:
    """A TCP port free on both 127.0.0.1 and ::1 (bound dual-stack, then released)."""
    with socket.socket(socket.AF_INET6) as s:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        s.bind(("::", 0))
        return s.getsockname()[1]


def wait_for(address: tuple[str, int] | str, timeout_s: float = START_TIMEOUT_S) -> None:
    """Waits until something accepts connections at (host, port) or at a Unix socket path."""
    family = socket.AF_UNIX if isinstance(address, str) else socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with socket.socket(family) as s:
            s.settimeout(0.5)
            try:
                s.connect(address)
                return
            except OSError:
                time.sleep(0.05)
    raise TimeoutError(f"nothing accepts connections at {address} after {timeout_s} s")


def wait_for_port(port: int, timeout_s: float = START_TIMEOUT_S) -> None:
    wait_for(("127.0.0.1", port), timeout_s)


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A P-256 certificate for localhost, avatar.test, 127.0.0.1 and ::1, valid two days, and
    its key: (certificate, key), as files in folder."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
        + ["-days", "2", "-subj", "/CN=localhost", "-keyout", str(key), "-out", str(cert)]
        + ["-addext", "subjectAltName=DNS:localhost,DNS:avatar.test,IP:127.0.0.1,IP:::1"],
        check=True,
        capture_output=True,
    )
    return cert, key


def substitute(text: str, old: str, new: str, what: str) -> str:
    """text with the one line-start occurrence of old replaced; fails naming what changed."""
    text, n = re.subn("^" + re.escape(old), lambda _: new, text, flags=re.M)
    assert n == 1, f"nginx-site.conf: the {what} changed (looked for {old.strip()!r})"
    return text


def adapt_site(
    site: str,
    *,
    https_port: int,
    http_port: int,
    root: Path,
    upstreams: list[str],
    cert: Path,
    key: Path,
    extra: str = "",
) -> str:
    """nginx-site.conf with a self-hoster's values: the upstream servers (`127.0.0.1:PORT` or
    `unix:PATH`), the certificate, images (and certbot's webroot) from root; its listens on
    loopback ports (IPv4 and IPv6 alike); every other line as shipped."""
    servers = "".join(f"    server {u} max_fails=1 fail_timeout=2s;\n" for u in upstreams)
    site = substitute(site, SHIPPED_UPSTREAM, servers, "upstream line")
    site = substitute(site, "    listen 80;", f"    listen 127.0.0.1:{http_port};", "IPv4 listen on 80")
    site = substitute(site, "    listen [::]:80;", f"    listen [::1]:{http_port};", "IPv6 listen on 80")
    site = substitute(site, "    listen 443 ssl http2;", f"    listen 127.0.0.1:{https_port} ssl http2;", "443")
    site = substitute(site, "    listen [::]:443 ssl http2;", f"    listen [::1]:{https_port} ssl http2;", "[::]:443")
    live = f"/etc/letsencrypt/live/{SHIPPED_NAME}"
    site = substitute(site, f"    ssl_certificate {live}/fullchain.pem;", f"    ssl_certificate {cert};", "certificate")
    site = substitute(site, f"    ssl_certificate_key {live}/privkey.pem;", f"    ssl_certificate_key {key};", "key")
    site = substitute(site, "    root /srv/avatar;", f"    root {root};", "root line")
    site = substitute(site, "        root /var/www/html;", f"        root {root};", "certbot's webroot")
    if extra:
        site = substitute(site, "    location ~ ^/Renard-", extra + "\n    location ~ ^/Renard-", "images location")
    return site


def nginx_conf(workdir: Path, site: Path) -> str:
    return f"""daemon off;
user {NGINX_USER};
pid {workdir}/nginx.pid;
error_log {workdir}/nginx-error.log;
worker_processes 1;
events {{}}
http {{
    access_log off;
    types {{ image/svg+xml svg; image/png png; text/html html; }}
    client_body_temp_path {workdir};
    proxy_temp_path {workdir};
    fastcgi_temp_path {workdir};
    uwsgi_temp_path {workdir};
    scgi_temp_path {workdir};
    include {site};
}}
"""


def held_unix_socket(path: Path) -> socket.socket:
    """A listening Unix socket as renard.socket makes it (mode 0660, group www-data, backlog
    4096), held by the caller as systemd holds it: across every restart of renard."""
    held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    held.bind(str(path))
    os.chown(path, 0, grp.getgrnam(NGINX_USER).gr_gid)
    os.chmod(path, 0o660)
    held.listen(4096)
    return held


def held_tcp_socket(address: str) -> socket.socket:
    """A listening TCP socket on HOST:PORT as renard.socket makes it with ListenStream=HOST:PORT."""
    host, port = address.rsplit(":", 1)
    held = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    held.bind((host, int(port)))
    held.listen(4096)
    return held


# Puts the held socket at fd 3 with LISTEN_PID = its own pid, then execs the rest of argv.
AT_FD_3 = (
    "import os, sys; os.dup2(int(sys.argv[1]), 3); "
    "os.sched_setscheduler(0, int(sys.argv[2]), os.sched_param(0)); "
    "os.environ['LISTEN_PID'] = str(os.getpid()); os.execvp(sys.argv[3], sys.argv[3:])"
)
POLICIES = {"other": os.SCHED_OTHER, "batch": os.SCHED_BATCH, "idle": os.SCHED_IDLE}


def unit_policy(unit: Path = HERE / "renard.service") -> int:
    """The scheduling policy the unit's CPUSchedulingPolicy= gives renard (os.SCHED_*;
    SCHED_OTHER when the unit sets none), as systemd applies it before exec."""
    match = re.search(r"^CPUSchedulingPolicy=(\w+)$", unit.read_text(), re.M)
    return POLICIES[match[1]] if match else os.SCHED_OTHER


def activated(argv: list[str], held: socket.socket, notify: Path, **popen: object) -> subprocess.Popen:
    """argv started as systemd starts a socket-activated Type=notify service: through
    systemd-socket-activate, which takes the held socket (LISTEN_FDS=1, fd 3), passes it on to
    argv as fd 3 with LISTEN_FDS and LISTEN_PID, and execs argv at the first connection;
    NOTIFY_SOCKET names the datagram socket at `notify` for sd_notify; the scheduling policy is
    renard.service's CPUSchedulingPolicy=. Same pid throughout."""
    env = {"PATH": os.environ["PATH"], "LISTEN_FDS": "1"}
    fd = held.fileno()
    command = [sys.executable, "-c", AT_FD_3, str(fd), str(unit_policy())]
    command += ["systemd-socket-activate", f"--setenv=NOTIFY_SOCKET={notify}"]
    return subprocess.Popen([*command, *argv], pass_fds=(fd,), env=env, **popen)


class Notifications:
    """A datagram socket at `path` receiving sd_notify messages (READY=1, RELOADING=1, …)."""

    def __init__(self, path: Path):
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))

    def expect(self, state: str, timeout_s: float = START_TIMEOUT_S) -> list[str]:
        """Waits for a message holding the line `state` (e.g. READY=1); returns every line
        received until then, or fails naming what came instead."""
        seen: list[str] = []
        deadline = time.monotonic() + timeout_s
        while (left := deadline - time.monotonic()) > 0:
            self.sock.settimeout(left)
            try:
                lines = self.sock.recv(4096).decode().splitlines()
            except TimeoutError:
                break
            seen += lines
            if state in lines:
                return seen
        raise AssertionError(f"no {state} on NOTIFY_SOCKET within {timeout_s} s; received {seen}")

    def close(self) -> None:
        self.sock.close()


def tls_context(cert: Path) -> ssl.SSLContext:
    """A client context that trusts only the test's certificate."""
    return ssl.create_default_context(cafile=str(cert))


class Stack:
    """nginx on free loopback ports (HTTPS on `port`, the redirect to it on `http_port`) in
    front of `instances` renards, each on a TCP loopback port (`upstream="tcp"`), a Unix
    socket of its own (`"unix"`: --listen unix:…, group www-data, mode 660 as renard.socket
    makes it), or a Unix socket held here across its restarts and passed by
    systemd-socket-activate (`"activated"`, as renard.socket and renard.service run it);
    images drawn into a folder of /tmp (with `files`, name → text, served beside them);
    each renard's stderr in workdir/renard-I.log. A context manager: everything it starts
    is stopped on exit."""

    def __init__(
        self,
        renard: Path,
        workdir: Path,
        *,
        instances: int = 1,
        count: int = 21,
        extra: str = "",
        files: dict[str, str] | None = None,
        renard_args: tuple[str, ...] = (),
        upstream: str = "tcp",
    ):
        assert upstream in ("tcp", "unix", "activated"), upstream
        self.renard, self.workdir, self.count, self.files = renard, workdir, count, files or {}
        self.extra, self.renard_args, self.upstream = extra, renard_args, upstream
        self.port, self.http_port = free_port(), free_port()
        self.instances: list[subprocess.Popen | None] = [None] * instances
        self.nginx: subprocess.Popen | None = None

    def url(self, path: str) -> str:
        return f"https://127.0.0.1:{self.port}{path}"

    def location(self) -> str:
        return f"https://127.0.0.1:{self.port}/Renard-{{n}}.svg"

    def tls(self) -> ssl.SSLContext:
        return tls_context(self.cert)

    def listen_address(self, i: int) -> str:
        """Instance i's address as nginx names it (and --listen takes it)."""
        if self.upstream == "tcp":
            return f"127.0.0.1:{self.tcp_ports[i]}"
        return f"unix:{self.sockets}/renard-{i}.sock"

    def start_instance(self, i: int) -> None:
        argv = [str(self.renard), "--count", str(self.count), "--location", self.location()]
        argv += ["--threads", "1", *self.renard_args]
        log = open(self.workdir / f"renard-{i}.log", "a")  # the child keeps its own copy
        with log:
            if self.upstream == "activated":
                self.instances[i] = activated(
                    argv, self.held[i], self.notify[i].path, stdin=subprocess.DEVNULL, stdout=log, stderr=log
                )
                with socket.socket(socket.AF_UNIX) as first:  # systemd-socket-activate waits for one
                    first.connect(str(self.sockets / f"renard-{i}.sock"))
                    self.notify[i].expect("READY=1")
                return
            listen = ["--listen", self.listen_address(i)]
            if self.upstream == "unix":
                listen += ["--socket-owner", f"root:{NGINX_USER}"]  # mode 660, as renard.socket
            self.instances[i] = subprocess.Popen(argv + listen, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        if self.upstream == "unix":
            wait_for(str(self.sockets / f"renard-{i}.sock"))
        else:
            wait_for_port(self.tcp_ports[i])

    def stop_instance(self, i: int, sig: int = signal.SIGTERM) -> int:
        """Signals instance i and waits for it; returns its exit status."""
        proc = self.instances[i]
        assert proc is not None, f"instance {i} is not running"
        proc.send_signal(sig)
        status = proc.wait(timeout=10)
        self.instances[i] = None
        return status

    def __enter__(self) -> Stack:
        # nginx's workers run as www-data: the images and the sockets go where they can reach
        # them (folders of /tmp, not under a private workdir), and are removed on exit.
        self.images = Path(tempfile.mkdtemp(prefix="renard-images-"))
        self.sockets = Path(tempfile.mkdtemp(prefix="renard-sockets-"))
        for folder in (self.images, self.sockets):
            os.chmod(folder, 0o755)
        self.tcp_ports = [free_port() for _ in self.instances]
        write_foxes(self.images, self.count)
        for name, text in self.files.items():
            (self.images / name).write_text(text)
        self.held, self.notify = [], []
        if self.upstream == "activated":
            self.held = [held_unix_socket(self.sockets / f"renard-{i}.sock") for i in range(len(self.instances))]
            self.notify = [Notifications(self.workdir / f"notify-{i}") for i in range(len(self.instances))]
        self.cert, self.key = self_signed(self.workdir)
        site = self.workdir / "site.conf"
        site.write_text(
            adapt_site(
                SITE.read_text(),
                https_port=self.port,
                http_port=self.http_port,
                root=self.images,
                upstreams=[self.listen_address(i) for i in range(len(self.instances))],
                cert=self.cert,
                key=self.key,
                extra=self.extra,
            )
        )
        conf = self.workdir / "nginx.conf"
        conf.write_text(nginx_conf(self.workdir, site))
        try:
            for i in range(len(self.instances)):
                self.start_instance(i)
            self.nginx = subprocess.Popen(
                ["nginx", "-p", str(self.workdir), "-c", str(conf)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            wait_for_port(self.port)
            wait_for(("::1", self.port))
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc) -> None:
        procs = [p for p in [self.nginx, *self.instances] if p is not None]
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM if p is not self.nginx else signal.SIGQUIT)
        for p in procs:
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.nginx, self.instances = None, [None] * len(self.instances)
        for held in [*self.held, *self.notify]:
            held.close()
        for folder in (self.images, self.sockets):
            shutil.rmtree(folder, ignore_errors=True)
