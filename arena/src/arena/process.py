"""Starting and stopping one entry, waiting for it, and reading its process tree from /proc."""

from __future__ import annotations

import collections
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from .entries import Entry, render_config, render_run

CLK_TCK = os.sysconf("SC_CLK_TCK")  # ticks per second of /proc/PID/stat times
LISTENING_RE = re.compile(r"listening on http://(\[[0-9a-fA-F:.]+\]|[0-9.]+):(\d+)")
STOP_GRACE_S = 5.0  # the spec's shutdown bound (§7.6); after it, SIGKILL


class StartError(Exception):
    """The entry exited, or did not become ready in time. str() ends with its output's tail."""


def listen_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago (the kernel's choice for port 0)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


@dataclass
class Launch:
    """How to start an entry: the spec's flags, and optionally the CPUs to pin it to."""
    host: str = "127.0.0.1"
    port: int = 8080
    count: int = 21
    location: str = "https://avatar.example.org/Renard-{n}.png"
    threads: int = 1
    cpus: str | None = None   # taskset list, e.g. "0"; None: not pinned


@dataclass
class Server:
    entry: Entry
    launch: Launch
    proc: subprocess.Popen
    tmp: Path
    started_at: float                     # time.perf_counter() just before exec
    port: int
    stderr_tail: collections.deque = field(default_factory=lambda: collections.deque(maxlen=40))
    ready_line: str | None = None
    _ready_event: threading.Event = field(default_factory=threading.Event)

    # --- lifecycle -------------------------------------------------------------------

    def _drain(self, echo) -> None:
        """Reads the server's stderr to its end so that it never blocks on a full pipe."""
        for raw in self.proc.stderr:
            line = raw.decode(errors="replace").rstrip("\n")
            self.stderr_tail.append(line)
            if self.ready_line is None:
                m = LISTENING_RE.search(line)
                if m:
                    self.ready_line = line
                    self.port = int(m.group(2))
                    self._ready_event.set()
            if echo:
                echo(line)
        self._ready_event.set()  # EOF: whoever waits sees the exit

    def output_tail(self, lines: int = 15) -> str:
        tail = list(self.stderr_tail)
        error_log = self.tmp / "error.log"  # a peer's own log (nginx -e), if it writes one
        if error_log.is_file():
            tail += error_log.read_text(errors="replace").splitlines()
        return "\n".join(tail[-lines:])

    def wait_ready(self, timeout_s: float = 30.0) -> None:
        """Returns once the entry accepts connections; raises StartError otherwise.

        ready = "listening": the spec's `listening on` line on stderr; "port": a TCP connect."""
        deadline = time.monotonic() + timeout_s
        if self.entry.ready == "listening":
            self._ready_event.wait(timeout_s)
            if self.ready_line is None:
                self._fail("exited before printing `listening on`" if self.proc.poll() is not None
                           else f"printed no `listening on` line within {timeout_s:g} s")
            return
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._fail(f"exited with status {self.proc.returncode}")
            try:
                socket.create_connection((self.launch.host, self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.005)
        self._fail(f"did not accept a connection on port {self.port} within {timeout_s:g} s")

    def _fail(self, what: str):
        self.stop()
        raise StartError(f"{self.entry.name} {what}\n{self.output_tail()}")

    def stop(self) -> int | None:
        """SIGTERM to the entry's process group, SIGKILL after STOP_GRACE_S; removes its temp dir.
        Returns the exit status (None if it had to be killed)."""
        status = self.proc.poll()
        if status is None:
            _signal_group(self.proc.pid, signal.SIGTERM)
            try:
                status = self.proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                _signal_group(self.proc.pid, signal.SIGKILL)
                self.proc.wait(5)
                status = None
        _signal_group(self.proc.pid, signal.SIGKILL)  # stragglers left in the group
        shutil.rmtree(self.tmp, ignore_errors=True)
        return status

    # --- the process tree ------------------------------------------------------------

    def tree_pids(self) -> list[int]:
        try:
            root = psutil.Process(self.proc.pid)
            return [root.pid] + [c.pid for c in root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return []

    def cpu_seconds(self) -> float:
        """utime+stime (+ those of reaped children) of every process in the tree, seconds."""
        return sum(_proc_cpu_ticks(pid) for pid in self.tree_pids()) / CLK_TCK

    def peak_rss_bytes(self) -> int:
        """Sum of VmHWM over the tree: each process's peak resident set since it started."""
        return sum(_proc_kib(pid, "status", "VmHWM") for pid in self.tree_pids()) * 1024

    def pss_bytes(self) -> int:
        """Sum of Pss (smaps_rollup) over the tree: shared pages divided among their users."""
        return sum(_proc_kib(pid, "smaps_rollup", "Pss") for pid in self.tree_pids()) * 1024


def _signal_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _proc_cpu_ticks(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    fields = stat[stat.rindex(")") + 2:].split()  # fields[0] is field 3 (state)
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return utime + stime + cutime + cstime


def _proc_kib(pid: int, file: str, key: str) -> int:
    """The `key:` line of /proc/PID/<file> in KiB (status, smaps_rollup); 0 when gone."""
    try:
        for line in Path(f"/proc/{pid}/{file}").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def start(entry: Entry, launch: Launch, echo=None, inherit_stdout: bool = False) -> Server:
    """Execs the entry (in its own session, so that its group can be signalled) without waiting.

    echo: called with each stderr line as it arrives (for `arena run`)."""
    tmp = Path(tempfile.mkdtemp(prefix=f"arena-{entry.name}-"))
    values = {
        "listen": listen_address(launch.host, launch.port),
        "host": launch.host, "port": str(launch.port), "count": str(launch.count),
        "location": launch.location, "threads": str(launch.threads), "tmp": str(tmp),
        "config": "",
    }
    if entry.config:
        config = tmp / Path(entry.config).name.removesuffix(".in")
        values["config"] = str(config)
        config.write_text(render_config(entry, values))
    argv = render_run(entry, values)
    if launch.cpus is not None:
        argv = ["taskset", "-c", launch.cpus] + argv
    started_at = time.perf_counter()
    try:
        proc = subprocess.Popen(argv, cwd=entry.folder, stdin=subprocess.DEVNULL,
                                stdout=None if inherit_stdout else subprocess.DEVNULL,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        raise StartError(f"{entry.name}: cannot exec {argv[0]}: {e}") from None
    server = Server(entry, launch, proc, tmp, started_at, launch.port)
    threading.Thread(target=server._drain, args=(echo,), daemon=True).start()
    return server


def launch_ready(entry: Entry, launch: Launch, timeout_s: float = 30.0) -> Server:
    """start() then wait_ready(); on failure the server is stopped and StartError raised."""
    server = start(entry, launch)
    server.wait_ready(timeout_s)
    return server
