"""One way to start, wait for, measure and stop a server process (Linux; stdlib only).

Used by the runner's pytest suite, by the arena (`arena/entries/process.py` renders an entry's
command line and hands it here) and by the flagship's footprint scripts.

- `ServerProcess(argv, ...).start()` execs the server in its own session (so that its whole
  process group can be cleaned up), reads its stderr on a thread (it never blocks on a full
  pipe) and keeps the last lines.
- `wait_ready()` returns once the server is ready: the SPEC §1 line `listening on
  http://HOST:PORT` on stderr (ready="listening"), or a TCP connect (ready="port").
- `stop()` sends SIGTERM (SPEC §7.6) to the process, or to its group, waits, then SIGKILLs.
- `fd_count()`, `rss_kib()`, `peak_rss_kib()`, `pss_kib()`, `cpu_seconds()` read /proc,
  summed over the process tree (a runtime without threads may use worker processes, §1);
  `peak_fd_count()` samples the descriptors every millisecond through a block.
"""

from __future__ import annotations

import collections
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

LISTENING_RE = re.compile(r"listening on http://(\[[0-9A-Fa-f:.]+\]|[0-9.]+):(\d+)")
STOP_GRACE_S = 5.0  # SIGTERM, then SIGKILL after this many seconds
READY_TIMEOUT_S = 10.0  # default bound on a start
CLK_TCK = os.sysconf("SC_CLK_TCK")  # ticks per second of /proc/PID/stat times


class StartError(Exception):
    """The server exited, or did not become ready in time. str() ends with its stderr's tail."""


def flag_value(argv: list[str], flag: str) -> str | None:
    """The value of `--flag VALUE` or `--flag=VALUE` in argv (the last one wins), or None."""
    value = None
    for index, word in enumerate(argv):
        if word == flag and index + 1 < len(argv):
            value = argv[index + 1]
        elif word.startswith(flag + "="):
            value = word[len(flag) + 1 :]
    return value


def argv_with(argv: list[str], flags: dict[str, str]) -> list[str]:
    """argv without any `--flag V` / `--flag=V` for the given flags, then `--flag V` appended."""
    out, skip = [], False
    for word in argv:
        if skip:
            skip = False
        elif word in flags:
            skip = True
        elif not any(word.startswith(flag + "=") for flag in flags):
            out.append(word)
    for flag, value in flags.items():
        out += [flag, value]
    return out


