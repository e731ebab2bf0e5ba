"""A booted Debian 12 (scripts/boot: systemd as PID 1, this machine's network) for the tests
that install renard as a self-hoster does, and visitors over HTTPS to the site it serves on
loopback, with a self-signed certificate for the name standing in for certbot's."""

import collections
import contextlib
import http.client
import re
import shutil
import socket
import ssl
import subprocess
import threading
import time

import pytest

from conftest import REPO, run

NAME = "avatar.example.org"
# The machine's packages: systemd to boot, nginx in front, curl for the guides' checks.
PACKAGES = ["systemd", "systemd-sysv", "dbus", "nginx-light", "ca-certificates", "curl"]
IMAGE = re.compile(rf"https://{re.escape(NAME)}/Renard-([1-9]|1[0-9]|2[01])\.png")  # one of 21


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Machine:
    def __init__(self, name: str):
        self.name = name

    def sh(self, script: str, check: bool = True, **variables) -> subprocess.CompletedProcess:
        """script in the machine as root, with variables set; fails the test with its output."""
        assignments = "".join(f"{k}='{v}'; " for k, v in variables.items())
        result = run(REPO / "scripts" / "boot", "run", self.name, "sh", "-ec", assignments + script, check=False)
        if check and result.returncode != 0:
            pytest.fail(
                f"in the machine: {script}\n({result.returncode})\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
            )
        return result

    def guide(self, lines: list[str], **variables) -> None:
        for line in lines:
            self.sh(line.replace("sudo ", ""), **variables)


class ToLoopback(http.client.HTTPSConnection):
    """HTTPS to the name (SNI, the certificate's check, Host) at 127.0.0.1: DNS for the test."""

    def connect(self):
        raw = socket.create_connection(("127.0.0.1", self.port), self.timeout)
        self.sock = self._context.wrap_socket(raw, server_hostname=self.host)


class Visitors:
    """Threads asking GET path over HTTPS through nginx on new connections, bounded in count and
    time, counting the answers that are not a 302 to an image of the site; `caching` counts the
    good answers by their Cache-Control (renard sends one, PHP's script none)."""

    def __init__(
        self, port: int, cafile, clients: int = 3, max_requests: int = 20_000, max_seconds: float = 300, path="/"
    ):
        self.port, self.path, self.stop = port, path, threading.Event()
        self.context = ssl.create_default_context(cafile=str(cafile))
        self.answers, self.failures = 0, []
        self.caching: collections.Counter[str] = collections.Counter()
        self.deadline = time.monotonic() + max_seconds
        self.max_requests = max_requests
        self.threads = [threading.Thread(target=self.visit) for _ in range(clients)]

    def visit(self):
        for _ in range(self.max_requests):
            if self.stop.is_set() or time.monotonic() > self.deadline:
                return
            try:
                connection = ToLoopback(NAME, self.port, context=self.context, timeout=30)
                connection.request("GET", self.path, headers={"Host": NAME})
                response = connection.getresponse()
                response.read()
                connection.close()
                location = response.getheader("Location", "")
                if response.status != 302 or not IMAGE.fullmatch(location):
                    self.failures.append(f"{response.status} {location}")
                else:
                    self.answers += 1
                    self.caching[response.getheader("Cache-Control", "none")] += 1
            except OSError as error:
                self.failures.append(repr(error))

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=60)

    def answered(self, more: int) -> None:
        """Waits until `more` answers beyond those so far (or the deadline)."""
        goal = self.answers + more
        while self.answers < goal and time.monotonic() < self.deadline:
            time.sleep(0.2)


def served_throughout(port: int, cafile, action) -> None:
    """Runs action (an upgrade) while visitors load the site, with 50 answers before and 50
    after it, and asserts that no visitor met a failure."""
    with Visitors(port, cafile) as visitors:
        visitors.answered(50)
        action()
        visitors.answered(50)
    assert visitors.failures == [], f"{len(visitors.failures)} failed of {visitors.answers}: {visitors.failures[:5]}"
    assert visitors.answers >= 100


def certificate(folder):
    """A self-signed certificate for NAME (certbot's stand-in), in certbot's two files."""
    run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-subj", f"/CN={NAME}", "-addext", f"subjectAltName=DNS:{NAME}", "-days", "2",
        "-keyout", folder / "privkey.pem", "-out", folder / "fullchain.pem")  # fmt: skip
    return folder / "fullchain.pem"


def wait_for_port(port, seconds=30):
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def https(port, cafile, path):
    context = ssl.create_default_context(cafile=str(cafile))
    connection = ToLoopback(NAME, port, context=context, timeout=30)
    connection.request("GET", path, headers={"Host": NAME})
    response = connection.getresponse()
    response.read()
    return response.status, response.getheader("Location", "")


@contextlib.contextmanager
def booted(name: str, packages: tuple[str, ...] = ()):
    """A Machine named name, booted from the cached root file system (PACKAGES and packages),
    powered off after."""
    if shutil.which("systemd-nspawn") is None:
        pytest.skip("no systemd-nspawn here (scripts/apt.txt: systemd-container)")
    rootfs = re.sub(r"[^a-z0-9-]", "-", "-".join(["renard-apt", *packages]))  # scripts/rootfs's names
    tarball = run(REPO / "scripts" / "rootfs", rootfs, *PACKAGES, *packages, timeout=900).stdout.strip()
    started = run(REPO / "scripts" / "boot", "start", name, tarball, timeout=300, check=False)
    if started.returncode != 0:  # scripts/boot itself waits for systemd's bus (120 s at most)
        run(REPO / "scripts" / "boot", "stop", name, check=False)
        pytest.fail(f"the machine did not boot: {started.stderr}")
    try:
        yield Machine(name)
    finally:
        run(REPO / "scripts" / "boot", "stop", name, check=False)
