"""The deployment on loopback: nginx with deploy/nginx-site.conf in front of renard instances.

Used by `make demo` and by the deploy tests. The site is adapted only where the comments at
the top of nginx-site.conf tell a self-hoster to adapt it: the upstream addresses, the
site's `listen`, and `root`; `extra` adds locations (the demo's page).

    with Stack(Path("servers/rust/bin/renard"), workdir, instances=3) as stack:
        stack.url("/?seed=alice")      # http://127.0.0.1:PORT/?seed=alice, through nginx
        stack.stop_instance(1); stack.start_instance(1)
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, timeout_s: float = START_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout_s} s")


def adapt_site(site: str, *, listen: int, root: Path, upstreams: list[int], extra: str = "") -> str:
    """nginx-site.conf with a self-hoster's values: the site on 127.0.0.1:listen, images from
    root, renard at the upstream ports; every other line as shipped."""
    servers = "".join(f"    server 127.0.0.1:{p} max_fails=1 fail_timeout=2s;\n" for p in upstreams)
    site, n = re.subn(r"^    server 127\.0\.0\.1:8080[^\n]*\n", servers, site, flags=re.M)
    assert n == 1, "nginx-site.conf: the upstream line changed"
    site, n = re.subn(r"^    listen 80;", f"    listen 127.0.0.1:{listen};", site, flags=re.M)
    assert n == 1, "nginx-site.conf: the listen line changed"
    site, n = re.subn(r"^    root /srv/avatar;", f"    root {root};", site, flags=re.M)
    assert n == 1, "nginx-site.conf: the root line changed"
    if extra:
        site, n = re.subn(r"^    location / \{", extra + "\n    location / {", site, flags=re.M)
        assert n == 1, "nginx-site.conf: the catch-all location changed"
    return site


def nginx_conf(workdir: Path, site: Path) -> str:
    return f"""daemon off;
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


class Stack:
    """nginx on a free loopback port in front of `instances` renards, images drawn into
    a folder of /tmp (with `files`, name → text, served beside them). A context manager:
    everything it starts is stopped on exit."""

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
    ):
        self.renard, self.workdir, self.count, self.files = renard, workdir, count, files or {}
        self.extra, self.renard_args = extra, renard_args
        self.port = free_port()
        self.upstreams = [free_port() for _ in range(instances)]
        self.instances: list[subprocess.Popen | None] = [None] * instances
        self.nginx: subprocess.Popen | None = None

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def location(self) -> str:
        return f"http://127.0.0.1:{self.port}/Renard-{{n}}.svg"

    def start_instance(self, i: int) -> None:
        argv = [
            str(self.renard),
            "--listen",
            f"127.0.0.1:{self.upstreams[i]}",
            "--count",
            str(self.count),
            "--location",
            self.location(),
            "--threads",
            "1",
            *self.renard_args,
        ]
        self.instances[i] = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        wait_for_port(self.upstreams[i])

    def stop_instance(self, i: int, sig: int = signal.SIGTERM) -> int:
        """Signals instance i and waits for it; returns its exit status."""
        proc = self.instances[i]
        assert proc is not None, f"instance {i} is not running"
        proc.send_signal(sig)
        status = proc.wait(timeout=10)
        self.instances[i] = None
        return status

    def __enter__(self) -> Stack:
        # nginx's workers run as nobody: the images go where nobody can reach them (a folder
        # of /tmp, not under a private workdir), and are removed on exit.
        self.images = Path(tempfile.mkdtemp(prefix="renard-images-"))
        os.chmod(self.images, 0o755)
        images = self.images
        write_foxes(images, self.count)
        for name, text in self.files.items():
            (images / name).write_text(text)
        site = self.workdir / "site.conf"
        site.write_text(
            adapt_site(SITE.read_text(), listen=self.port, root=images, upstreams=self.upstreams, extra=self.extra)
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
        shutil.rmtree(self.images, ignore_errors=True)
