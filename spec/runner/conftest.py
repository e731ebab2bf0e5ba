"""pytest wiring: --renard-cmd starts a server, --renard-addr points at a running one.

Without either (nor RENARD_CMD / RENARD_ADDR), the tests that need a server are skipped;
test_reference.py needs none.
"""

from __future__ import annotations

import os
import re
import selectors
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import conformance  # noqa: E402

STARTUP_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 5.0          # SPEC §7.6: exit within 5 seconds of SIGTERM
LISTENING_LINE = re.compile(r"listening on http://(\[[0-9A-Fa-f:.]+\]|[0-9.]+):(\d+)")
NO_SERVER = ("no server to test: pass --renard-cmd \"PATH --listen 127.0.0.1:0 ...\" or "
             "--renard-addr HOST:PORT (or set RENARD_CMD / RENARD_ADDR)")


def pytest_addoption(parser):
    group = parser.getgroup("renard")
    group.addoption("--renard-cmd", default=os.environ.get("RENARD_CMD") or None,
                    help="command that starts the server (its --listen should use port 0)")
    group.addoption("--renard-addr", default=os.environ.get("RENARD_ADDR") or None,
                    help="HOST:PORT of a running server (with its --count/--location defaults, "
                         "or pass --renard-count/--renard-location/--renard-*-timeout)")
    group.addoption("--renard-count", type=int, default=None)
    group.addoption("--renard-location", default=None)
    group.addoption("--renard-header-timeout", type=float, default=None)
    group.addoption("--renard-idle-timeout", type=float, default=None)
    group.addoption("--renard-allow-alt", action="store_true",
                    help="accept 'alt' verdicts (answers allowed for peers) as passes")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: waits for one of the server's timeouts")
    config.addinivalue_line("markers", "server: needs a running renard")


def flag_value(argv: list[str], flag: str) -> str | None:
    """The value of `--flag VALUE` or `--flag=VALUE` in argv (the last one wins), or None."""
    value = None
    for index, word in enumerate(argv):
        if word == flag and index + 1 < len(argv):
            value = argv[index + 1]
        elif word.startswith(flag + "="):
            value = word[len(flag) + 1:]
    return value


class ServerProcess:
    """A server started from --renard-cmd; `target` is updated in place on restart."""

    def __init__(self, command: str):
        self.argv = shlex.split(command)
        self.process: subprocess.Popen | None = None
        self.stderr_lines: list[str] = []
        self.target = conformance.Target(host="", port=0)
        for flag, attribute, parse in (("--count", "count", int),
                                       ("--location", "location", str),
                                       ("--header-timeout", "header_timeout", float),
                                       ("--idle-timeout", "idle_timeout", float)):
            value = flag_value(self.argv, flag)
            if value is not None:
                setattr(self.target, attribute, parse(value))

    def start(self) -> None:
        try:
            self.process = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        except OSError as error:
            raise RuntimeError(f"--renard-cmd: cannot start {self.argv[0]}: {error}") from None
        line = self._first_stderr_line()
        match = LISTENING_LINE.fullmatch(line.strip())
        if not match:
            self.stop()
            raise RuntimeError(f"{self.argv[0]}: expected 'listening on http://HOST:PORT' "
                               f"on stderr within {STARTUP_TIMEOUT_S:.0f} s, got {line!r}")
        self.target.host = match.group(1).strip("[]")
        self.target.port = int(match.group(2))
        threading.Thread(target=self._drain_stderr, args=(self.process,), daemon=True).start()

    def _first_stderr_line(self) -> str:
        selector = selectors.DefaultSelector()
        selector.register(self.process.stderr, selectors.EVENT_READ)
        deadline, data = time.monotonic() + STARTUP_TIMEOUT_S, b""
        try:
            while b"\n" not in data and time.monotonic() < deadline:
                if selector.select(deadline - time.monotonic()):
                    chunk = os.read(self.process.stderr.fileno(), 4096)
                    if not chunk:
                        break
                    data += chunk
        finally:
            selector.close()
        first, _, rest = data.partition(b"\n")
        if rest:
            self.stderr_lines.append(rest.decode("utf-8", "replace"))
        return first.decode("utf-8", "replace")

    def _drain_stderr(self, process: subprocess.Popen) -> None:
        for raw in process.stderr:
            self.stderr_lines.append(raw.decode("utf-8", "replace"))

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after STOP_TIMEOUT_S. Returns the exit status, or None if killed."""
        if self.process is None or self.process.poll() is not None:
            return None if self.process is None else self.process.returncode
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(STOP_TIMEOUT_S)
            return None


@pytest.fixture(scope="session")
def renard_server(request):
    """The ServerProcess started from --renard-cmd, or None."""
    command = request.config.getoption("--renard-cmd")
    if not command:
        yield None
        return
    server = ServerProcess(command)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def target(request, renard_server) -> conformance.Target:
    if renard_server is not None:
        return renard_server.target
    address = request.config.getoption("--renard-addr")
    if not address:
        pytest.skip(NO_SERVER)
    host, port = conformance._address(address)
    config = request.config
    return conformance.Target(
        host, port,
        count=config.getoption("--renard-count") or conformance.DEFAULT_COUNT,
        location=config.getoption("--renard-location") or conformance.DEFAULT_LOCATION,
        header_timeout=config.getoption("--renard-header-timeout") or 10.0,
        idle_timeout=config.getoption("--renard-idle-timeout") or 60.0)


@pytest.fixture(scope="session")
def allow_alt(request) -> bool:
    return bool(request.config.getoption("--renard-allow-alt"))