def free_port(host: str = "127.0.0.1") -> int:
    """A port that was free a moment ago (the kernel's choice for port 0)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]


class ServerProcess:
    """A server started from argv. After wait_ready(), `host` and `port` are where it listens."""

    def __init__(
        self,
        argv: list[str],
        *,
        cwd: str | Path | None = None,
        env: dict | None = None,
        ready: str = "listening",
        host: str = "127.0.0.1",
        port: int = 0,
        inherit_stdout: bool = False,
        echo=None,
        tail_lines: int = 200,
        name: str | None = None,
    ):
        if ready not in ("listening", "port"):
            raise ValueError(f"ready must be 'listening' or 'port' (got {ready!r})")
        self.argv, self.cwd, self.env, self.ready = list(argv), cwd, env, ready
        self.name = name or argv[0]  # for messages
        self.host, self.port = host, port
        self.inherit_stdout, self.echo = inherit_stdout, echo
        self.process: subprocess.Popen | None = None
        self.started_at = 0.0  # time.perf_counter() just before exec
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=tail_lines)
        self.ready_line: str | None = None  # the `listening on` line, once seen
        self.ready_line_number = 0  # its 1-based position on stderr (SPEC §1: 1)
        self._ready_event = threading.Event()

    # --- lifecycle ---------------------------------------------------------------------

    def start(self) -> ServerProcess:
        """Execs the server without waiting for it; raises StartError when it cannot be run."""
        self.ready_line, self.ready_line_number = None, 0
        self._ready_event = threading.Event()
        self.stderr_tail.clear()
        self.started_at = time.perf_counter()
        try:
            self.process = subprocess.Popen(
                self.argv,
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=None if self.inherit_stdout else subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except OSError as error:
            raise StartError(f"{self.name}: cannot exec {self.argv[0]}: {error}") from None
        threading.Thread(target=self._read_stderr, args=(self.process, self._ready_event), daemon=True).start()
        return self

    def _read_stderr(self, process: subprocess.Popen, ready: threading.Event) -> None:
        for number, raw in enumerate(process.stderr, start=1):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.stderr_tail.append(line)
            if self.ready_line is None and process is self.process:
                match = LISTENING_RE.search(line)
                if match:
                    self.ready_line, self.ready_line_number = line, number
                    self.host, self.port = match.group(1).strip("[]"), int(match.group(2))
                    ready.set()
            if self.echo:
                self.echo(line)
        ready.set()  # EOF: whoever waits sees the exit

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> ServerProcess:
        """Returns once the server accepts connections; otherwise stops it and raises StartError."""
        if self.ready == "listening":
            self._ready_event.wait(timeout_s)
            if self.ready_line is None:
                self._fail(
                    "exited before printing `listening on http://HOST:PORT`"
                    if self.process.poll() is not None
                    else f"printed no `listening on http://HOST:PORT` line within {timeout_s:g} s"
                )
            return self
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                self._fail(f"exited with status {self.process.returncode}")
            try:
                socket.create_connection((self.host, self.port), timeout=0.5).close()
                return self
            except OSError:
                time.sleep(0.005)
        self._fail(f"did not accept a connection on port {self.port} within {timeout_s:g} s")

    def _fail(self, what: str):
        self.stop()
        raise StartError(f"{self.name} {what}\n{self.output_tail()}")

    def output_tail(self, lines: int = 15) -> str:
        return "\n".join(list(self.stderr_tail)[-lines:])

    @property
    def pid(self) -> int:
        return self.process.pid

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def signal(self, signum: int) -> None:
        """Sends signum to the started process only (SPEC §7.6: it reaches every worker)."""
        if self.running():
            self.process.send_signal(signum)

    def wait(self, timeout_s: float) -> int | None:
        """The exit status, or None if still running after timeout_s."""
        try:
            return self.process.wait(max(0.0, timeout_s))
        except subprocess.TimeoutExpired:
            return None

    def stop(self, grace_s: float = STOP_GRACE_S, group: bool = False) -> int | None:
        """SIGTERM to the process (or its whole group), SIGKILL after grace_s; then SIGKILL to
        whatever is left in its group. Returns the exit status, None if it had to be killed."""
        if self.process is None:
            return None
        status = self.process.poll()
        if status is None:
            if group:
                _signal_group(self.process.pid, signal.SIGTERM)
            else:
                self.process.send_signal(signal.SIGTERM)
            status = self.wait(grace_s)
            if status is None:
                _signal_group(self.process.pid, signal.SIGKILL)
                self.process.kill()
                self.process.wait(STOP_GRACE_S)
        _signal_group(self.process.pid, signal.SIGKILL)  # stragglers left in the group
        return status

    # --- measuring (Linux /proc, summed over the tree) -----------------------------------

    def tree_pids(self) -> list[int]:
        return process_tree(self.process.pid) if self.running() else []

    def fd_count(self) -> int:
        return proc_fd_count(self.tree_pids())

    def rss_kib(self) -> int:
        """Resident set now (VmRSS), KiB."""
        return sum(proc_kib(pid, "status", "VmRSS") for pid in self.tree_pids())

    def peak_rss_kib(self) -> int:
        """Peak resident set since each process started (VmHWM), KiB."""
        return sum(proc_kib(pid, "status", "VmHWM") for pid in self.tree_pids())

    def pss_kib(self) -> int:
        """Proportional set (smaps_rollup Pss): shared pages divided among their users, KiB."""
        return sum(proc_kib(pid, "smaps_rollup", "Pss") for pid in self.tree_pids())

    def cpu_seconds(self) -> float:
        """utime + stime (and those of reaped children) over the tree, seconds."""
        return sum(proc_cpu_ticks(pid) for pid in self.tree_pids()) / CLK_TCK

    def settled_fd_count(self, timeout_s: float, readings: int = 3, interval_s: float = 0.2) -> int:
        """The descriptor count once `readings` readings interval_s apart agree (or at the end)."""
        deadline = time.monotonic() + timeout_s
        seen = [self.fd_count()]
        while time.monotonic() < deadline and not (len(seen) >= readings and len(set(seen[-readings:])) == 1):
            time.sleep(interval_s)
            seen.append(self.fd_count())
        return seen[-1]

    def wait_rss_kib(self, at_most: int, timeout_s: float) -> int:
        """Polls until the resident set is at most `at_most` KiB or timeout_s passes; the last
        reading. A garbage-collected runtime hands freed memory back when its collector runs,
        not when the load ends: a leak stays over the bound, garbage comes back under it."""
        return at_most_within(self.rss_kib, at_most, timeout_s, interval_s=0.2)

    @contextlib.contextmanager
    def peak_fd_count(self):
        """Samples the descriptor count every millisecond while the block runs (renard_conformance.
        fdpeak, a process of its own, over the tree as it stands at the start); yields a list
        whose one element is, after the block, the highest count read."""
        peak = [0]
        argv = [sys.executable, "-m", "renard_conformance.fdpeak", *map(str, self.tree_pids())]
        with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True) as sampler:
            try:
                if sampler.stdout.readline().strip() != "sampling":
                    raise StartError("the descriptor sampler (renard_conformance.fdpeak) did not start")
                yield peak
            finally:
                out, _ = sampler.communicate(timeout=10)  # closes its stdin: it stops and says
            if not out.strip().isdigit():
                raise RuntimeError(f"the descriptor sampler ended without a count (exit {sampler.returncode})")
            peak[0] = int(out)

    def wait_fd_count(self, at_most: int, timeout_s: float) -> int:
        """Polls until the descriptor count is at most `at_most` or timeout_s passes; the last count."""
        return at_most_within(self.fd_count, at_most, timeout_s, interval_s=0.1)


def at_most_within(read, at_most: int, timeout_s: float, interval_s: float) -> int:
    """Calls read() every interval_s until it returns at most `at_most` or timeout_s passes;
    its last value."""
    deadline = time.monotonic() + timeout_s
    value = read()
    while value > at_most and time.monotonic() < deadline:
        time.sleep(interval_s)
        value = read()
    return value


def process_tree(pid: int) -> list[int]:
    """pid and its descendants (by parent pid in /proc/N/stat)."""
    parents: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    parents[int(name)] = int(f.read().rpartition(b")")[2].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    tree, frontier = [pid], [pid]
    while frontier:
        parent = frontier.pop()
        children = [child for child, ppid in parents.items() if ppid == parent and child not in tree]
        tree += children
        frontier += children
    return tree


def proc_fd_count(pids: list[int]) -> int:
    """Open descriptors of pids now, summed (a process gone counts 0)."""
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            total += len(os.listdir(f"/proc/{pid}/fd"))
    return total


def proc_kib(pid: int, file: str, key: str) -> int:
    """The `key:` line of /proc/PID/<file> in KiB (status, smaps_rollup); 0 when gone."""
    try:
        with open(f"/proc/{pid}/{file}") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def proc_cpu_ticks(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as f:
            stat = f.read()
    except OSError:
        return 0
    fields = stat[stat.rindex(")") + 2 :].split()  # fields[0] is field 3 (state)
    utime, stime, cutime, cstime = (int(x) for x in fields[11:15])
    return utime + stime + cutime + cstime


def _signal_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)
